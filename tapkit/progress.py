"""Whether tapkit's progress bars are shown.

Bars help in a terminal or a live notebook and are noise on a page of the book: the script that
executes the book's notebooks (``scripts/run_notebook.py``) sets ``TQDM_DISABLE=1`` in the
kernel's environment. tqdm reads that variable only as a default, which an explicit
``disable=`` argument overrides, so every tapkit bar asks :func:`disabled` instead.
"""

from __future__ import annotations

import os

OFF = ("1", "true", "yes", "on")


def disabled(progress: bool = True) -> bool:
    """True when bars are off: ``progress`` is False, or ``TQDM_DISABLE`` is set to a true value."""
    return not progress or os.environ.get("TQDM_DISABLE", "").strip().lower() in OFF

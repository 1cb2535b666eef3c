"""How a table reaches the reader (issue 39): every ``DataFrame`` a chapter displays is shown
with its column names and index values as labels (:func:`.labels.label`: ``teacher_10`` ->
``10% teacher``, ``speed_ratio`` -> ``speed ÷ No XS``), a missing value as a dash, and its
text uncut. One formatter, installed in the notebook's kernel by
:func:`tapkit.book.chapter.open_chapter`, so that no chapter relabels a table by hand and none
shows ``NaN`` or an internal id. The tables written to disk keep their keys: a reader who
downloads one parses the ids the code uses."""

from __future__ import annotations

import html
import re
from typing import Any, Collection

import pandas as pd

from .labels import is_lam_column, label, lam_text

MISSING = "—"


def _shown(value: Any) -> Any:
    return label(value) if isinstance(value, str) else value


def _relabelled(index: pd.Index) -> pd.Index:
    names = [_shown(n) for n in index.names]
    if isinstance(index, pd.MultiIndex):
        return pd.MultiIndex.from_tuples([tuple(map(_shown, t)) for t in index], names=names)
    return pd.Index([_shown(v) for v in index], name=names[0])


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose column names and index values (and their names) read as labels;
    the values are left as they are."""
    out = frame.copy()
    out.columns = _relabelled(out.columns)
    out.index = _relabelled(out.index)
    return out


LONG_TEXT, TEXT_WIDTH = 60, "24em"
# ``DataFrame.attrs`` key of a table's footnotes: cells point to them as ``[1]``, ``[2]``, ...
# (:func:`footnote`) and the page prints them under the table (:func:`readable_html`), so that a
# long reason (why a cell was not run) takes no column of its own: a column of such reasons
# made the PNEU/KNEE tables beside the paper 1,166 px wide (782 px without it; their page's text
# column is 688 px at 1280, beside the contents) and their rows several lines tall
NOTES = "notes"


def footnote(table: pd.DataFrame, text: str) -> str:
    """The mark of ``text`` among ``table``'s footnotes, added once: ``[1]``, ``[2]``, ..."""
    notes = table.attrs.setdefault(NOTES, [])
    if text not in notes:
        notes.append(text)
    return f"[{notes.index(text) + 1}]"


def inline_html(text: object) -> str:
    """``text`` escaped for HTML, with Markdown's inline bold (``**...**``) and code spans
    (`` `...` ``) as ``<b>`` and ``<code>``: prose shown inside raw HTML (the first page's
    tables, an admonition), where Markdown is not read."""
    bold = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(str(text)))
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", bold)


def _notes_html(frame: pd.DataFrame) -> str:
    notes = frame.attrs.get(NOTES) or []
    return "".join(f'<p class="table-note">[{i}] {html.escape(n)}</p>'
                   for i, n in enumerate(notes, 1))


def readable_html(frame: pd.DataFrame) -> str:
    """``frame`` as the page shows it: :func:`readable`, missing values as :data:`MISSING`, long
    texts uncut (a long note is read whole) in a column at least :data:`TEXT_WIDTH`
    wide (else the browser squeezes it into a sliver one word wide), pandas' row and column
    limits kept, and its footnotes (:data:`NOTES`) under it."""
    shown = readable(frame)
    wide = {c: TEXT_WIDTH for c in shown.columns
            if not pd.api.types.is_numeric_dtype(shown[c])
            and shown[c].astype(str).str.len().max() > LONG_TEXT}
    with pd.option_context("display.max_colwidth", None):
        return shown.to_html(na_rep=MISSING, notebook=True, col_space=wide or None,
                             max_rows=pd.get_option("display.max_rows"),
                             max_cols=pd.get_option("display.max_columns")) + _notes_html(frame)


def styled(frame: pd.DataFrame, *, digits: int = 3, percent: Collection[str] = (),
           na_rep: str = MISSING):
    """``frame`` as a formatted table, for the tables a chapter shows with a number format
    (a pandas ``Styler`` bypasses :func:`install`'s formatter): :func:`readable`'s labels, text
    cells that are keys read as labels too (``"none"`` -> ``"No XS"``), true/false as yes/no, λ
    in scientific notation (:func:`.labels.lam_text`, every column :func:`.labels.is_lam_column`
    names), a column named ``Δ...`` signed, the ``percent`` columns as
    percentages, every other float to ``digits`` decimals, missing values as ``na_rep``, and
    the row numbers of a plain range index hidden; numbers never break inside a cell (``1e-4``
    stays on one line), a long text keeps a readable column (:data:`TEXT_WIDTH`), and a table
    wider than the page scrolls inside its box. A table with footnotes (:data:`NOTES`) is shown
    by :func:`readable_html` (display the frame itself), which prints them: a ``Styler`` would
    keep the marks and drop what they point to."""
    if frame.attrs.get(NOTES):
        raise ValueError("this table has footnotes, which styled() cannot print under it: "
                         "display the DataFrame itself (table_display.readable_html)")
    shown = readable(frame)
    for original, col in zip(frame.columns, shown.columns):
        if pd.api.types.is_bool_dtype(frame[original]):
            shown[col] = frame[original].map({True: "yes", False: "no"}).to_numpy()
        elif not pd.api.types.is_numeric_dtype(frame[original]):
            shown[col] = frame[original].map(_shown).to_numpy()
    formats: dict[Any, Any] = {}
    for original, col in zip(frame.columns, shown.columns):
        if original in percent:
            formats[col] = "{:.0%}"
        elif is_lam_column(original) and pd.api.types.is_numeric_dtype(frame[original]):
            formats[col] = lam_text
        elif pd.api.types.is_float_dtype(frame[original]):
            formats[col] = ("{:+.%df}" if str(original).startswith("Δ") else "{:.%df}") % digits
    wide = [col for original, col in zip(frame.columns, shown.columns)
            if not pd.api.types.is_numeric_dtype(frame[original])
            and shown[col].astype(str).str.len().max() > LONG_TEXT]  # as readable_html's
    out = (shown.style.format(formats, na_rep=na_rep)
           .set_properties(subset=list(formats), **{"white-space": "nowrap"})
           .set_properties(subset=wide, **{"min-width": TEXT_WIDTH})
           .set_table_attributes('style="display: block; overflow-x: auto"')
           # cells apart: a dash or a short number beside the next column reads as one ("—3")
           .set_table_styles([{"selector": "td, th", "props": [("padding", "0.15em 0.6em")]}],
                             overwrite=False))
    if isinstance(frame.index, pd.RangeIndex):
        out = out.hide(axis="index")
    return out


def install() -> None:
    """Show every ``DataFrame`` of this IPython kernel through :func:`readable_html` (nothing
    outside a kernel)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the book's extra
        return
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, readable_html)

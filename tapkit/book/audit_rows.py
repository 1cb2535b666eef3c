"""The protocol audit's row (issue 37): an :class:`Entry` of the paper's side, the released
code's and a reader of the profiles' value, with its :class:`Verdict`; and how a value is
written in a cell (:func:`render`). :mod:`.audit_entries` holds the rows (reading the profiles
through :mod:`.audit_reads` and code through :mod:`.audit_probes`), :mod:`.protocol_audit`
the table and page built from them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable, Mapping

from ..experiment_specs import paper_names
from ..methods import list_methods, no_xs

GROUPS = ("data", "model", "training", "losses", "teachers", "metrics", "Table 1")


class Verdict(str, Enum):
    """How tapkit's paper profile stands to the paper's text."""

    SAME = "same"                            # it does what the text says
    RELEASED = "follows the released code"   # the text differs or is silent; the code decides
    DEVIATION = "deliberate deviation"       # neither, on purpose (the reason says why)
    STANDIN = "stand-in only"                # a setting of the quick profile's CPU stand-in

    @property
    def needs_reason(self) -> bool:
        return self in (Verdict.DEVIATION, Verdict.STANDIN)


@dataclass(frozen=True)
class Entry:
    """One setting of the protocol: the paper's side (``paper_line`` in ``tap-aaai24.tex`` and a
    quote found within three lines of it), the released code's (``released``), how to read the
    profile's value (``read(profile)``, ``profile`` one of :data:`PROFILES`), and the verdict on
    the paper profile with its ``reason`` (required for a deviation or a stand-in setting)."""

    setting: str
    group: str
    paper_line: int
    paper_quote: str
    released: str
    read: Callable[[str], Any]
    verdict: Verdict
    reason: str = ""

    def __post_init__(self) -> None:
        if self.group not in GROUPS:
            raise ValueError(f"{self.setting}: unknown group {self.group!r}; expected one of "
                             f"{GROUPS}")
        if self.verdict.needs_reason and not self.reason:
            raise ValueError(f"{self.setting}: a {self.verdict.value!r} row needs its reason")


# --------------------------------------------------------------------------- rendering

_DATASETS = paper_names()  # {"decoy-mnist": "MNIST", "mnist": "MNIST", "pneu": "PNEU", ...}


def name(key: Any) -> str:
    """A key as a value cell prints it: a dataset by the paper's name (``"pneu"`` -> ``"PNEU"``),
    an XS or distillation method by its abbreviation (``tap`` -> ``TAP``), anything else (an
    architecture, a registry variant) as the registry names it. Values stay registry names, so
    that what is recorded does not move with the pages' labels; :func:`.protocol_audit.styled` shows the
    architectures by their labels."""
    text = str(key)
    if text in _DATASETS:
        return _DATASETS[text]
    return text.upper() if text in list_methods() and text != no_xs() else text


def render(value: Any) -> str:
    """A value as one short cell: floats in ``%g``, sequences joined by commas, mappings as
    ``key: value`` pairs with readable keys (one value when every key has the same), enums by
    their value, None as "—"."""
    if isinstance(value, Enum):
        return str(value.value)
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, Mapping):
        texts = {name(k): render(v) for k, v in value.items()}
        if not texts:
            return "none"
        if len(texts) > 1 and len(set(texts.values())) == 1:
            return next(iter(texts.values()))
        return "; ".join(f"{k}: {v}" for k, v in texts.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(render(v) for v in value) if value else "none"
    return str(value)


def grid_text(grid: tuple[float, ...]) -> str:
    """A λ grid: ``"1e-09 to 1, ×10 steps (10 values)"`` for a long log grid, else the values."""
    if len(grid) > 4:
        ratios = {round(b / a, 6) for a, b in zip(grid, grid[1:])}
        if len(ratios) == 1:
            return f"{grid[0]:g} to {grid[-1]:g}, ×{ratios.pop():g} steps ({len(grid)} values)"
    return render(tuple(grid)) if grid else "not searched"



"""The protocol, line by line: one row per setting of the paper's protocol (issue 37, item 1),
as the table and page the protocol chapter shows. The rows are :data:`.audit_entries.ENTRIES`.

Each row is an :class:`~.audit_rows.Entry`: what the paper says (its LaTeX line and a short
quote), where the authors' released code sets it (``file:line``, or "—" where it has nothing),
how tapkit's two profiles set it, and a :class:`~.audit_rows.Verdict` on the paper profile with
its reason. The paper's side and the verdict are data, written once in :mod:`.audit_entries`;
the profiles' side is never typed: each entry's ``read(profile)`` reads it when the table is
built.

The values as they were when the audit was written are package data
(``measured/protocol_audit_recorded.csv``). :func:`stale_rows` compares them with the live ones,
so a profile that changes under the audit shows up as a stale row (and fails a test) until the
verdict is looked at again and :func:`record` writes the new values.

The verdict judges the *paper* profile; the quick profile is a CPU stand-in by design, and its
column shows how far it is scaled down (the reason says why where it matters).
"""

from __future__ import annotations

import html
import re
from importlib import resources
from pathlib import Path

import pandas as pd

from ..experiments.cells import Annotation
from ..models import list_models
from ..results import provenance, write_atomic
from .audit_entries import ENTRIES
from .audit_rows import GROUPS, Entry, Verdict, render  # noqa: F401 (the audit's API)
from .medical_notes import label
from .report import write_table

PROFILES = ("paper", "quick")
RECORDED = "protocol_audit_recorded.csv"  # package data beside this module, in measured/
TABLE = "protocol_audit"                  # results/<profile>/tables/protocol_audit.csv


# --------------------------------------------------------------------------- the table

COLUMNS = ("setting", "group", "paper_line", "paper_quote", "released", "paper_profile",
           "quick_profile", "verdict", "reason")
LABELS = {"setting": "Setting", "group": "Group", "paper_line": "LaTeX line",
          "paper_quote": "The paper", "released": "Released code",
          "paper_profile": "tapkit, paper profile", "quick_profile": "tapkit, quick profile",
          "verdict": "Verdict", "reason": "Why"}


def live(entry: Entry) -> dict[str, str]:
    """The entry's value under each profile, rendered (:func:`render`)."""
    return {f"{p}_profile": render(entry.read(p)) for p in PROFILES}


def audit_table(entries: tuple[Entry, ...] = ENTRIES) -> pd.DataFrame:
    """One row per entry with the profiles' values read now (:data:`COLUMNS`)."""
    rows = [{"setting": e.setting, "group": e.group, "paper_line": e.paper_line,
             "paper_quote": e.paper_quote, "released": e.released, **live(e),
             "verdict": e.verdict.value, "reason": e.reason} for e in entries]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def recorded(path: str | Path | None = None) -> pd.DataFrame:
    """The values recorded when the audit was written (``setting``, ``paper_profile``,
    ``quick_profile``): package data, or ``path``."""
    if path is not None:
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    with resources.files("tapkit.book").joinpath("measured", RECORDED).open() as fh:
        return pd.read_csv(fh, dtype=str, keep_default_na=False)


def record(path: str | Path | None = None, table: pd.DataFrame | None = None) -> Path:
    """Write the live values as the recorded ones (after looking at every stale row's verdict):
    ``measured/protocol_audit_recorded.csv`` beside this module, or ``path``."""
    table = audit_table() if table is None else table
    path = Path(path) if path is not None else Path(__file__).parent / "measured" / RECORDED
    write_atomic(path, table[["setting", "paper_profile", "quick_profile"]].to_csv(index=False))
    return path


def stale_rows(table: pd.DataFrame | None = None,
               expected: pd.DataFrame | None = None) -> pd.DataFrame:
    """The rows whose live profile values differ from the recorded ones (or that have none
    recorded), with the recorded values beside them (``recorded_paper``, ``recorded_quick``):
    a profile changed since its verdict was written. Empty when the audit is current."""
    table = audit_table() if table is None else table
    expected = recorded() if expected is None else expected
    merged = table.merge(expected.rename(columns={"paper_profile": "recorded_paper",
                                                  "quick_profile": "recorded_quick"}),
                         on="setting", how="left")
    stale = ((merged.paper_profile != merged.recorded_paper)
             | (merged.quick_profile != merged.recorded_quick))
    return merged[stale].reset_index(drop=True)


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """How many rows carry each verdict, in :class:`Verdict` order (zeros kept)."""
    counts = table.verdict.value_counts()
    return {v.value: int(counts.get(v.value, 0)) for v in Verdict}


def write_protocol_audit(results_dir: str | Path) -> pd.DataFrame:
    """The audit table, written atomically to ``results_dir/tables/protocol_audit.csv`` (with its
    provenance and the stale rows in ``protocol_audit.json``); the table."""
    table = audit_table()
    stale = stale_rows(table)
    write_table(table, results_dir, TABLE,
                {"provenance": provenance(), "verdicts": verdict_counts(table),
                 "stale": stale.setting.tolist()})
    return table


_CELL = {"white-space": "normal", "vertical-align": "top", "text-align": "left",
         "font-size": "0.85em"}
# column widths (at the cells' 0.85em) that add up to the book's 992-px column at 1280 px: the
# text wraps in taller rows instead of the table scrolling sideways (102 em made it 1,640 px;
# 58 em and the cells' padding fit)
_WIDTH = {"setting": "6em", "group": "4em", "paper_line": "3em", "paper_quote": "11em",
          "released": "7em", "paper_profile": "7em", "quick_profile": "7em",
          "verdict": "5em", "reason": "8em"}
VERDICT_COLOURS = {Verdict.SAME.value: "#d9f2d9", Verdict.RELEASED.value: "#e3ecf7",
                   Verdict.DEVIATION.value: "#fdf3c8", Verdict.STANDIN.value: "#eeeeee"}


def humanised(text: str) -> str:
    """``text`` with every registered architecture's name and every annotation's id replaced by
    the label the pages use (:func:`.medical_notes.label`): ``"vgg16: 32"`` -> ``"VGG-16: 32"``,
    ``"ground_truth"`` -> ``"ground truth"``."""
    names = sorted([*list_models(), *(a.value for a in Annotation if a is not Annotation.NONE)],
                   key=len, reverse=True)
    return re.sub(r"\b(" + "|".join(map(re.escape, names)) + r")\b",
                  lambda m: label(m.group(1)), str(text))


_INLINE = re.compile(r"\$([^$]+)\$")
_TEX = re.compile(r"\\[A-Za-z]+")
_PROCESS = '<span class="mathjax_process">{}</span>'


def math_quote(text: str) -> str:
    """A quote of the paper's LaTeX as the page renders it (MathJax, offline): its inline
    ``$…$`` as ``\\(…\\)``, and a quote that is a formula itself (a TeX command outside any
    ``$…$``) whole inside ``\\(…\\)``, an array row's ``&`` as a space; a table row quoted as
    text gets ``|`` between its cells. Prose without TeX is left as it is. A quote with math is
    marked ``mathjax_process``: the page loads MathJax because its prose has an equation (Sphinx
    loads it only on pages with math), and myst-nb marks a notebook's section
    ``mathjax_ignore``, so MathJax reads only what is marked."""
    raw = str(text)
    if _TEX.search(_INLINE.sub("", raw)):
        return _math(r"\(" + raw.replace("&", r"\quad") + r"\)")
    raw = raw.replace(" & ", " | ")
    if not _INLINE.search(raw):
        return raw
    return _math(_INLINE.sub(lambda m: r"\(" + m.group(1) + r"\)", raw))


def _math(tex: str) -> str:
    """``tex`` marked for MathJax, HTML-escaped: ``E < \\tau`` is text, not the start of a tag."""
    return _PROCESS.format(html.escape(tex, quote=False))


def styled(table: pd.DataFrame):
    """The table for the page: human column names and architecture names, wrapped text in
    columns of fixed width, verdicts coloured, no index."""
    values = ("paper_profile", "quick_profile")
    shown = table.assign(**{c: table[c].map(humanised) for c in values},
                         paper_quote=table["paper_quote"].map(math_quote)).rename(columns=LABELS)
    styler = shown.style.hide(axis="index").set_table_styles(
        [{"selector": "td", "props": list(_CELL.items())},
         {"selector": "th", "props": [("text-align", "left"), ("vertical-align", "bottom")]}])
    styler = styler.set_table_styles(
        {LABELS[c]: [{"selector": "", "props": [("min-width", w), ("max-width", w)]}]
         for c, w in _WIDTH.items()}, overwrite=False)
    return styler.map(lambda v: f"background-color: {VERDICT_COLOURS.get(v, '')}",
                      subset=[LABELS["verdict"]])


def to_html(table: pd.DataFrame) -> str:
    """:func:`styled` as HTML."""
    return styled(table).to_html()


def stale_note(table: pd.DataFrame):
    """Markdown under the table: that every value is as recorded, or which rows changed since
    their verdict was written (the recorded and live values side by side)."""
    from IPython.display import Markdown

    stale = stale_rows(table)
    if stale.empty:
        return Markdown(f"Every one of the {len(table)} rows' profile values is as recorded when "
                        "its verdict was written.")
    lines = [f"- **{r.setting}**: paper profile {r.recorded_paper} → {r.paper_profile}; quick "
             f"{r.recorded_quick} → {r.quick_profile}" for r in stale.itertuples()]
    return Markdown(f"**{len(stale)} row(s) changed since their verdict was written** "
                    "(recorded → now); their verdicts need a second look:\n\n" + "\n".join(lines))


_IN_PROSE = {Verdict.SAME.value: ("is as the text says", "are as the text says"),
             Verdict.RELEASED.value: ("follows the released code", "follow the released code"),
             Verdict.DEVIATION.value: ("is a deliberate deviation", "are deliberate deviations"),
             Verdict.STANDIN.value: ("belongs to the stand-in only",
                                     "belong to the stand-in only")}


def opening(table: pd.DataFrame) -> str:
    """The page's finding: how many settings, the verdicts counted, and whether any is stale."""
    counts = verdict_counts(table)
    stale = len(stale_rows(table))
    parts = ", ".join(f"{n} {_IN_PROSE[v][n != 1]}" for v, n in counts.items() if n)
    return (f"of {len(table)} settings, {parts}; "
            + (f"{stale} changed since their verdicts were written." if stale
               else "every value is as recorded when its verdict was written."))


def close_chapter(ch, table: pd.DataFrame):
    """The page's opening (:func:`opening`) and its status record: it trains nothing."""
    ch.opening(opening(table))
    return ch.finish(data="the profiles' settings (no data)", standin=False, seeds=())


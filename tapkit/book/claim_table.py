"""The reproduction report's claim table: every claim of the paper (:mod:`.claim_specs`), judged
from the tables one profile's build wrote, and its HTML form."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Mapping

import pandas as pd

from .claim_specs import claims_table as _claims_table
from .claims import (INCONCLUSIVE, NOT_REPRODUCED, NOT_RUN, NOT_TESTABLE, REPRODUCED, shorten,
                     verdict_text)
from .table_display import inline_html

VERDICT_COLOURS = {REPRODUCED: "#d9f2d9", NOT_REPRODUCED: "#f8d7d7", NOT_RUN: "#eeeeee",
                   INCONCLUSIVE: "#fdf3c8", NOT_TESTABLE: "#e3ecf7"}


def claims_table(root: str | Path) -> pd.DataFrame:
    """Every claim of the paper judged from ``root/tables`` (:func:`.claim_specs.claims_table`)."""
    return _claims_table(root)


def _cell(verdict: str, reason: str, most: int = 110) -> str:
    """The verdict cell, coloured: the verdict and its reason, cut to ``most`` characters (the
    whole reason on hover; the evidence beside it names every dropped seed)."""
    reason = reason or ""
    return (f'<td style="background-color: {VERDICT_COLOURS.get(verdict, "")}" '
            f'title="{escape(reason)}">{escape(verdict_text(verdict, shorten(reason, most)))}</td>')


def to_html(table: pd.DataFrame, link: str = "{chapter}.html") -> str:
    """The claim table as the report shows it: three columns (the claim with its LaTeX line and
    the paper's number; this build's evidence with its seeds and data; the verdict, coloured, with
    its reason), readable on a narrow page; each claim links to its chapter (``link``)."""
    rows = []
    for r in table.itertuples():
        where = f"line {r.tex_line}" if getattr(r, "tex_line", None) else ""
        paper = f"paper ({where}): {r.paper_number}" if getattr(r, "paper_number", "") else where
        test = f"<br><small>tested as: {escape(r.test)}</small>" if getattr(r, "test", "") else ""
        chapter = getattr(r, "chapter", "")
        title = (f'<a href="{escape(link.format(chapter=chapter))}">{escape(r.claim)}</a>'
                 if chapter else escape(r.claim))
        rows.append(f"<tr><td><b>{title}</b><br><small>{escape(paper)}</small>{test}</td>"
                    f"<td>{escape(r.evidence)}<br><small>{escape(str(r.seeds))} · "
                    f"{escape(str(r.data))}</small></td>"
                    + _cell(r.verdict, getattr(r, "reason", "")) + "</tr>")
    return ('<table class="claims"><thead><tr><th>Claim (paper)</th><th>Evidence from this build'
            f"</th><th>Verdict</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def committed_html(root: str | Path, link: str = "{chapter}.html") -> str:
    """The claims a committed (paper-profile) store can speak to, as HTML: the rows whose cells
    ran, and one line counting the claims whose cells did not (the GPU lease trains a part of the
    paper's protocol at a time)."""
    table = claims_table(root)
    ran = table[table.verdict != NOT_RUN]
    rest = len(table) - len(ran)
    return (to_html(ran, link) + f"<p>{rest} of the paper's {len(table)} claims have no "
            "committed paper-profile cells yet (<i>not run</i>).</p>")


JUDGED = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE)  # the verdicts the evidence decided


def _summary_rows(table: pd.DataFrame) -> str:
    """The first page's rows: the claim linked to its chapter with its LaTeX line, the paper's
    number, this build's evidence and the data cut short (whole on hover), the verdict."""
    rows = []
    for r in table.itertuples():
        rows.append(f'<tr><td><a href="notebooks/{escape(r.chapter)}.html">{escape(r.claim)}</a>'
                    f"<br><small>line {r.tex_line}</small></td>"
                    f'<td title="{escape(str(r.paper_number))}"><small>'
                    f"{inline_html(shorten(r.paper_number, 160))}</small></td>"
                    f'<td title="{escape(str(r.evidence))}"><small>'
                    f"{inline_html(shorten(r.evidence, 220))}</small></td>"
                    f'<td title="{escape(str(r.data))}"><small>{inline_html(shorten(r.data, 90))}'
                    "</small></td>" + _cell(r.verdict, r.reason) + "</tr>")
    return ('<table class="claims"><thead><tr><th>Claim</th><th>The paper\'s number</th>'
            "<th>This build</th><th>Data</th><th>Verdict</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def _by_part(table: pd.DataFrame, parts: Mapping[str, str]) -> str:
    """The verdicts counted per part of the book (``parts``: chapter → its part's caption, in the
    book's order; a chapter in none counts under "other"), one row each, the verdicts' colours in
    the header: the first page's glance above the rows."""
    part = table["chapter"].map(dict(parts)).fillna("other")
    heads = "".join(f'<th style="background-color: {colour}">{escape(str(v))}</th>'
                    for v, colour in VERDICT_COLOURS.items())
    rows = []
    for name in dict.fromkeys([*parts.values(), "other"]):
        counts = table.loc[part == name, "verdict"].value_counts()
        if counts.sum():
            rows.append(f'<tr><th scope="row">{escape(name)}</th>' + "".join(
                f"<td>{counts.get(v, 0) or ''}</td>" for v in VERDICT_COLOURS) + "</tr>")
    return ('<table class="verdict-parts" style="margin-bottom: 1.5em"><thead><tr>'
            '<th>Part of the book</th>' + heads
            + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def first_page(table: pd.DataFrame | None, meta: dict | None = None,
               parts: Mapping[str, str] | None = None) -> str:
    """The intro's verdict summary (Markdown with HTML tables, as ReScience C and the ML
    Reproducibility Challenge open their reports): one line with the profile, device, commit and
    the verdicts counted; then the claims the evidence decided (:data:`JUDGED`), reproduced
    first, one row each — the claim linked to its chapter, the paper's number, this build's
    evidence, and the verdict, coloured, with its reason; then, folded, the claims this build
    could not judge (*not run*, *not testable here*) in the same columns. ``table``: the
    report's ``claims`` table (None: the report did not run); ``meta``: its provenance
    (``profile``, ``provenance``, and ``variants``: a sentence per architecture the profile
    trains as another registry entry, printed after the line); ``parts``: each chapter's part of
    the book (``_toc.yml``), for a count of the verdicts per part above the rows."""
    if table is None:
        return ("*The reproduction report did not run in this build, so no claim has a verdict "
                "here; see the chapters.*\n")
    meta = meta or {}
    prov = meta.get("provenance", {})
    counts = table["verdict"].value_counts()
    line = (f"**{len(table)} claims of the paper**, judged by the `{meta.get('profile', '?')}` "
            f"profile ({prov.get('device', 'device not recorded')}, tapkit "
            f"{str(prov.get('git_commit', ''))[:7] or '?'}): "
            + ", ".join(f"{counts[v]} *{v}*" for v in VERDICT_COLOURS if v in counts)
            + ". Each claim links to the chapter that measures it; the reasons and the numbers "
            "behind every verdict are in the reproduction report.")
    # the architectures the profile trains as another entry (quick: VGG-16 at a quarter of its
    # width), which the rows below name by the paper's name
    line += "".join(f" {note}" for note in meta.get("variants", ()))
    order = {v: i for i, v in enumerate((*JUDGED, NOT_RUN, NOT_TESTABLE))}
    ranked = table.assign(_rank=table["verdict"].map(order)).sort_values("_rank", kind="stable")
    judged = ranked[ranked["verdict"].isin(JUDGED)]
    rest = ranked[~ranked["verdict"].isin(JUDGED)]
    html = ('<div class="claims-summary">'
            + (_summary_rows(judged) if len(judged) else
               "<p><i>No claim could be judged by this build.</i></p>")
            + (f"<details><summary>The {len(rest)} claims this build could not judge (not run, "
               "or not testable here: each with why)</summary>" + _summary_rows(rest)
               + "</details>" if len(rest) else "")
            + "</div>")
    glance = _by_part(table, parts) + "\n\n" if parts else ""
    return line + "\n\n" + glance + html + "\n"

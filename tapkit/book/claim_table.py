"""The reproduction report's claim table: every claim of the paper (:mod:`.claim_specs`), judged
from the tables one profile's build wrote, and its HTML form."""

from __future__ import annotations

from html import escape
from pathlib import Path

import pandas as pd

from .claim_specs import claims_table as _claims_table
from .claims import INCONCLUSIVE, NOT_REPRODUCED, NOT_RUN, NOT_TESTABLE, REPRODUCED, verdict_text

VERDICT_COLOURS = {REPRODUCED: "#d9f2d9", NOT_REPRODUCED: "#f8d7d7", NOT_RUN: "#eeeeee",
                   INCONCLUSIVE: "#fdf3c8", NOT_TESTABLE: "#e3ecf7"}


def claims_table(root: str | Path) -> pd.DataFrame:
    """Every claim of the paper judged from ``root/tables`` (:func:`.claim_specs.claims_table`)."""
    return _claims_table(root)


def _cell(verdict: str, reason: str) -> str:
    return (f'<td style="background-color: {VERDICT_COLOURS.get(verdict, "")}">'
            f"{escape(verdict_text(verdict, reason or ''))}</td>")


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

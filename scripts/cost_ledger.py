"""What each cell of a built book cost and which of the report's claims read it
(:func:`tapkit.book.ledger.ledger`), as one Markdown table: the dearest cells first, each with its
runs, seeds, CPU seconds and the claims whose report row changes without it. A cell no claim
reads is where issue 36's budget rule ("pay for the new cells by removing cells no claim reads")
looks first.

    python scripts/cost_ledger.py results/quick                  # prints the table
    python scripts/cost_ledger.py results/quick --out build/ledger.md

Reads the store and its tables only; judges the build once per cell (~1 s each).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's tapkit, also when another one is installed
from tapkit.book.ledger import CellKey, FIELDS, ledger  # noqa: E402
from tapkit.results import write_atomic  # noqa: E402


def markdown(table) -> str:
    """The ledger as a Markdown table, with its total and the share no claim reads."""
    rows = ["| cell | runs | seeds | CPU-s | claims that read it |", "|---|---|---|---|---|"]
    for r in table.itertuples(index=False):
        cell = CellKey(*(getattr(r, f) for f in FIELDS))
        rows.append(f"| {cell} | {r.runs} | {r.seeds} | {r.seconds:,.0f} | "
                    f"{r.claims or '**none**'} |")
    total, unread = table["seconds"].sum(), table.loc[table["n_claims"] == 0, "seconds"].sum()
    return ("\n".join(rows) + f"\n\n{len(table)} cells, {total:,.0f} CPU-s of training; "
            f"{unread:,.0f} CPU-s ({unread / max(total, 1):.0%}) in cells no claim reads "
            "(pretrained starts and teachers among them: their runs feed no table row, the "
            "cells they serve do).\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="a profile's results folder (results/quick)")
    parser.add_argument("--out", type=Path, help="write the Markdown here (default: print it)")
    args = parser.parse_args(argv)
    if not (args.results / "runs").is_dir() or not (args.results / "tables").is_dir():
        parser.error(f"{args.results} holds no runs/ and tables/: give a built profile's results "
                     "folder (make book writes results/quick)")
    text = markdown(ledger(args.results))
    if args.out:
        write_atomic(args.out, text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The book's shared tables: ours beside the paper's, as every chapter prints them."""

import math

import pandas as pd

from tapkit.book import report


def _both(rows):
    """A :func:`report.beside` frame from (case, split, ours, ours_std, paper, paper_std) rows."""
    return pd.DataFrame(rows, columns=["case", "split", "ours", "ours_std", "paper", "paper_std"])


def test_side_by_side_pairs_ours_and_the_papers_per_split_in_order():
    nan = math.nan
    both = _both([("tap", "contaminated", 0.98765, 0.0012, 0.987, 0.001),
                  ("tap", "permuted", 0.9, nan, 0.95, 0.01),       # one seed: no std
                  ("tap", "clean", nan, nan, 0.96, 0.002),         # no run converged: DNC
                  ("none", "clean", 0.5, 0.1, nan, nan),           # the paper gives no value
                  ("none", "contaminated", 0.99, 0.0, 0.995, 0.001),
                  ("none", "permuted", 0.25, 0.05, 0.819, 0.006)])
    table = report.side_by_side(both, "case", ["none", "tap", "rrr"])
    assert list(table.columns) == ["contaminated (ours)", "contaminated (paper)",
                                   "permuted (ours)", "permuted (paper)",
                                   "clean (ours)", "clean (paper)"]
    assert list(table.index) == ["none", "tap", "rrr"]
    assert table.loc["tap"].tolist() == ["0.988 (0.001)", "0.987 (0.001)", "0.900",
                                         "0.950 (0.010)", "DNC", "0.960 (0.002)"]
    assert table.loc["none", "clean (ours)"] == "0.500 (0.100)"
    assert table.loc["none", "clean (paper)"] == "–"
    assert table.loc["rrr"].isna().all()   # asked for, not run: left for the caller to fill


def test_side_by_side_takes_a_row_label_of_several_columns():
    both = _both([(c, sp, v, 0.01, v + 0.1, 0.02) for c, v in (("tap", 0.5), ("rrr", 0.25))
                  for sp in report.SPLITS]).assign(tau=["0.01"] * 3 + ["any"] * 3)
    table = report.side_by_side(both, ["case", "tau"])
    assert list(table.index) == [("rrr", "any"), ("tap", "0.01")]  # pivot's sorted order
    assert table.loc[("rrr", "any"), "permuted (paper)"] == "0.350 (0.020)"
    assert table.loc[("tap", "0.01"), "clean (ours)"] == "0.500 (0.010)"

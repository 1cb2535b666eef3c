"""The book's shared tables: ours beside the paper's, as every chapter prints them."""

import math

import pytest
import numpy as np
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


def test_a_case_left_out_says_not_run_and_why_under_the_table():
    """The MNIST page's tables for a case the profile does not train (quick: RBR): *not run*
    in our columns and the interval table, the paper's mean (std) kept, the reason a footnote."""
    both = _both([("tap", s, 0.97, 0.01, 0.979, 0.002) for s in report.SPLITS])
    table = report.side_by_side(both, "case", ["tap", "rbr"])
    paper = pd.DataFrame({"case": ["rbr"] * 3, "split": list(report.SPLITS),
                          "mean": [0.992, 0.982, 0.982], "std": [0.001, 0.001, 0.004]})
    marked = report.mark_not_run(table, {("two_layer_cnn", "rbr"): "too dear"}, paper)
    assert marked.loc["rbr"].tolist() == ["not run [1]", "0.992 (0.001)", "not run [1]",
                                          "0.982 (0.001)", "not run [1]", "0.982 (0.004)"]
    assert marked.attrs["notes"] == ["too dear"] and "notes" not in table.attrs
    assert marked.loc["tap", "permuted (ours)"] == "0.970 (0.010)"
    # the page prints the reason once, under the table
    from tapkit.book import table_display
    page = table_display.readable_html(marked)
    assert page.count("too dear") == 1 and page.index("too dear") > page.index("</table>")
    with pytest.raises(ValueError, match="footnotes"):  # a Styler would drop the reason
        table_display.styled(marked)
    assert report.mark_not_run(table, {}, paper) is table  # nothing left out: unchanged
    runs = pd.DataFrame({"case": ["tap", "tap"], "status": ["ok", "ok"],
                         **{s: [0.96, 0.98] for s in report.SPLITS}})
    intervals = report.interval_table(runs, ["tap", "rbr"])
    assert intervals.loc["rbr"].tolist() == ["not run"] * 3  # no run at all: not "DNC"
    assert intervals.loc["tap", "clean"].startswith("0.970 [")


def test_side_by_side_takes_a_row_label_of_several_columns():
    both = _both([(c, sp, v, 0.01, v + 0.1, 0.02) for c, v in (("tap", 0.5), ("rrr", 0.25))
                  for sp in report.SPLITS]).assign(tau=["0.01"] * 3 + ["any"] * 3)
    table = report.side_by_side(both, ["case", "tau"])
    assert list(table.index) == [("rrr", "any"), ("tap", "0.01")]  # pivot's sorted order
    assert table.loc[("rrr", "any"), "permuted (paper)"] == "0.350 (0.020)"
    assert table.loc[("tap", "0.01"), "clean (ours)"] == "0.500 (0.010)"


def _long_label() -> str:
    """A provenance label of 300 characters, as a chapter's run of many architectures writes."""
    label = ("profile quick · cpu: x86_64, 2 threads · tapkit 0.1.0 (abc1234) · torch 2.4.1 · SGD · "
             + ", ".join(f"architecture-{i} batch 16 of 64 px" for i in range(8)))
    return label[:300]


def _texts_fit(fig) -> None:
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    for text in fig.findobj(Text):
        if text.get_visible() and text.get_text().strip():
            assert text.get_fontsize() >= report.MIN_FONT_PT, text.get_text()
            assert text.get_window_extent(renderer).width <= fig.bbox.width + 1, text.get_text()


def test_saved_figures_read_at_page_width_whatever_their_title(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    label = _long_label()
    assert len(label) == 300
    wide = pd.DataFrame({"contaminated": [0.99, 0.98, 0.97], "permuted": [0.3, 0.97, 0.96]},
                        index=["none", "tap", "TAP\nteacher_10"])
    helper = report.plot_metric_and_delta(wide, f"Decoy-MNIST, ground-truth masks — {label}")
    # a chapter's own figure with the label in a small suptitle, as the Table-1 figure had it
    raw, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    for ax in axes:
        ax.bar(["a", "b"], [1.0, 0.5])
        ax.tick_params(axis="x", labelsize=6)
    raw.suptitle(f"Table 1 as ratios to No XS\n{label}", fontsize=7)
    raw.tight_layout()
    for name, fig in (("helper", helper), ("raw", raw)):
        path = report.save_figure(fig, tmp_path, name)
        with Image.open(path) as png:
            assert png.width <= report.MAX_WIDTH_PX, (name, png.size)
        _texts_fit(fig)
        plt.close(fig)
    assert [t.get_text() for t in helper.axes[0].get_xticklabels()] == [
        "No XS", "TAP", "TAP\n10% teacher"]


def test_labels_name_keys_for_people():
    from tapkit.book.medical_notes import label, lam_text

    assert [report.tick_label(k) for k in ("teacher_10", "teacher_1", "ground_truth", "none",
                                           "lam", "speed_ratio", "NONE\nno teacher")] == [
        "10% teacher", "1% teacher", "ground truth", "No XS", "λ", "speed ÷ No XS", "No XS"]
    assert label("resnet18") == "ResNet-18" and label("unknown_key") == "unknown_key"
    assert [lam_text(v) for v in (1e-4, 0.0025, 100.0, 0, 0.1, 1.0, -2.5)] == [
        "1e-4", "2.5e-3", "1e2", "0", "0.1", "1", "-2.5"]


def test_the_results_figures_draw_the_papers_values_and_the_seeds_spread():
    """Issue 39: each bar carries its std over seeds, the paper's value is drawn beside ours
    (a black mark where the paper has the cell, none where it has not), and the score axis
    starts at 0 instead of cutting the bars short."""
    import matplotlib

    matplotlib.use("Agg")
    from tapkit.book import medical

    rows = [{"case": c, "split": sp, "mean": m, "std": 0.02}
            for c, (cont, perm) in {"none": (0.99, 0.80), "tap": (0.98, 0.97)}.items()
            for sp, m in (("contaminated", cont), ("permuted", perm))]
    summary = pd.DataFrame(rows)
    paper = pd.DataFrame([{"case": "none", "split": "contaminated", "mean": 0.995},
                          {"case": "none", "split": "permuted", "mean": 0.819}])
    fig = report.mnist_figure(summary, ["none", "tap"], "t", paper)
    left, right = fig.axes[:2]
    marks = left.collections[-1].get_offsets()
    assert left.get_ylim()[0] == 0.0
    ys = np.ma.filled(np.ma.asarray(marks[:, 1], dtype=float), np.nan)
    assert ys[0] == 0.995 and np.isnan(ys[1])  # the paper has no TAP row here: no mark
    assert np.allclose(right.collections[-1].get_offsets()[0], [0, 0.819 - 0.995])
    assert any(len(c.get_segments()) == 2 for c in left.collections
               if hasattr(c, "get_segments"))  # one error bar per case
    med = pd.DataFrame([{"model": "resnet18", "case": c, "split": sp, "mean": m, "std": 0.05}
                        for c, vals in {"none": (0.95, 0.40), "tap": (0.90, 0.88)}.items()
                        for sp, m in zip(("contaminated", "permuted"), vals)])
    fig = medical.plot_results(med, medical.task_metric("pneu"), ["resnet18"], ["none", "tap"],
                               "t", paper=medical.paper_summary("pneu"), constant=2 / 3)
    ax = fig.axes[0]
    theirs = medical.paper_summary("pneu").query("model == 'resnet18' and split == 'contaminated'")
    from matplotlib.collections import PathCollection

    drawn = sorted(float(y) for c in ax.collections if isinstance(c, PathCollection)
                   for y in c.get_offsets()[:, 1])
    assert drawn == sorted(theirs.set_index("case").loc[["none", "tap"], "mean"].tolist())
    assert ax.get_ylim() == (0.0, 1.0)
    assert any(line.get_linestyle() == "--" and line.get_ydata()[0] == 2 / 3
               for line in ax.get_lines())


def test_the_delta_panels_error_bars_are_the_std_of_each_runs_delta():
    """The Δ panel's error bar is the std over seeds of permuted − contaminated, run by run: two
    seeds that score higher on both splits move Δ little, which the splits' stds cannot tell."""
    import matplotlib

    matplotlib.use("Agg")
    from tapkit.book import medical

    runs = pd.DataFrame({"model": "resnet18", "case": ["none", "none", "tap", "tap", "tap"],
                         "seed": [0, 1, 0, 1, 2], "status": ["ok"] * 4 + ["dnc"],
                         "contaminated": [0.99, 0.89, 0.98, 0.96, 0.5],
                         "permuted": [0.80, 0.70, 0.97, 0.91, 0.5], "metric": "f1"})
    spread = report.delta_std(runs, ["case"])
    # No XS: Δ -0.19 and -0.19 (std 0, although each split's std is 0.07); TAP: -0.01, -0.05
    # (std 0.02828), the diverged seed left out
    assert spread["none"] == pytest.approx(0.0, abs=1e-12)
    assert spread["tap"] == pytest.approx(np.std([-0.01, -0.05], ddof=1))
    summary = report.summarise(runs.drop(columns="model"), ["case"])
    fig = report.mnist_figure(summary, ["none", "tap"], "t", runs=runs)
    bars = [c for c in fig.axes[1].collections if hasattr(c, "get_segments")]
    (tap_bar,) = [s for c in bars for s in c.get_segments() if s[0][0] == 1]
    assert tap_bar[1][1] - tap_bar[0][1] == pytest.approx(2 * spread["tap"])
    fig = medical.plot_results(medical.summarise(runs), medical.task_metric("pneu"), ["resnet18"],
                               ["none", "tap"], "t", runs=runs)
    segments = [s for c in fig.axes[1].collections if hasattr(c, "get_segments")
                for s in c.get_segments()]
    assert sorted(round(s[1][1] - s[0][1], 6) for s in segments) == [
        0.0, round(2 * spread["tap"], 6)]


def test_a_results_legend_names_only_the_cases_drawn_and_long_ticks_slant():
    import matplotlib

    matplotlib.use("Agg")
    from tapkit.book import medical

    med = pd.DataFrame([{"model": "resnet18", "case": c, "split": sp, "mean": m, "std": 0.05}
                        for c, vals in {"none": (0.95, 0.40), "tap": (0.90, 0.88)}.items()
                        for sp, m in zip(("contaminated", "permuted"), vals)])
    fig = medical.plot_results(med, medical.task_metric("pneu"), ["resnet18"],
                               ["none", "rrr", "tap"], "t")
    # RRR has no bar anywhere (left out by the profile): not in the legend
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["No XS", "TAP"]
    wide = pd.DataFrame({"contaminated": [0.9] * 5, "permuted": [0.8] * 5},
                        index=["teacher_10\nτ=0.01", "teacher_1\nτ=0.01", "random",
                               "ground_truth", "none"])
    slanted = report.plot_metric_and_delta(wide, "t").axes[0].get_xticklabels()[0]
    assert slanted.get_rotation() == 30
    short = report.plot_metric_and_delta(wide.set_axis(["base", "none", "rrr", "rbr", "tap"]), "t")
    assert short.axes[0].get_xticklabels()[0].get_rotation() == 0

"""The tables the chapters display, each from one library function (issue 38: a notebook cell
calls one function per table): hand-made runs and summaries, the cells worked out by hand."""

import pandas as pd
import pytest

from tapkit.book import lambda_figures, medical, mnist_setting2, overlap_tables, report
from tapkit.book import medical_setting2 as s2


def _runs(rows):
    """Runs with a ``clean``/``contaminated``/``permuted`` score each, as run_many returns."""
    return pd.DataFrame([{"status": "ok", "metric": "f1", "seed": i, **r}
                         for i, r in enumerate(rows)])


def test_the_summary_table_prints_mean_std_per_split_in_the_papers_order():
    runs = _runs([
        {"model": "resnet18", "case": "tap", "contaminated": 0.9, "permuted": 0.8, "clean": 0.7},
        {"model": "resnet18", "case": "tap", "contaminated": 0.7, "permuted": 0.6, "clean": 0.5},
        {"model": "densenet121", "case": "none", "contaminated": 1.0, "permuted": 0.0,
         "clean": 0.6}])
    table = medical.summary_table(medical.summarise(runs))
    assert list(table.columns) == list(report.SPLITS)
    # rows sorted by their labels: DenseNet-121 before ResNet-18; std of (0.9, 0.7) is 0.141
    assert [i[0] for i in table.index] == ["DenseNet-121", "ResNet-18"]
    assert table.loc[("ResNet-18", "TAP"), "contaminated"] == "0.800 (0.141)"
    assert table.loc[("DenseNet-121", "No XS"), "permuted"] == "0.000"  # one seed: no std


def test_mean_std_table_keeps_the_summarys_row_order_unless_asked_to_sort():
    summary = pd.DataFrame({"method": ["rrr", "rrr", "rbr"], "split": ["clean", "permuted", "clean"],
                            "mean": [0.5, 0.25, 0.125], "std": [0.0, 0.5, None]})
    kept = report.mean_std_table(summary, {"method": ("method", {"rrr": "RRR", "rbr": "RBR"})})
    assert list(kept.index) == ["RRR", "RBR"] and list(kept.columns) == ["permuted", "clean"]
    assert kept.loc["RRR", "permuted"] == "0.250 (0.500)"
    assert kept.loc["RBR", "clean"] == "0.125" and pd.isna(kept.loc["RBR", "permuted"])
    assert list(report.mean_std_table(summary, {"method": ("method", str.upper)},
                                      sort=True).index) == ["RBR", "RRR"]


def test_the_xs_teacher_table_names_annotations_and_prints_tau():
    runs = _runs([{"method": "rrr", "annotation": "teacher_10", "tau": 0.01, "contaminated": c,
                   "permuted": c - 0.5, "clean": c - 0.25} for c in (0.75, 1.0)])
    table = mnist_setting2.xs_teacher_table(
        report.summarise(runs, ["method", "annotation", "tau"]))
    ((method, annotation, tau),) = table.index
    assert (method, annotation) == ("rrr", "teacher_10") and tau == "0.01"
    assert table.iloc[0].tolist() == ["0.875 (0.177)", "0.375 (0.177)", "0.625 (0.177)"]


def test_the_quality_table_has_a_row_per_annotator_rule_and_tau_and_no_empty_cells():
    quality = pd.DataFrame({"annotator": ["teacher_10", "teacher_10", "random (GT coverage)"],
                            "rule": ["quantile", "absolute", "random"], "tau": [0.01] * 3,
                            "precision": [0.12345, 0.2, 0.02], "recall": [0.5, 0.3, 0.02],
                            "coverage": [0.01, 0.02, 0.01], "lift": [6.1725, 10.0, 1.0]})
    table = mnist_setting2.quality_table(quality)
    assert list(table.columns) == ["precision", "recall", "coverage", "lift"]
    assert table.loc[("teacher_10", "quantile", 0.01), "precision"] == 0.123
    assert table.loc[("random (GT coverage)", "random", 0.01), "lift"] == 1.0
    assert len(table) == 3 and not table.isna().any().any()


def test_the_overlap_side_tables_read_sizes_and_chance_per_dataset():
    both = pd.DataFrame({
        "dataset": ["PNEU"] * 4 + ["KNEE"] * 2,
        "model": ["resnet18", "resnet18", "densenet121", "resnet18", "resnet18", "resnet18"],
        "layer": ["input", "layer4", "input", "input", "input", "input"],
        "metric": ["recall", "recall", "recall", "precision", "recall", "precision"],
        "map_size": [64, 2, 64, 64, 64, 64],
        "chance": [0.25, 0.25, 0.25, 0.04, 0.25, 0.06]})
    sizes = overlap_tables.map_sizes(both, ["layer4", "input"])
    assert list(sizes.columns) == ["layer4", "input"]
    assert sizes.loc["resnet18", "layer4"] == 2 and pd.isna(sizes.loc["densenet121", "layer4"])
    chance = overlap_tables.chance_table(both)
    assert chance.loc["PNEU", "precision"] == 0.04 and chance.loc["KNEE", "precision"] == 0.06
    assert chance.loc["PNEU", "recall"] == 0.25


def test_the_chosen_lambda_stands_beside_the_papers():
    paper = lambda_figures.paper_mnist_lambdas()
    assert set(paper["method"]) >= {"tap", "rrr"}
    choice = pd.DataFrame({"method": ["tap", "toy"], "lam": [1e-3, 1.0]})
    shown = lambda_figures.choice_beside_paper(choice, paper)
    assert shown["method"].tolist() == ["tap"]  # the paper has no λ for a method it never ran
    assert shown["paper λ"].iloc[0] == float(paper.set_index("method").loc["tap", "mean"])
    runs = pd.DataFrame({"method": ["tap"], "lam": [1e-3], "val_loss": [0.4], "extra": [1]})
    table = lambda_figures.search_table(runs)
    assert list(table.columns) == lambda_figures.SEARCH_COLUMNS and pd.isna(table["val_clean"][0])


def test_the_quality_table_is_written_with_each_datasets_tag_coverage():
    quality = pd.DataFrame({"experiment": ["pneu", "knee", "pneu"], "precision": [0.1, 0.2, 0.3]})
    out = s2.with_tag_coverage(quality, {"pneu": 0.03, "knee": 0.05})
    assert out["tag_coverage"].tolist() == [0.03, 0.05, 0.03] and "tag_coverage" not in quality


def test_the_papers_stripe_values_are_one_row_per_architecture_and_method():
    table = medical.paper_stripe_table("pneu")
    paper = report.paper_values("gt_results")
    rows = paper[(paper.dataset == "PNEU") & (paper.artifact == "stripe")]
    assert len(table) == len(rows.drop_duplicates(["architecture", "method"])) > 0
    first = rows.iloc[0]
    assert table.loc[(first.architecture, first.method), first.split] == pytest.approx(first["mean"])


def test_kd_cost_shown_gives_each_students_median_step_and_peak_against_no_xs():
    # two rounds: No XS 0.08 and 0.12 s (median 0.10), JT 0.30 and 0.34 (median 0.32)
    cost = pd.DataFrame({"method": ["none", "none", "jt", "jt"], "round": [0, 1, 0, 1],
                         "seconds": [0.08, 0.12, 0.30, 0.34],
                         "peak_mem_mb": [55.2, 55.2, 101.1, 101.1]})
    shown = mnist_setting2.kd_cost_shown(cost)
    assert list(shown.index) == ["No XS", "JT"]
    assert shown.loc["JT"].tolist() == [320.0, 3.2, 101.1, 1.83]
    assert shown.loc["No XS"].tolist() == [100.0, 1.0, 55.2, 1.0]

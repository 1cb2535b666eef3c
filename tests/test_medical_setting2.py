"""The medical Setting-2 pages' findings, read from hand-made summary tables."""

import matplotlib
import pandas as pd

from tapkit.book import medical_setting2 as s2
from tapkit.book import report
from tapkit.experiments.cells import Annotation

matplotlib.use("Agg")


def summary(experiment: str, cells: dict) -> pd.DataFrame:
    """(model, method, annotation, tau) -> (contaminated, permuted, clean), one seed; τ a number,
    NaN where none applies (as :func:`tapkit.book.report.read_cells` gives it)."""
    rows = []
    for (model, method, annotation, tau), values in cells.items():
        for split, mean in zip(("contaminated", "permuted", "clean"), values):
            rows.append({"experiment": experiment, "model": model, "method": method,
                         "annotation": annotation, "tau": tau, "split": split, "mean": mean, "std": float("nan"), "count": 1})
    return pd.DataFrame(rows)


NAN = float("nan")
CELLS = {("resnet18", "tap", Annotation.TEACHER_10, 0.01): (0.90, 0.80, 0.85),   # loses 0.10
         ("resnet18", "tap", Annotation.TEACHER_1, 0.01): (0.95, 0.40, 0.90),    # loses 0.55
         ("resnet18", "tap", Annotation.RANDOM, 0.01): (1.00, 0.50, 0.60),       # loses 0.50
         ("resnet18", "none", Annotation.NONE, NAN): (1.00, 0.00, 0.70)}         # loses 1.00


def test_ts_findings_compare_each_annotation_with_random_masks_of_the_same_tau():
    text = s2.ts_findings(summary("pneu", CELLS), "pneu")
    assert "10% teacher τ=0.01 +0.100, 1% teacher τ=0.01 +0.550, random τ=0.01 +0.500" in text
    assert "No XS +1.000" in text
    # clean F1 0.60 is below a constant prediction's 2/3: random is flagged, the teachers are not
    assert "0.667): random τ=0.01." in text
    assert "10% teacher's masks in 1 of 1 and with the 1% teacher's masks in 0 of 1" in text


def test_ts_findings_turn_the_sign_for_an_error_metric():
    knee = {k: tuple(2.0 - v for v in vals) for k, vals in CELLS.items()}  # MAE: lower is better
    text = s2.ts_findings(summary("knee", knee), "knee")
    assert "10% teacher τ=0.01 +0.100" in text and "No XS +1.000" in text


def test_kd_findings_name_the_students_that_lean_less_on_the_tag():
    rows = summary("pneu", {("resnet18", "kd", Annotation.TEACHER_10, NAN): (0.9, 0.85, 0.9),
                            ("resnet18", "at", Annotation.TEACHER_10, NAN): (1.0, 0.0, 0.7),
                            ("resnet18", "none", Annotation.NONE, NAN): (1.0, 0.1, 0.7)})
    rows["teacher"] = rows["annotation"].map(report.teacher_name)
    text = s2.kd_findings(rows, "pneu")
    assert "No XS +0.900" in text and "KD (10% teacher) +0.050" in text
    assert text.endswith("(by more than 0.02): KD (10% teacher).")
    assert len(s2.plot_kd(rows, "pneu", "t").axes) == 2


def test_teacher_rows_name_the_data_set_and_the_teacher():
    index = pd.MultiIndex.from_tuples([("pneu", "teacher_10"), ("knee", Annotation.TEACHER_1)],
                                      names=["experiment", "teacher"])
    rows = s2.teacher_rows(index)
    assert list(rows) == [("PNEU", "10% teacher"), ("KNEE", "1% teacher")]
    assert list(rows.names) == ["data", "teacher"]


def test_a_setting2_page_names_the_data_sets_its_profile_leaves_out():
    assert s2.datasets_left_out("quick", ["pneu"]) == [
        "KNEE (its Setting-2 claims are judged on PNEU; the paper profile runs both)"]
    assert s2.datasets_left_out("paper", ["pneu", "knee"]) == []


def test_the_setting2_pages_closing_lines_name_what_the_quick_profile_leaves_out():
    from tapkit.experiments import protocols

    t = protocols.medical_teachers("quick")
    quick = t.on_seeds(protocols.medical("quick")), t  # Setting 2 on the teachers' seeds
    teachers = s2.teachers_left_out("quick", *quick, ["pneu"])
    assert teachers.startswith("Run `make book PROFILE=paper` with the data for everything. "
                               "This profile leaves out: the real PNEU and KNEE images")
    for clause in ("KNEE (its Setting-2 claims", "the students VGG-16", "students at τ [0.05, 0.1]",
                   "RRR and RBR with teacher masks", "1 seed instead of the paper's five"):
        assert clause in teachers
    kd = s2.kd_left_out("quick", *quick, ["pneu"])
    assert "KD, AT and JT with the 1% teacher" in kd and "JT students" in kd
    assert "here λ = 1 for KD and AT, without a search" in kd
    # the paper profile on the real folders leaves nothing out
    paper = protocols.medical("paper"), protocols.medical_teachers("paper")
    assert s2.teachers_left_out("paper", *paper, ["pneu", "knee"]).endswith("leaves out: nothing.")
    assert s2.kd_left_out("paper", *paper, ["pneu", "knee"]).endswith("leaves out: nothing.")


def _runs(experiment: str, cells: dict) -> pd.DataFrame:
    """One run per cell of :func:`summary`'s ``cells`` (seed 0), with a constant's F-score 2/3."""
    return pd.DataFrame([{"experiment": experiment, "model": m, "method": me, "annotation": a,
                          "tau": t, "seed": 0, "status": "ok", "val_constant": 2 / 3,
                          "contaminated": c, "permuted": p, "clean": cl}
                         for (m, me, a, t), (c, p, cl) in cells.items()])


def _collapsed_kd() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A distillation summary and its runs where KD's student predicts a constant (F1 0.667 both
    ways), AT's and No XS's learned the task; the runs' annotation as the configs record it
    (run_many's frame)."""
    cells = {("resnet18", "kd", Annotation.TEACHER_10, NAN): (0.667, 0.667, 0.667),
             ("resnet18", "at", Annotation.TEACHER_10, NAN): (0.95, 0.90, 0.9),
             ("resnet18", "none", Annotation.NONE, NAN): (1.0, 0.1, 0.7)}
    rows, runs = summary("pneu", cells), _runs("pneu", cells)
    for frame in (rows, runs):
        frame["teacher"] = frame["annotation"].map(report.teacher_name)
    runs["annotation"] = runs["annotation"].map(
        {Annotation.TEACHER_10: "teacher", Annotation.NONE: "ground_truth"})
    return rows, runs


def test_a_collapsed_student_is_named_and_never_counted_as_less_reliant():
    # KD's student loses nothing when the tags are permuted, which the summary's numbers alone
    # would count as "clearly less reliant"
    rows, runs = _collapsed_kd()
    assert s2.kd_findings(rows, "pneu").endswith("KD (10% teacher), AT (10% teacher).")
    text = s2.kd_findings(rows, "pneu", runs)
    assert "KD (10% teacher) (did not learn the task), AT (10% teacher) +0.050" in text
    assert text.endswith("(by more than 0.02): AT (10% teacher).")
    # the Setting-2 page: the 10% teacher's TAP student collapsed, the 1% teacher's did not
    ts = {**CELLS, ("resnet18", "tap", Annotation.TEACHER_10, 0.01): (0.667, 0.667, 0.667)}
    text = s2.ts_findings(summary("pneu", ts), "pneu", runs=_runs("pneu", ts))
    assert "10% teacher τ=0.01 (did not learn the task), 1% teacher τ=0.01 +0.550" in text
    assert "with the 10% teacher" not in text and "1% teacher's masks in 0 of 1" in text


def test_a_collapsed_students_bar_says_so_and_the_constant_is_drawn():
    rows, runs = _collapsed_kd()
    fig = s2.plot_kd(rows, "pneu", "t", runs, 2 / 3)
    marked = [t.get_text() for t in fig.axes[1].texts]
    assert marked == ["did not learn\nthe task"]  # KD's only: AT and No XS learned the task
    assert any(abs(line.get_ydata()[0] - 2 / 3) < 1e-9 for line in fig.axes[0].get_lines())
    assert len(s2.plot_kd(rows, "pneu", "t").axes[1].texts) == 0  # without runs: nothing marked
    ts = {**CELLS, ("resnet18", "tap", Annotation.TEACHER_10, 0.01): (0.667, 0.667, 0.667)}
    fig = s2.plot_ts(summary("pneu", ts), "pneu", "t", _runs("pneu", ts))
    assert [t.get_text() for t in fig.axes[1].texts] == ["did not learn\nthe task"]


def test_the_teachers_table_pivots_mean_and_std_and_counts_each_teachers_images():
    """Two PNEU teachers over two seeds: each split's mean (std) from the per-run scores, the
    teachers in the protocol's fraction order whatever the runs' order, by their names, with
    the clean images each trained on."""
    runs = pd.DataFrame({
        "experiment": ["pneu"] * 4, "teacher": ["teacher_1", "teacher_1", "teacher_10", "teacher_10"],
        "seed": [0, 1, 0, 1], "status": ["ok"] * 4, "metric": ["f1"] * 4, "images": [6, 6, 60, 60],
        "contaminated": [0.6, 0.8, 0.9, 0.9], "permuted": [0.5, 0.7, 0.8, 1.0],
        "clean": [0.7, 0.7, 0.9, 0.7]})
    perf = report.summarise(runs, ["experiment", "teacher"])
    table = s2.teacher_table(perf, runs, ["pneu"], [0.1, 0.01])
    assert list(table.index) == [("PNEU", "10% teacher"), ("PNEU", "1% teacher")]
    assert list(table.columns) == ["contaminated", "permuted", "clean", "clean training images"]
    assert table.loc[("PNEU", "10% teacher"), "permuted"] == "0.900 (0.141)"  # std of 0.8, 1.0
    assert table.loc[("PNEU", "1% teacher"), "contaminated"] == "0.700 (0.141)"
    assert table.loc[("PNEU", "10% teacher"), "clean training images"] == 60
    assert "PNEU" in s2.paper_teachers_text() and "KNEE" in s2.paper_teachers_text()

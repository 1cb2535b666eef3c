"""One labelled-run type (:class:`tapkit.experiments.cells.Cell`) for every plan, its typed
annotation and τ, and the configs the plans make: the same as configs built directly from the
protocols, for every chapter of the quick and paper profiles."""

import dataclasses
from dataclasses import replace
import math

import pandas as pd
import pytest

from tapkit import results, teachers
from tapkit.book import medical_setting2 as s2
from tapkit.book import mnist_setting2, report
from tapkit.experiments import chapter_plans, medical_plans, plans, protocols, setting1
from tapkit.experiments import setting2_plans as s2p
from tapkit.experiments.cells import Annotation, Cell, from_record, tau_text, to_record

from test_protocols import _medical_fixture, _no_training

# ----------------------------------------------------------------------------- the configs


def _mnist_teacher(p, fraction, seed):
    """The teacher of ``fraction``, for the protocol's teacher epochs (None: the students')."""
    cfg = teachers.teacher_config(p.config(seed=seed), fraction)
    epochs = protocols.mnist_teachers(p.name).teacher_epochs
    return cfg if epochs is None else cfg.replace(epochs=epochs)


def _mnist_expected(chapter: str, p, root) -> list:
    """The MNIST chapters' configs built from the protocols and the config builders."""
    t = protocols.mnist_teachers(p.name)
    if chapter == "lambda_search":
        return plans.search_configs(p)
    if chapter == "mnist":
        return plans.mnist_configs(p, setting1.cases(), plans.mnist_lambdas(root))
    tl = {**protocols.MNIST_TEACHER_LAMBDAS, **protocols.MNIST_KD_LAMBDAS}
    if t.lambda_source is protocols.LambdaSource.SEARCHED:  # quick: TAP at Setting 1's search's λ
        tl.update({m: plans.mnist_lambdas(root)[m] for m in p.search})
    if chapter == "distillation":
        out = [teachers.with_teacher(p.config(method="tap", lam=tl["tap"], seed=seed),
                                     _mnist_teacher(p, f, seed), annotation="teacher", tau=0.01,
                                     threshold=s2p.threshold_rule(t))
               for f in t.fractions for seed in p.seeds]
        out += [teachers.with_teacher(p.config(seed=seed), _mnist_teacher(p, f, seed), method=m,
                                      lam=tl[m], options=p.options_for(m))
                for f in t.kd_fractions for m in chapter_plans.KD_METHODS for seed in p.seeds]
        return out + [p.config(method="none", seed=seed) for seed in p.seeds]
    gt = plans.mnist_lambdas(root)
    out = [_mnist_teacher(p, f, seed) for f in t.fractions for seed in p.seeds]
    for method in t.xs_methods:
        fractions = t.fractions if method == "tap" else t.fractions[:1]
        for seed in p.seeds:
            base = p.config(method=method, lam=tl[method], seed=seed)
            out += [teachers.with_teacher(base, _mnist_teacher(p, f, seed), annotation="teacher",
                                          tau=tau, threshold=s2p.threshold_rule(t))
                    for f in fractions for tau in t.train_taus]
            out.append(base.replace(annotation="random"))  # the patch's coverage, any τ
            out.append(p.config(method=method, lam=gt[method], seed=seed))  # Setting 1's
    return out + [p.config(method="none", seed=seed) for seed in p.seeds]


def _setting1(p, root, experiment, models, cases, artifact) -> list:
    """A medical Setting-1 table's λ search and runs (the search's choice read from ``root``)."""
    out = [setting1.case_config(p, experiment, m, x, float(lam), p.seeds[0], artifact)
           for m in models for x in ("rrr", "rbr", "tap") if x in cases
           if not setting1.why_not_run(p, experiment, m, x) for lam in p.grid(x, m, experiment)]
    chosen = medical_plans.searched_lambdas(root, experiment, artifact)
    for m in models:
        lams = {**medical_plans.paper_lambdas(experiment, m, artifact), **chosen.get(m, {})}
        out += [setting1.case_config(p, experiment, m, c,
                                          lams.get(c) if c in ("rrr", "rbr", "tap") else 0.0,
                                          seed, artifact)
                for c in cases if not setting1.why_not_run(p, experiment, m, c)
                # the quick profile: Base on the first seed(s) only
                for seed in p.seeds_on(m, experiment)
                if seed in p.seeds_for(c, m, experiment)]
    return out


def _students(p, t, root, e, coverage) -> list:
    """Setting 2's teachers and students of ``e`` on PNEU/KNEE."""
    teacher = {(f, seed): s2p.teacher_config(p, t, e, f, seed) for f in t.fractions for seed in p.seeds}
    out = list(teacher.values())
    for model in t.models:
        lams = s2p.student_lambdas(p, t, root, e, model)
        gt = s2p.setting1_lambdas(root, e, model)
        xs = [m for m in t.xs_methods if not setting1.why_not_run(p, e, model, m)]
        for m in xs:
            for tau in t.train_taus:
                for seed in p.seeds:
                    cfg = setting1.case_config(p, e, model, m, lams[m], seed)
                    out += [teachers.with_teacher(cfg, teacher[f, seed], annotation="teacher",
                                                  tau=tau, threshold=s2p.threshold_rule(t)) for f in t.fractions]
                    out.append(cfg.replace(annotation="random",
                                           random_coverage=round(coverage[tau], 6)))
        for seed in p.seeds:
            out.append(setting1.case_config(p, e, model, "none", 0.0, seed))
            out += [setting1.case_config(p, e, model, m, gt[m], seed) for m in xs]
    return out


def _kd_students(p, t, root, e) -> list:
    """The medical distillation table's students of ``e``."""
    out = []
    for model in t.kd_models:
        lams = s2p.student_lambdas(p, t, root, e, model)
        for seed in p.seeds:
            none = setting1.case_config(p, e, model, "none", 0.0, seed)
            taught = {f: s2p.teacher_config(p, t, e, f, seed) for f in t.kd_fractions}
            if not setting1.why_not_run(p, e, model, "tap"):
                tap = setting1.case_config(p, e, model, "tap", lams["tap"], seed)
                out += [teachers.with_teacher(tap, taught[f], annotation="teacher", tau=0.01,
                                              threshold=s2p.threshold_rule(t)) for f in t.kd_fractions]
            out += [teachers.with_teacher(none, taught[f], method=m, lam=lams[m],
                                          options=p.options_for(m))
                    for f in t.kd_fractions for m in t.kd_methods]
            out.append(none)
    return out


def expected(chapter: str, profile: str, root, source: str) -> list:
    """The configs of ``chapter`` built directly from its protocol (the plans' cells left out)."""
    if chapter in chapter_plans.MNIST_CHAPTERS:
        return _mnist_expected(chapter, chapter_plans.protocol_for(chapter, profile), root)
    p = chapter_plans.protocol_for(chapter, profile, source=source)
    t = protocols.medical_teachers(profile)
    if chapter in ("pneu", "knee"):
        out = _setting1(p, root, chapter, medical_plans.ARCHITECTURES, setting1.cases(), "tag")
        stripes = protocols.per_experiment(p.stripe_models, chapter)
        # the stripe appendix: its own cases, on the first stripe_seeds seeds
        sp = replace(p, seeds=p.seeds[:p.stripe_seeds or len(p.seeds)])
        cases = [c for c in setting1.cases() if c in (p.stripe_cases or setting1.cases())]
        return out + (_setting1(sp, root, chapter, stripes, cases, "stripe") if stripes else [])
    if chapter == "extra_architectures":
        return [c for e in medical_plans.DATASETS
                for c in _setting1(p, root, e, medical_plans.EXTRA_ARCHITECTURES,
                                   chapter_plans.EXTRA_CASES, "tag")]
    if chapter == "medical_teachers":  # Setting 2's data sets (quick: PNEU only)
        return [c for e in t.datasets(p)
                for c in _students(p, t, root, e, dict.fromkeys(t.train_taus, 0.3))]
    return [c for e in t.datasets(p) for c in _kd_students(p, t, root, e)]


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_every_chapter_plans_the_configs_its_protocol_makes(profile, tmp_path):
    """Each chapter's plan (as its notebook and the sweep call it, with made-up λ searches) and
    the configs built from its protocol, compared right after it (a later chapter's search may
    rewrite the choice the earlier read)."""
    source = "embedded" if profile != "paper" else _medical_fixture(tmp_path)
    for chapter in chapter_plans.PLANS:
        medical_chapter = chapter not in chapter_plans.MNIST_CHAPTERS
        p = chapter_plans.protocol_for(chapter, profile,
                                       **({"source": source} if medical_chapter else {}))
        options = ({"coverage": dict.fromkeys(medical_plans.DATASETS, dict.fromkeys(
            protocols.medical_teachers(profile).train_taus, 0.3))}
                   if chapter == "medical_teachers" else {})
        cfgs = chapter_plans.configs(chapter_plans.planned(chapter, p, tmp_path, _no_training,
                                                           **options))
        want = expected(chapter, profile, tmp_path, source)
        assert cfgs and want, chapter
        assert {c.key() for c in cfgs} == {c.key() for c in want}, chapter


# ----------------------------------------------------------------------------- the labels

def test_every_plan_is_cells_with_an_annotation_and_a_numeric_tau(tmp_path):
    p = chapter_plans.protocol_for("teachers", "quick")
    cells = chapter_plans.PLANS["teachers"](p, tmp_path)
    assert all(isinstance(c, Cell) and isinstance(c.annotation, Annotation) for c in cells)
    students = chapter_plans.part(cells, "mnist_teacher")
    assert {c.tau for c in students if c.annotation.is_teacher} == {0.01}
    assert {c.tau for c in students if not c.annotation.is_teacher} == {None}
    assert {c.tau for c in chapter_plans.part(cells, "teacher_performance")} == {None}
    assert not any(hasattr(c, "case") for c in cells)


def test_medical_plans_and_students_are_cells(tmp_path):
    t = protocols.medical_teachers("quick")
    p = t.on_seeds(protocols.medical("quick"))  # one seed, as Setting 2 trains
    runs = medical_plans.medical_runs(p, "pneu", ["resnet18"], ["base", "none", "tap"])
    assert all(isinstance(r, Cell) for r in runs)
    assert [(r.method, r.annotation, r.tau) for r in runs[:3]] == [
        ("base", Annotation.NONE, None), ("none", Annotation.NONE, None),
        ("tap", Annotation.GROUND_TRUTH, None)]
    assert runs[0].cfg.method == "none" and runs[0].cfg.data == "clean"
    students = s2p.xs_students(p, t, "pneu", "resnet18", {"tap": 1e-3}, {0.01: 0.2})
    assert [(s.annotation, s.tau) for s in students] == [
        (Annotation.TEACHER_10, 0.01), (Annotation.TEACHER_1, 0.01), (Annotation.RANDOM, 0.01)]
    assert all(isinstance(s, Cell) for s in students)
    assert not hasattr(medical_plans, "Run") and not hasattr(s2p, "Student")


def test_annotation_names_the_papers_teachers_and_no_other():
    assert Annotation.of_teacher(0.1) is Annotation.TEACHER_10
    assert Annotation.of_teacher(0.01) is Annotation.TEACHER_1
    assert s2p.annotator(0.1) == "teacher_10" and f"{Annotation.RANDOM}" == "random"
    with pytest.raises(ValueError, match="no teacher annotation"):
        Annotation.of_teacher(0.05)


def test_a_tables_annotation_and_tau_survive_its_csv(tmp_path):
    frame = pd.DataFrame({"method": ["tap", "tap", "none"],
                          "annotation": [Annotation.TEACHER_1, Annotation.RANDOM, Annotation.NONE],
                          "tau": [0.01, 0.05, None], "mean": [0.9, 0.8, 0.7]})
    path = results.write_table(to_record(frame), tmp_path, "t")
    back = from_record(pd.read_csv(path))
    assert list(back.annotation) == list(frame.annotation)
    assert all(type(a) is Annotation for a in back.annotation)
    assert back.tau.dtype == float and back.tau[:2].tolist() == [0.01, 0.05]
    assert math.isnan(back.tau[2])
    assert path.read_text().splitlines()[1] == "tap,teacher_1,0.01,0.9"


def test_reading_a_legacy_any_gives_nan_and_pages_print_any():
    back = from_record(pd.DataFrame({"annotation": ["ground_truth"], "tau": ["any"]}))
    assert back.annotation[0] is Annotation.GROUND_TRUTH and math.isnan(back.tau[0])
    assert [tau_text(x) for x in (0.01, None, math.nan, "any")] == ["0.01", "any", "any", "any"]


def test_the_report_writes_and_reads_cells_typed(tmp_path):
    frame = pd.DataFrame({"annotation": [Annotation.TEACHER_10], "tau": [0.1]})
    back = report.read_cells(report.write_cells(frame, tmp_path, "cells"))
    assert back.annotation[0] is Annotation.TEACHER_10 and back.tau[0] == 0.1


def test_summaries_keep_the_runs_without_a_tau():
    runs = pd.DataFrame({"annotation": [Annotation.TEACHER_1, Annotation.NONE], "tau": [0.01, None],
                         "metric": "accuracy", "status": "ok", "seed": 0,
                         "contaminated": [0.9, 0.8], "permuted": [0.9, 0.5], "clean": [0.9, 0.9]})
    summary = report.summarise(runs, ["annotation", "tau"])
    assert len(summary) == 6 and summary.tau.isna().sum() == 3


def test_mnist_setting2_table_prints_tau_any_where_none_applies():
    cells = chapter_plans.PLANS["teachers"](chapter_plans.protocol_for("teachers", "quick"), "/nonexistent")
    tap = chapter_plans.part(cells, "mnist_teacher")
    runs = pd.DataFrame({"metric": "accuracy", "status": "ok", "seed": 0, "contaminated": 0.9,
                         "permuted": 0.8, "clean": 0.9}, index=range(len(tap))).assign(
        **chapter_plans.columns(tap, "method", "annotation", "tau"))
    summary = report.summarise(runs, ["method", "annotation", "tau"])
    table = mnist_setting2.ours_with_paper(summary, "tap", (0.01,), s2p.teacher_cases(
        protocols.mnist_teachers("quick")))
    assert list(table.index) == [("teacher_10", "0.01"), ("teacher_1", "0.01"), ("random", "0.01"),
                                 ("ground_truth", "any"), ("none", "any")]
    assert table.loc[("ground_truth", "any"), "permuted (paper)"] != "–"
    assert list(mnist_setting2.bar_labels(summary, s2p.teacher_cases(
        protocols.mnist_teachers("quick"))).index) == [
        "teacher_10\nτ=0.01", "teacher_1\nτ=0.01", "random", "ground_truth", "none"]


def test_medical_results_table_prints_annotation_names_and_tau():
    rows = [{"experiment": "pneu", "model": "resnet18", "method": "tap", "annotation": a,
             "tau": tau, "split": sp, "mean": 0.9, "std": 0.0}
            for a, tau in ((Annotation.TEACHER_10, 0.01), (Annotation.GROUND_TRUTH, math.nan))
            for sp in report.SPLITS]
    table = s2.results_table(pd.DataFrame(rows), "pneu")
    assert list(table.index) == [("ResNet-18", "TAP", "10% teacher", "0.01"),
                                 ("ResNet-18", "TAP", "ground truth", "any")]


def test_cells_are_frozen_and_convert_their_labels():
    cell = Cell(plans.mnist_case_config(protocols.mnist("quick"), "none", {}, 0), "t",
                annotation="random", tau=1)
    assert cell.annotation is Annotation.RANDOM and cell.tau == 1.0 and type(cell.tau) is float
    with pytest.raises(dataclasses.FrozenInstanceError):
        cell.tau = 0.5  # type: ignore[misc]

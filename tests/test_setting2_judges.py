"""The judges of Setting 2's per-architecture, τ, RRR/RBR-with-masks and KNEE distillation claims,
run on the paper's own tables (``tests/paper_summaries.py``): the paper's evidence must reproduce
the paper's claims, or the judge says which of the paper's own intervals cannot decide; and each
judge fails when the numbers say the opposite."""

import numpy as np
import pandas as pd
import pytest

from tapkit.book import claim_table, claims
from tapkit.book.comparator_masks import unstable_on_random_claim, worse_than_tap_claim
from tapkit.book.distillation_claims import (best_and_least_reliant_claim, best_but_relies_claim,
                                             poor_students_claim)
from tapkit.book.medical_claims import partly_reduces_claim
from tapkit.book.origin import DataOrigin
from tapkit.book.report import write_table
from tapkit.book.teacher_students import (fails_to_train_claim, only_model_keeps_claim,
                                          seemingly_good_claim, tau_sensitivity_claim)

from paper_summaries import META, mnist_kd, quality, setting1_runs, summary

TREND = ("densenet121", "vgg16")


@pytest.fixture
def teacher():
    return summary("teacher_results")


@pytest.fixture
def kd():
    return summary("kd_results", "teacher")


@pytest.fixture
def extra():
    return summary("teacher_xs_extra")


def _set(frame, mask, split, value):
    out = frame.copy()
    out.loc[mask & (out["split"] == split), "mean"] = value
    return out


def test_raising_tau_raises_the_sensitivity_on_the_papers_numbers_and_not_when_reversed(teacher):
    c = tau_sensitivity_claim(teacher, META, "knee", TREND, quality=quality())
    # KNEE DenseNet-121 10%: Δ-MAE 0.161 → 0.474; the difference 0.313 with std
    # √(0.075² + 0.043² + 0.110² + 0.098²) = 0.1716 over 5 seeds: ± 2.776 · 0.1716 / √5 = 0.213
    assert c.verdict == claims.REPRODUCED
    assert "DenseNet-121 10% teacher: +0.161 → +0.299 → +0.474" in c.evidence
    assert "0.313 [0.100, 0.526]" in c.evidence or "0.313 [0.101, 0.525]" in c.evidence
    assert tau_sensitivity_claim(teacher, META, "pneu", TREND, quality=quality()).verdict == \
        claims.REPRODUCED  # PNEU's smallest rise, VGG-16 1%: 0.037 [0.016, 0.058]
    reversed_ = teacher.assign(tau=teacher["tau"].map({0.01: 0.1, 0.1: 0.01, 0.05: 0.05}))
    assert tau_sensitivity_claim(reversed_, META, "knee", TREND,
                                 quality=quality()).verdict == claims.NOT_REPRODUCED
    # one τ: not run; VGG-16 never trained: not run, whatever DenseNet-121 shows
    one = teacher[teacher["tau"].isna() | (teacher["tau"] == 0.01)]
    assert tau_sensitivity_claim(one, META, "knee", TREND).verdict == claims.NOT_RUN
    no_vgg = teacher[teacher["model"] != "vgg16"]
    c = tau_sensitivity_claim(no_vgg, META, "knee", TREND, quality=quality())
    assert c.verdict == claims.NOT_RUN and "VGG-16: not run here" in c.reason
    # masks no better than random: not testable
    weak = tau_sensitivity_claim(teacher, META, "knee", TREND, quality=quality(lift=1.0))
    assert weak.verdict == claims.NOT_TESTABLE and "no better than random" in weak.reason


def test_a_student_that_learned_nothing_is_left_out_of_the_tau_trend(teacher):
    # ResNet-18 on KNEE predicts a constant at τ 0.05 and 0.1 (MAE 1.245 against 1.2): named,
    # not judged; with ResNet-18 alone nothing is left to judge
    c = tau_sensitivity_claim(teacher, META, "knee", ("resnet18",), quality=quality())
    assert c.verdict == claims.NOT_TESTABLE
    assert "ResNet-18 10% teacher: left out" in c.evidence and "did not learn the task" in c.reason


def test_only_densenet_keeps_good_performance_on_knee(teacher):
    c = only_model_keeps_claim(teacher, META, "knee", "densenet121", quality=quality())
    # 0.889 − 0.758 = 0.131, std √(0.043² + 0.063²) = 0.0763: ± 2.776 · 0.0763 / √5 = 0.095
    assert c.verdict == claims.REPRODUCED
    assert "better than VGG-16's by 0.131 [0.036, 0.226]" in c.evidence
    vgg = (teacher["model"] == "vgg16") & (teacher["tau"] == 0.01)
    c = only_model_keeps_claim(_set(teacher, vgg, "permuted", 0.5), META, "knee", "densenet121",
                               quality=quality())
    assert c.verdict == claims.NOT_REPRODUCED
    # DenseNet-121 without any sensitivity: the claim's "some contamination sensitivity" fails
    dn = (teacher["model"] == "densenet121") & (teacher["tau"] == 0.01)
    flat = teacher.copy()  # reliance 0 ± 2.776 · 0.007 / √5 = 0.009, below 0.02
    flat.loc[dn & (flat["split"] == "contaminated"), "mean"] = flat.loc[
        dn & (flat["split"] == "permuted"), "mean"].to_numpy()
    flat.loc[dn & flat["split"].isin(["contaminated", "permuted"]), "std"] = 0.005
    assert only_model_keeps_claim(flat, META, "knee", "densenet121",
                                  quality=quality()).verdict == claims.NOT_REPRODUCED


def test_vgg_looks_good_on_the_tag_and_resnet_trains_badly_against_setting1_base(teacher):
    base = setting1_runs("knee")
    c = seemingly_good_claim(teacher, META, "knee", "vgg16", quality=quality(), setting1=base)
    # Base's clean 0.486 against VGG-16's contaminated 0.198: −0.288, within 0.1
    assert c.verdict == claims.REPRODUCED and "by -0.288 [" in c.evidence
    vgg = teacher["model"] == "vgg16"
    honest = _set(teacher, vgg, "contaminated", 0.889)  # no tag used: nothing "seemingly" low
    assert seemingly_good_claim(honest, META, "knee", "vgg16", quality=quality(),
                                setting1=base).verdict == claims.NOT_REPRODUCED
    c = seemingly_good_claim(teacher, META, "knee", "vgg16", quality=quality())
    assert c.verdict == claims.INCONCLUSIVE and "no Setting 1 Base run" in c.evidence
    # ResNet-18: 1.000 against Base's 0.597 holds at every τ; its τ-0.01 reliance 0.009
    # [−0.313, 0.331] (the paper's stds 0.191 and 0.175) cannot tell "low" from 0.1
    c = fails_to_train_claim(teacher, META, "knee", "resnet18", quality=quality(), setting1=base)
    assert c.verdict == claims.INCONCLUSIVE
    assert c.reason == ("low reliance inconclusive on ResNet-18 10% teacher τ 0.01, ResNet-18 1% "
                        "teacher τ 0.01")
    trained = teacher[teacher["tau"].isna() | (teacher["tau"] > 0.01)]
    assert fails_to_train_claim(trained, META, "knee", "resnet18", quality=quality(),
                                setting1=base).verdict == claims.REPRODUCED
    good = _set(trained, trained["model"] == "resnet18", "contaminated", 0.6)
    assert fails_to_train_claim(good, META, "knee", "resnet18", quality=quality(),
                                setting1=base).verdict == claims.NOT_REPRODUCED


def test_rrr_and_rbr_work_less_well_than_tap_with_teacher_masks(extra):
    c = worse_than_tap_claim(extra, META, "rrr", "rbr", quality=quality())
    assert c.verdict == claims.REPRODUCED
    assert "PNEU DenseNet-121 τ 0.1, RBR: 3 runs did not converge — reproduced" in c.evidence
    # the comparators scoring 0.1 better than TAP wherever they converged: not reproduced
    better = extra.copy()
    tap = better["method"] == "tap"
    for m in ("rrr", "rbr"):
        for split in ("contaminated", "permuted"):
            for _, r in better[tap & (better["split"] == split)].iterrows():
                at = ((better["method"] == m) & (better["experiment"] == r.experiment)
                      & (better["model"] == r.model) & (better["tau"] == r.tau)
                      & (better["annotation"] == r.annotation) & (better["split"] == split))
                sign = 1 if r.experiment == "pneu" else -1
                better.loc[at, ["mean", "std", "dnc_runs"]] = (r["mean"] + sign * 0.1, r["std"], 0)
    assert worse_than_tap_claim(better, META, "rrr", "rbr",
                                quality=quality()).verdict == claims.NOT_REPRODUCED


def test_rrr_and_rbr_with_random_masks_fail_to_converge_most_at_the_larger_tau(extra):
    c = unstable_on_random_claim(extra, META, "rrr", "rbr")
    # τ 0.01: RRR 2 + 1, RBR 2 + 1 + 3 (a DNC cell: 3 of 5); τ 0.1: RRR 2, RBR 3 + 3 · 3
    assert c.verdict == claims.REPRODUCED
    assert "τ 0.01: RRR 3 of 30 runs, RBR 6 of 30 runs, TAP 0 of 30 runs" in c.evidence
    assert "(RRR and RBR: 23, TAP: 0)" in c.evidence
    calm = extra.assign(dnc_runs=0, dnc=False)
    assert unstable_on_random_claim(calm, META, "rrr", "rbr").verdict == claims.NOT_REPRODUCED
    fewer_later = extra.assign(tau=extra["tau"].map({0.01: 0.1, 0.1: 0.01}))
    assert unstable_on_random_claim(fewer_later, META, "rrr",
                                    "rbr").verdict == claims.NOT_REPRODUCED
    one = unstable_on_random_claim(extra[extra["tau"] != 0.1], META, "rrr", "rbr")
    assert one.verdict == claims.NOT_RUN and "a second τ" in one.reason


def test_kd_and_jt_score_badly_on_knee_against_setting1_base(kd):
    base = setting1_runs("knee")
    c = poor_students_claim(kd, META, "knee", "kd", "jt", quality=quality(), setting1=base)
    assert c.verdict == claims.REPRODUCED
    assert "ResNet-18 KD, the 10% teacher: 1.039, behind Base's clean 0.597 by" in c.evidence
    students = kd["method"].isin(["kd", "jt"])
    good = _set(kd, students, "permuted", 0.6)
    assert poor_students_claim(good, META, "knee", "kd", "jt", quality=quality(),
                               setting1=base).verdict == claims.NOT_REPRODUCED
    c = poor_students_claim(kd[kd["method"] != "jt"], META, "knee", "kd", "jt", setting1=base)
    assert c.verdict == claims.NOT_RUN and "JT: not run here" in c.reason


def test_at_best_but_reliant_on_resnet18_and_tap_best_elsewhere(kd):
    c = best_but_relies_claim(kd, META, "knee", "resnet18", "at", "tap", quality=quality())
    # 10% teacher: AT's reliance 0.354 above TAP's 0.009 by 0.345, std √(0.055² + 0.021² +
    # 0.191² + 0.175²) = 0.2656: ± 2.776 · 0.2656 / √5 = 0.330, so [0.015, 0.675] reaches below
    # 0.02; the 1% teacher's [0.034, 0.730] does not
    assert c.verdict == claims.INCONCLUSIVE
    assert "above TAP's by 0.345 [0.015, 0.675]" in c.evidence
    at = (kd["method"] == "at") & (kd["model"] == "resnet18")
    assert best_but_relies_claim(_set(kd, at, "permuted", 1.5), META, "knee", "resnet18", "at",
                                 "tap", quality=quality()).verdict == claims.NOT_REPRODUCED
    c = best_and_least_reliant_claim(kd, META, "knee", ("resnet18",), "tap", "kd", "at", "jt",
                                     quality=quality())
    assert c.verdict == claims.REPRODUCED and "ResNet-18" not in c.evidence
    assert "KD did not learn the task" in c.evidence  # KNEE KD 0.996: a constant's 1.2 nearly
    tap = kd["method"] == "tap"
    assert best_and_least_reliant_claim(_set(kd, tap, "permuted", 1.5), META, "knee",
                                        ("resnet18",), "tap", "kd", "at", "jt",
                                        quality=quality()).verdict == claims.NOT_REPRODUCED


def _effnet_runs(rbr: float) -> pd.DataFrame:
    """EfficientNet-B0 on KNEE, three seeds: No XS reliance 1.5 (MAE 0.1 → 1.6), RBR's ``rbr``,
    Base clean 0.55 (RBR's 0.56)."""
    rows = []
    for seed, e in enumerate((-0.02, 0.0, 0.02)):
        for case, (c, p, clean) in {"base": (0.55, 0.55, 0.55), "none": (0.1, 1.6, 0.9),
                                    "rbr": (0.5, 0.5 + rbr, 0.56)}.items():
            rows.append({"model": "efficientnet_b0", "case": case, "seed": seed, "status": "ok",
                         "contaminated": c + e * (case == "none"),
                         "permuted": p + e * (case == "none"), "clean": clean + e,
                         "val_constant": 1.2})
    return pd.DataFrame(rows)


def test_rbr_partly_reduces_the_reliance_and_matches_base():
    data, origins = {"knee": "KNEE"}, {"knee": DataOrigin.PAPER}
    c = partly_reduces_claim({"knee": _effnet_runs(0.4)}, data, origins, "rbr")
    # RBR's reliance 0.4 on every seed, No XS's 1.5: No XS − RBR 1.1; Base's clean 0.01 ahead
    assert c.verdict == claims.REPRODUCED and "paired No XS − RBR 1.100" in c.evidence
    gone = partly_reduces_claim({"knee": _effnet_runs(0.0)}, data, origins, "rbr")
    assert gone.verdict == claims.NOT_REPRODUCED and "not to nothing" in gone.reason
    kept = partly_reduces_claim({"knee": _effnet_runs(1.5)}, data, origins, "rbr")
    assert kept.verdict == claims.NOT_REPRODUCED and "reduces" in kept.reason


def test_the_report_judges_every_setting2_claim_on_the_papers_tables(tmp_path, teacher, kd,
                                                                       extra):
    # the paper's tables written as one build's: no claim of the paper is left without a judge
    keys = ["experiment", "model", "method", "annotation", "tau", "split"]
    students = pd.concat([teacher, extra]).drop_duplicates(keys)
    meta = {**META, "origin": "paper"}
    write_table(students, tmp_path, "medical_teacher", meta)
    write_table(kd, tmp_path, "medical_kd", meta)
    write_table(quality(), tmp_path, "medical_annotation_quality", meta)
    for e in ("pneu", "knee"):
        write_table(setting1_runs(e), tmp_path, f"{e}_gt_runs", meta)
    write_table(_effnet_runs(0.4), tmp_path, "extra_knee_runs", meta)
    write_table(mnist_kd(), tmp_path, "mnist_kd", {"data": "MNIST"})
    table = claim_table.claims_table(tmp_path).set_index("id")
    judged = ["kd_mnist_at_jt_fail", "kd_mnist_matches_tap_10", "kd_mnist_1pct_drops",
              "tau_trend_pneu", "tau_trend_knee", "knee_densenet_teacher",
              "knee_vgg_teacher_spurious", "rrr_rbr_worse_with_teacher_masks",
              "rrr_rbr_dnc_random", "kd_knee_jt_kd_poor", "tap_best_knee_kd",
              "effnet_knee_rbr_partial"]
    assert (table.loc[judged, "verdict"] == claims.REPRODUCED).all(), table.loc[judged, "reason"]
    assert not table["reason"].str.contains("no judge reads this claim yet").any()
    # every Setting-2 and distillation claim judged on the paper's own numbers: reproduced, or
    # inconclusive where the paper's own stds (unpaired: a table keeps no seeds) cannot decide,
    # each with the cells that did not; never "not testable" for want of a learned student whose
    # failure is what the claim is about (the collapsed PNEU VGG-16 RRR, KNEE's JT and KD)
    undecided = {"teacher_pneu_works": "below No XS inconclusive on ResNet-18 10% teacher τ 0.05",
                 "teacher_10_vs_1": "DenseNet-121 inconclusive; ResNet-18 inconclusive",
                 "knee_resnet_teacher_fails": "low reliance inconclusive on ResNet-18 10% teacher",
                 "rrr_rbr_teacher_spurious_pneu": "DenseNet-121 RBR inconclusive",
                 "at_pneu_vs_tap": "DenseNet-121, the 10% teacher inconclusive",
                 "at_knee_resnet": "the 10% teacher inconclusive",
                 # KNEE ResNet-18's TAP did not learn the task, and AT may lead it there: the
                 # paper's "8 of 12" counts those cells against TAP, and so does the judge
                 "tap_beats_kd_at_jt": "holds in 6 of 12 cells, fails in 0"}
    for claim_id, reason in undecided.items():
        assert table.loc[claim_id, "verdict"] == claims.INCONCLUSIVE, claim_id
        assert table.loc[claim_id, "reason"].startswith(reason), claim_id
    setting2 = table[table["chapter"].isin(["medical_teachers", "medical_distillation"])
                     & (table["verdict"] != claims.NOT_RUN)]
    assert set(setting2.index) - set(undecided) == {
        "annotation_better_than_random", "tau_recall_precision", "teacher_1pct_annotations_close",
        "random_masks_fail", "tau_trend_knee", "tau_trend_pneu", "knee_densenet_teacher",
        "knee_vgg_teacher_spurious", "rrr_rbr_worse_with_teacher_masks",
        "rrr_rbr_teacher_spurious_knee", "rrr_rbr_dnc_random", "kd_pneu_jt_kd_fail",
        "kd_knee_jt_kd_poor", "tap_best_knee_kd"}
    assert (setting2.drop(list(undecided))["verdict"] == claims.REPRODUCED).all()
    assert np.isin(table.loc[judged, "chapter"], ["medical_teachers", "medical_distillation",
                                                  "extra_architectures", "distillation"]).all()

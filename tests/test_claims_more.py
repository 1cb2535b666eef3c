"""The report's judges of the paper's remaining MNIST and Table-1 claims, on hand-made tables
with hand-computed intervals (t_{0.975,2} = 4.3027: three seeds of spread s give a half-width of
4.3027 · s / √3 = 2.484 s)."""

import pandas as pd
import pytest

from tapkit.book import claims, cost_claims, mnist_claims, summary_claims
from tapkit.book.claim_specs import claims_table
from tapkit.book.report import write_table

from test_claims import runs_table

DECOYED = [(0.98, 0.90)] * 3  # No XS took the decoy in every seed (Δ −0.08)


def test_close_claim_reads_contaminated_accuracy_within_the_margin():
    # contaminated TAP − RRR: −0.005, 0, +0.005 -> 0.000 [−0.012, 0.012], inside ±0.02
    near = runs_table({"tap": [(0.965, 0.96), (0.97, 0.96), (0.975, 0.96)],
                       "rrr": [(0.97, 0.95)] * 3, "rbr": [(0.93, 0.95)], "none": DECOYED})
    assert mnist_claims.close_claim(near, "MNIST", "tap", "rrr").verdict == claims.REPRODUCED
    c = mnist_claims.close_claim(near, "MNIST", "tap", "rrr", "rbr")
    assert c.seeds == "3 seeds"
    assert "contaminated accuracy, TAP − RRR (paired): 0.000 [-0.012, 0.012]" in c.evidence
    # RBR trained one seed: shown (0.965 − 0.93), judges nothing, and the claim is about all
    # three losses: RRR's part alone cannot reproduce it
    assert "TAP − RBR (paired): 0.035 (1 seed, no interval)" in c.evidence
    assert "(not judged: RBR trained 1 seed)" in c.evidence
    assert c.verdict == claims.NOT_TESTABLE and c.reason == "RBR trained 1 seed"
    # "the spread among the three": RRR against RBR too (0.97 − 0.93 on RBR's one seed)
    assert c.evidence.endswith("contaminated accuracy, RRR − RBR (paired): 0.040 (1 seed, no "
                               "interval)")
    # RRR and RBR 0.03 apart on three seeds while TAP sits between them within 0.02 of each
    # (0.95 against 0.965 and 0.935): the comparators' spread fails the claim
    apart = runs_table({"tap": [(0.95, 0.96)] * 3, "rrr": [(0.965, 0.95)] * 3,
                        "rbr": [(0.935, 0.95)] * 3, "none": DECOYED})
    c = mnist_claims.close_claim(apart, "MNIST", "tap", "rrr", "rbr")
    assert c.verdict == claims.NOT_REPRODUCED
    assert c.reason == "RRR alike with RBR: not reproduced"
    # −0.04 on every seed: wholly outside the margin
    far = near.assign(contaminated=near.contaminated.where(near.case != "tap", 0.93))
    assert mnist_claims.close_claim(far, "MNIST", "tap", "rrr").verdict == claims.NOT_REPRODUCED
    # −0.01, −0.02, −0.03: mean −0.02, the interval [−0.045, 0.005] crosses −0.02
    loose = runs_table({"tap": [(0.96, 0.96), (0.95, 0.96), (0.94, 0.96)],
                        "rrr": [(0.97, 0.95)] * 3, "none": DECOYED})
    assert mnist_claims.close_claim(loose, "MNIST", "tap", "rrr").verdict == claims.INCONCLUSIVE
    # only one-seed comparators: not testable, with why
    alone = mnist_claims.close_claim(near, "MNIST", "tap", "rbr")
    assert alone.verdict == claims.NOT_TESTABLE and alone.reason == "RBR trained 1 seed"


@pytest.mark.parametrize("diffs,verdict", [
    ((0.01, 0.01, 0.01), claims.REPRODUCED),         # [0.010, 0.010] in [0, 0.02]
    ((0.005, 0.01, 0.015), claims.INCONCLUSIVE),     # 0.010 ± 0.0124 crosses 0
    ((-0.02, -0.02, -0.02), claims.NOT_REPRODUCED),  # TAP better than RRR: the other way
    ((0.04, 0.04, 0.04), claims.NOT_REPRODUCED),     # RRR far better: not "very closely"
])
def test_slightly_below_wants_rrr_ahead_by_zero_to_the_margin(diffs, verdict):
    runs = runs_table({"tap": [(0.97, 0.95)] * 3,
                       "rrr": [(0.97, 0.95 + d) for d in diffs], "none": DECOYED})
    c = mnist_claims.slightly_below_claim(runs, "MNIST", "tap", "rrr")
    assert c.verdict == verdict and "permuted accuracy, RRR − TAP (paired)" in c.evidence


def _ratios(tap_speed=1.0, rrr_speed=0.25, rrr_mem=2.0):
    rows = []
    for model in ("vgg16", "resnet18", "densenet121"):
        rows += [{"model": model, "method": "tap", "speed_ratio": tap_speed, "mem_ratio": 1.0},
                 {"model": model, "method": "rrr", "speed_ratio": rrr_speed,
                  "mem_ratio": rrr_mem}]
    rows.append({"model": "two_layer_cnn", "method": "tap", "speed_ratio": 0.1,
                 "mem_ratio": 9.0})  # context: decides nothing
    return pd.DataFrame(rows)


def test_cost_share_is_taps_time_and_memory_over_rrrs_on_table_1s_models():
    c = cost_claims.cost_share_claim(_ratios(), "cpu", "tap", "rrr")
    # time share 0.25 / 1.0, memory 1.0 / 2.0
    assert c.verdict == claims.REPRODUCED
    assert c.evidence.startswith("TAP ÷ RRR: time 0.25, memory 0.50 (means over DenseNet-121")
    # RRR as fast as 0.6 of No XS: TAP takes 0.6 of its time, over the 0.5 read of "circa 25%"
    assert cost_claims.cost_share_claim(_ratios(rrr_speed=0.6), "cpu", "tap",
                                   "rrr").verdict == claims.NOT_REPRODUCED
    # RRR's memory 1.2x No XS: TAP's share 0.83, over 0.8
    assert cost_claims.cost_share_claim(_ratios(rrr_mem=1.2), "cpu", "tap",
                                   "rrr").verdict == claims.NOT_REPRODUCED
    assert cost_claims.cost_share_claim(_ratios(), "cpu", "tap", "rbr").verdict == claims.NOT_RUN
    # "of RRR and RBR": RBR never timed leaves it not run, RRR's share shown
    c = cost_claims.cost_share_claim(_ratios(), "cpu", "tap", "rrr", "rbr")
    assert c.verdict == claims.NOT_RUN and c.reason == "RBR timing: not run here"
    assert c.evidence.startswith("TAP ÷ RRR: time 0.25")


def _meta(device="cuda: NVIDIA H100", batch=16, size=224, peak=12_000.0):
    return {"rows": [{"model": "densenet121", "method": "rbr", "device": device,
                      "batch_size": batch, "image_size": size, "peak_mem_mb": peak}]}


def test_oom_is_judged_only_on_a_gpu_at_the_papers_batch_and_size():
    assert cost_claims.oom_claim(_meta(), "gpu", "rbr").verdict == claims.REPRODUCED
    assert cost_claims.oom_claim(_meta(peak=9_000.0), "gpu", "rbr").verdict == claims.NOT_REPRODUCED
    cpu = cost_claims.oom_claim(_meta(device="cpu: x86_64, 1 threads", batch=4, size=64, peak=339.0),
                           "cpu", "rbr")
    assert cpu.verdict == claims.NOT_TESTABLE
    assert cpu.evidence == "peak memory 339 MB at batch 4 of 64 px on cpu: x86_64, 1 threads"
    assert cost_claims.oom_claim({"rows": []}, "cpu", "rbr").verdict == claims.NOT_RUN


def _summary(rows, column="teacher"):
    """(source, method, mean, std, count) per case, on the permuted split."""
    return pd.DataFrame([{column: s, "method": m, "split": "permuted", "mean": mean, "std": sd,
                          "count": n} for s, m, mean, sd, n in rows])


def test_kd_claims_take_the_welch_interval_of_two_summaries():
    # KD − TAP (10% teacher): 0.965 − 0.97 = −0.005; sd √(0.001² + 0.001²) = 0.001414,
    # half-width 4.3027 · 0.001414 / √3 = 0.0035: [−0.0085, −0.0015], inside ±0.02
    kd = _summary([("teacher_10", "kd", 0.965, 0.001, 3), ("teacher_10", "tap", 0.97, 0.001, 3)])
    c = summary_claims.kd_matches_claim(kd, "MNIST", "kd", "tap")
    assert c.verdict == claims.REPRODUCED and c.seeds == "3 seeds"
    assert "KD (10% teacher) − TAP (10% teacher): -0.005 [-0.009, -0.001] (3 seeds)" in c.evidence
    # std 0.01 each: half-width 0.0351, the interval crosses both ends
    wide = kd.assign(std=0.01)
    assert summary_claims.kd_matches_claim(wide, "MNIST", "kd").verdict == claims.INCONCLUSIVE
    one = kd.assign(count=1)
    c = summary_claims.kd_matches_claim(one, "MNIST", "kd")
    assert c.verdict == claims.NOT_TESTABLE and c.reason == "one seed: no interval"


def _both(rows, column="teacher"):
    """(source, method, contaminated, permuted, std, count) per case, on both splits."""
    return pd.DataFrame([{column: src, "method": m, "split": split, "mean": mean, "std": sd,
                          "count": n} for src, m, c, p, sd, n in rows
                         for split, mean in (("contaminated", c), ("permuted", p))])


def test_at_and_jt_fail_when_each_student_loses_more_than_learned_accuracy():
    # the paper's 10% students: AT 0.995 → 0.851 (Δ 0.144, sd √2 · 0.001 = 0.001414, half-width
    # 4.3027 · 0.001414 / √3 = 0.0035: [0.1405, 0.1475], above 0.1), JT 0.996 → 0.820
    kd = _both([("teacher_10", "at", 0.995, 0.851, 0.001, 3),
                ("teacher_10", "jt", 0.996, 0.820, 0.001, 3),
                ("no teacher", "none", 0.995, 0.819, 0.001, 3)])
    c = summary_claims.fail_to_protect_claim(kd, "MNIST", "at", "jt")
    assert c.verdict == claims.REPRODUCED
    assert "AT (10% teacher), contaminated − permuted accuracy: 0.144 [0.140, 0.148]" in c.evidence
    assert c.evidence.endswith(
        "; No XS, contaminated − permuted accuracy: 0.176 [0.172, 0.180] (3 seeds)")
    protects = kd.copy()
    protects.loc[(protects.method == "at") & (protects.split == "permuted"), "mean"] = 0.95
    assert summary_claims.fail_to_protect_claim(protects, "MNIST", "at", "jt").verdict == \
        claims.NOT_REPRODUCED  # AT loses 0.045: it keeps the model off the decoy
    # ... unless No XS itself loses no more than 0.1: the decoy is too weak to judge by
    weak = protects.copy()
    weak.loc[(weak.method == "none") & (weak.split == "permuted"), "mean"] = 0.95
    c = summary_claims.fail_to_protect_claim(weak, "MNIST", "at", "jt")
    assert c.verdict == claims.NOT_TESTABLE and c.reason.startswith("No XS loses only 0.045")
    # a method this build never trained: named, and the claim about both is not run
    c = summary_claims.fail_to_protect_claim(kd[kd.method != "jt"], "MNIST", "at", "jt")
    assert c.verdict == claims.NOT_RUN and "(not judged: no JT (10% teacher) run)" in c.evidence
    # the 1% teacher's students, where it taught any, are judged too, each needed
    one = pd.concat([kd, _both([("teacher_1", "at", 0.994, 0.822, 0.001, 3)])])
    c = summary_claims.fail_to_protect_claim(one, "MNIST", "at", "jt")
    assert c.verdict == claims.NOT_RUN and "no JT (1% teacher) run" in c.reason


def test_kd_drops_pairs_each_method_with_its_own_rule():
    kd = _summary([("teacher_10", "kd", 0.968, 0.001, 3), ("teacher_1", "kd", 0.929, 0.001, 3),
                   ("teacher_10", "tap", 0.966, 0.001, 3), ("teacher_1", "tap", 0.965, 0.001, 3)])
    assert summary_claims.kd_drops_claim(kd, "MNIST", "kd").verdict == claims.REPRODUCED
    # KD drops (0.99 -> 0.975) and TAP holds, but with the 1% teacher TAP's 0.965 is 0.010 below
    # KD's ([-0.0123, -0.0077] over 3 seeds of std 0.001): not reproduced
    above = kd.assign(mean=[0.99, 0.975, 0.966, 0.965])
    assert summary_claims.kd_drops_claim(above, "MNIST", "kd").verdict == claims.NOT_REPRODUCED
    # KD no worse with the 1% teacher: its drop's interval lies below 0
    kd.loc[1, "mean"] = 0.975
    assert summary_claims.kd_drops_claim(kd, "MNIST", "kd").verdict == claims.NOT_REPRODUCED
    # no 1%-teacher KD run: TAP's half alone cannot reproduce a claim about KD's drop
    c = summary_claims.kd_drops_claim(kd.drop(index=1), "MNIST", "kd")
    assert "no KD (1% teacher) run" in c.evidence and c.verdict == claims.NOT_RUN
    # ... but a half that fails decides it
    failing = kd.drop(index=1).assign(mean=[0.968, 0.966, 0.90])
    assert summary_claims.kd_drops_claim(failing, "MNIST", "kd").verdict == claims.NOT_REPRODUCED


def test_annotation_robustness_compares_each_annotation_with_the_ground_truth():
    table = _summary([("ground_truth", "tap", 0.979, 0.001, 3), ("teacher_10", "tap", 0.966, 0.001, 3),
                      ("teacher_1", "tap", 0.965, 0.001, 3), ("random", "tap", 0.965, 0.001, 3)],
                     column="annotation")
    c = summary_claims.annotation_robust_claim(table, "MNIST")
    assert c.verdict == claims.REPRODUCED and c.evidence.count("− TAP (ground truth)") == 3
    # the paper's random masks, 0.961: −0.018 ± 0.0035 reaches past −0.02
    table.loc[3, "mean"] = 0.961
    assert summary_claims.annotation_robust_claim(table, "MNIST").verdict == claims.INCONCLUSIVE
    table.loc[3, "mean"] = 0.90  # random masks 0.079 below: annotation quality matters
    assert summary_claims.annotation_robust_claim(table, "MNIST").verdict == claims.NOT_REPRODUCED
    assert summary_claims.annotation_robust_claim(table.iloc[:0], "MNIST").verdict == claims.NOT_RUN


def test_tap_on_masks_no_better_than_random_is_shown_and_not_judged():
    """Setting 2's precondition: a part that compares TAP trained on a teacher's masks is judged
    only where those masks mark the decoy better than random ones; KD (the teacher's logits, no
    masks) and the random and ground-truth masks are judged as before."""
    weak = {"teacher_10": "the 10% teacher's masks mark the decoy no better than random ones",
            "teacher_1": "the 1% teacher's masks mark the decoy no better than random ones"}
    table = _summary([("ground_truth", "tap", 0.951, 0.002, 3), ("teacher_10", "tap", 0.837, 0.018, 3),
                      ("teacher_1", "tap", 0.826, 0.015, 3), ("random", "tap", 0.815, 0.008, 3)],
                     column="annotation")
    c = summary_claims.annotation_robust_claim(table, "MNIST", weak=weak)
    # random − ground truth −0.136 decides it; the teachers' parts are shown, marked, not judged
    assert c.verdict == claims.NOT_REPRODUCED
    assert c.evidence.count("(not judged)") == 2 and "random) − TAP (ground truth)" in c.evidence
    assert c.evidence.endswith(f"(not judged: {weak['teacher_10']}; {weak['teacher_1']})")
    # the report's case (fresh clone of a275242): random masks −0.023 [−0.037, −0.009] spans the
    # margin; with both teachers' parts unjudged that is not "inconclusive" but not testable
    table.loc[:, "mean"] = [0.960, 0.915, 0.924, 0.937]
    table.loc[:, "std"] = [0.004, 0.01, 0.02, 0.005]
    c = summary_claims.annotation_robust_claim(table, "MNIST", weak=weak)
    assert "−0.023" in c.evidence or "-0.023" in c.evidence
    assert c.verdict == claims.NOT_TESTABLE and c.reason == f"{weak['teacher_10']}; {weak['teacher_1']}"
    # KD against TAP on the weak teacher's masks: nothing left to judge
    kd = _summary([("teacher_10", "kd", 0.922, 0.01, 3), ("teacher_10", "tap", 0.837, 0.018, 3)])
    c = summary_claims.kd_matches_claim(kd, "MNIST", "kd", "tap", weak=weak)
    assert c.verdict == claims.NOT_TESTABLE and c.reason == weak["teacher_10"]
    assert summary_claims.kd_matches_claim(kd, "MNIST", "kd", "tap").verdict == claims.NOT_REPRODUCED
    # KD's own drop is judged, TAP's half is not: a claim that needs both is not testable ...
    drops = _summary([("teacher_10", "kd", 0.968, 0.001, 3), ("teacher_1", "kd", 0.929, 0.001, 3),
                      ("teacher_10", "tap", 0.966, 0.001, 3), ("teacher_1", "tap", 0.965, 0.001, 3)])
    c = summary_claims.kd_drops_claim(drops, "MNIST", "kd", weak=weak)
    assert c.verdict == claims.NOT_TESTABLE and weak["teacher_1"] in c.reason
    # a part that never ran is named beside the precondition that fails the rest
    c = summary_claims.kd_drops_claim(drops.drop(index=[0, 1]), "MNIST", "kd", weak=weak)
    assert c.verdict == claims.NOT_TESTABLE
    assert c.reason == (f"{weak['teacher_10']}; {weak['teacher_1']}; no KD (10% teacher) run; "
                        "no KD (1% teacher) run")
    # ... unless the half that was judged already fails it
    drops.loc[1, "mean"] = 0.975
    assert summary_claims.kd_drops_claim(drops, "MNIST", "kd", weak=weak).verdict == \
        claims.NOT_REPRODUCED


def test_the_report_judges_the_kd_claims_from_the_distillation_table(tmp_path):
    kd = _summary([("teacher_10", "kd", 0.965, 0.001, 3), ("teacher_10", "tap", 0.97, 0.001, 3),
                   ("teacher_10", "at", 0.85, 0.001, 3), ("teacher_10", "jt", 0.82, 0.001, 3),
                   ("no teacher", "none", 0.82, 0.001, 3)])
    # AT and JT lose 0.02 when the decoys are permuted: they protect the model
    kd = pd.concat([kd, _both([("teacher_10", "at", 0.87, 0.85, 0.001, 3),
                               ("teacher_10", "jt", 0.84, 0.82, 0.001, 3)]).query(
        "split == 'contaminated'")])
    write_table(kd, tmp_path, "mnist_kd", {"data": "MNIST"})
    table = claims_table(tmp_path).set_index("id")
    assert table.loc["kd_mnist_matches_tap_10", "verdict"] == "reproduced"
    assert table.loc["kd_mnist_at_jt_fail", "verdict"] == "not reproduced"
    # the 1%-teacher runs never ran: not run, with the cases named
    assert table.loc["kd_mnist_1pct_drops", "verdict"] == "not run"
    assert "no KD (1% teacher) run" in table.loc["kd_mnist_1pct_drops", "reason"]
    # a claim no cell here can decide says why, once its chapter ran
    # JT's cost reads the chapter's per-run table, which this build did not write
    assert table.loc["jt_second_order_cost", "verdict"] == "not run"
    assert table.loc["jt_second_order_cost", "reason"] == "its cells did not run in this build"
    # the medical distillation table never written: its claims' cells did not run
    assert table.loc["tap_beats_kd_at_jt", "verdict"] == "not run"
    assert table.loc["tuning_cost_effnet", "verdict"] == "not run"  # no speed chapter here


def test_a_claim_that_needs_every_part_is_not_judged_on_the_parts_that_happen_to_be_there():
    """"Both AT and JT are not successful": AT's part alone neither reproduces the claim nor
    leaves it inconclusive; a needed part on one seed (no interval) is named, not skipped."""
    kd = _both([("teacher_10", "at", 0.99, 0.815, 0.001, 3),
                ("teacher_10", "jt", 0.99, 0.80, 0.001, 3)])
    assert summary_claims.fail_to_protect_claim(kd, "MNIST", "at", "jt").verdict == claims.REPRODUCED
    c = summary_claims.fail_to_protect_claim(kd[kd.method == "at"], "MNIST", "at", "jt")
    assert c.verdict == claims.NOT_RUN and "no JT (10% teacher) run" in c.reason
    one = kd.assign(count=[3, 3, 1, 1])
    c = summary_claims.fail_to_protect_claim(one, "MNIST", "at", "jt")
    assert c.verdict == claims.NOT_TESTABLE and "one seed, no interval" in c.reason
    # a judged part that fails still decides: AT losing 0.08 protects
    worse = kd.assign(count=[3, 3, 1, 1], mean=[0.99, 0.91, 0.99, 0.80])
    assert summary_claims.fail_to_protect_claim(worse, "MNIST", "at", "jt").verdict == \
        claims.NOT_REPRODUCED


def test_matches_claim_needs_permuted_accuracy_and_delta_accuracy_within_the_margin():
    """"TAP ... still matches RRR and RBR very closely" (the claims table's test: permuted
    accuracy and Δ-accuracy): a TAP level with RRR on permuted digits but losing 0.03 more when
    the decoys are permuted (0.99 → 0.96 against 0.96 → 0.96) does not match it."""
    runs = runs_table({"tap": [(0.99, 0.96)] * 3, "rrr": [(0.96, 0.96)] * 3, "none": DECOYED})
    c = mnist_claims.matches_claim(runs, "MNIST", "rrr", "tap")
    assert c.verdict == claims.NOT_REPRODUCED
    assert c.reason == "Δ accuracy within 0.02: not reproduced"
    assert "permuted accuracy, TAP − RRR (paired): 0.000" in c.evidence
    assert "Δ accuracy, TAP − RRR (paired): -0.030" in c.evidence
    level = runs_table({"tap": [(0.96, 0.96)] * 3, "rrr": [(0.96, 0.96)] * 3, "none": DECOYED})
    assert mnist_claims.matches_claim(level, "MNIST", "rrr", "tap").verdict == claims.REPRODUCED

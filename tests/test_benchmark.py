"""The benchmark's arithmetic: counted FLOPs of hand-computable steps, the efficiency ratio, paired
ratio intervals from hand-made round timings, the speed claim's three verdicts, and the
interleaving of rounds."""

import math
import time

import pandas as pd
import pytest
import torch
from torch import nn

from tapkit import benchmark, efficiency, paired
from tapkit.book import claims, cost_claims


def _step(model: nn.Module, x: torch.Tensor, opt: torch.optim.Optimizer):
    def step():
        opt.zero_grad(set_to_none=True)
        model(x).sum().backward()
        opt.step()
    return step


def test_linear_step_flops_are_forward_plus_twice_forward():
    # forward: N x in times in x out, 2 N in out FLOPs; backward: the input's and the weight's
    # gradients, one matrix multiply each of the same size (the optimiser's update counts zero)
    n, fan_in, fan_out = 8, 5, 3
    layer = nn.Linear(fan_in, fan_out)
    x = torch.randn(n, fan_in, requires_grad=True)
    flops = efficiency.count_flops(_step(layer, x, torch.optim.Adam(layer.parameters())))
    assert flops == 3 * (2 * n * fan_in * fan_out) == 720


def test_conv_step_flops_match_the_hand_count():
    # 1x1 convolution, 2 -> 4 channels on 3x3 images of a batch of 2: 2 * N*H*W * in * out
    conv = nn.Conv2d(2, 4, kernel_size=1, bias=False)
    x = torch.randn(2, 2, 3, 3, requires_grad=True)
    forward = 2 * (2 * 3 * 3) * 2 * 4
    assert efficiency.count_flops(lambda: conv(x)) == forward == 288
    flops = efficiency.count_flops(_step(conv, x, torch.optim.SGD(conv.parameters(), lr=0.1)))
    assert flops == 3 * forward


def test_efficiency_ratio_arithmetic():
    e = efficiency.Efficiency("resnet18", 16, 32, "adam", 1, step_flops=3.0e9, step_s=0.1,
                              matmul_flops_per_s=60e9)
    assert e.flops_per_s == pytest.approx(30e9) and e.ratio == pytest.approx(0.5)
    row = e.as_row()
    assert row["efficiency"] == pytest.approx(0.5) and row["flops_per_s"] == pytest.approx(30e9)
    assert row["model"] == "resnet18" and row["threads"] == 1


def test_matmul_reference_is_a_throughput():
    # 2 * 64^3 FLOPs in some positive time: a finite positive rate, whatever the machine
    rate = efficiency.matmul_flops_per_s(side=64, repeats=2)
    assert math.isfinite(rate) and rate > 0


def test_efficiency_rows_of_a_real_step():
    rows = benchmark.efficiency([("two_layer_cnn@2x28", "sgd"), ("two_layer_cnn@4x28", "adam")],
                                steps=1, warmup=1, device="cpu")
    assert [(r["model"], r["batch_size"], r["optimizer"]) for r in rows] == [
        ("two_layer_cnn", 2, "sgd"), ("two_layer_cnn", 4, "adam")]
    # the same network: FLOPs scale with the batch exactly
    assert rows[1]["step_flops"] == 2 * rows[0]["step_flops"] > 0
    for r in rows:
        assert r["efficiency"] == pytest.approx(r["step_flops"] / r["step_s"]
                                                / r["matmul_flops_per_s"])


def test_efficiency_rejects_an_unknown_optimizer():
    with pytest.raises(ValueError, match="unknown optimizer"):
        benchmark.efficiency([("two_layer_cnn@2x28", "lbfgs")], device="cpu")


def test_ratio_interval_is_the_geometric_mean_with_a_t_interval_of_logs():
    # per-round ratios 2 and 8: logs ln2, ln8, mean ln4, sd = ln4 / sqrt(2) * ... by hand:
    e = paired.speed_ratio([2.0, 8.0], [1.0, 1.0])
    assert e.mean == pytest.approx(4.0) and e.n == 2
    logs = [math.log(2), math.log(8)]
    sd = abs(logs[1] - logs[0]) / math.sqrt(2)
    half = 12.706204736 * sd / math.sqrt(2)
    assert e.lo == pytest.approx(math.exp(math.log(4) - half), rel=1e-6)
    assert e.hi == pytest.approx(math.exp(math.log(4) + half), rel=1e-6)
    # inverting every ratio inverts the estimate and swaps the bounds
    inv = paired.memory_ratio([2.0, 8.0], [1.0, 1.0])
    assert inv.mean == pytest.approx(0.25) and inv.lo == pytest.approx(1 / e.hi)


def test_ratio_interval_pairs_rounds_and_skips_unusable_ones():
    e = paired.speed_ratio([1.0, 1.0, 1.0], [0.5, 0.5])  # the shorter sequence decides
    assert e.n == 2 and e.mean == pytest.approx(2.0) and e.lo == e.hi == pytest.approx(2.0)
    assert paired.memory_ratio([0.0, 10.0], [5.0, 11.0]).n == 1  # a zero base is left out
    empty = paired.speed_ratio([], [])
    assert empty.n == 0 and math.isnan(empty.mean)


def _table(rounds_none, rounds_tap, mem_none=(100.0, 100.0, 100.0), mem_tap=(101.0, 101.0, 101.0)):
    """A ratios table as the speed chapter writes it, from hand-made round timings."""
    speed = paired.speed_ratio(rounds_none, rounds_tap)
    mem = paired.memory_ratio(list(mem_none), list(mem_tap))
    return pd.DataFrame([{"model": "resnet18", "method": "tap", "speed_ratio": speed.mean,
                          "speed_ratio_lo": speed.lo, "speed_ratio_hi": speed.hi,
                          "speed_rounds": speed.n, "mem_ratio": mem.mean,
                          "mem_ratio_lo": mem.lo, "mem_ratio_hi": mem.hi, "mem_passes": mem.n}])


NONE = [0.100, 0.104, 0.098, 0.102, 0.100, 0.101]


def test_speed_claim_reproduced_when_the_interval_clears_the_threshold():
    # TAP 1% slower in every round: ratio 1/1.01 = 0.990, zero spread
    c = cost_claims.speed_claim(_table(NONE, [t * 1.01 for t in NONE]), "cpu")
    assert c.verdict == claims.REPRODUCED
    assert "ResNet-18: speed ×0.99 [0.99, 0.99], memory ×1.01 [1.01, 1.01]" in c.evidence
    assert c.seeds == "6 paired rounds; 3 memory passes"


def test_speed_claim_not_reproduced_when_the_interval_lies_below():
    # TAP 20-25% slower: ratios 0.80-0.83, the whole interval below 0.95
    slow = [t * f for t, f in zip(NONE, (1.2, 1.25, 1.22, 1.21, 1.24, 1.2))]
    assert cost_claims.speed_claim(_table(NONE, slow), "cpu").verdict == claims.NOT_REPRODUCED


def test_speed_claim_inconclusive_when_noise_straddles_the_threshold():
    # one noisy round (TAP's step hit by a neighbour) widens the interval across 0.95
    noisy = [t * f for t, f in zip(NONE, (1.0, 1.0, 1.5, 0.9, 1.0, 1.05))]
    c = cost_claims.speed_claim(_table(NONE, noisy), "cpu")
    assert c.verdict == claims.INCONCLUSIVE
    e = paired.speed_ratio(NONE, noisy)
    assert e.lo < 0.95 <= e.hi


def test_memory_alone_decides_when_speed_is_clear():
    fast = [t * 1.01 for t in NONE]
    heavy = cost_claims.speed_claim(_table(NONE, fast, mem_tap=(120.0, 121.0, 119.0)), "cpu")
    assert heavy.verdict == claims.NOT_REPRODUCED
    spread = cost_claims.speed_claim(_table(NONE, fast, mem_tap=(100.0, 104.0, 110.0)), "cpu")
    assert spread.verdict == claims.INCONCLUSIVE


def test_a_table_without_intervals_is_inconclusive():
    old = pd.DataFrame({"model": ["vgg16"], "method": ["tap"], "speed_ratio": [0.99],
                        "mem_ratio": [1.0]})
    c = cost_claims.speed_claim(old, "cpu")
    assert c.verdict == claims.INCONCLUSIVE and "[no interval]" in c.evidence


@pytest.mark.parametrize("lo, hi, higher, verdict", [
    (0.95, 1.1, True, claims.REPRODUCED), (0.8, 0.949, True, claims.NOT_REPRODUCED),
    (0.94, 0.96, True, claims.INCONCLUSIVE), (math.nan, math.nan, True, claims.INCONCLUSIVE),
    (0.9, 1.05, False, claims.REPRODUCED), (1.06, 1.2, False, claims.NOT_REPRODUCED),
    (1.0, 1.06, False, claims.INCONCLUSIVE)])
def test_keeps_verdict(lo, hi, higher, verdict):
    assert claims.keeps_verdict(lo, hi, 0.95 if higher else 1.05, higher) == verdict


class _Counter:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def step(self):
        self.log.append(self.name)


def test_rounds_alternate_and_cheap_pairs_run_more_rounds():
    log: list[str] = []
    pairs = [_Counter(log, "none"), _Counter(log, "tap"), _Counter(log, "rbr")]
    times = benchmark.step_seconds(pairs, [4, 4, 2], warm_rounds=0)
    assert [len(t) for t in times] == [4, 4, 2]
    # rounds 0-1: the first two orders of the three; rounds 2-3: the two orders of the two
    assert log == ["none", "tap", "rbr", "none", "rbr", "tap", "none", "tap", "tap", "none"]


def test_over_a_cycle_of_rounds_each_pair_follows_each_other_equally_often():
    from collections import Counter

    orders = [benchmark.round_order([0, 1, 2], r) for r in range(12)]
    follows = Counter((a, b) for order in orders for a, b in zip(order, order[1:]))
    assert set(follows.values()) == {4} and len(follows) == 6  # every ordered pair, 2 a cycle
    assert Counter(order[0] for order in orders) == {0: 4, 1: 4, 2: 4}
    # a rotation kept one cyclic order: 1 always right after 0, never 0 right after 1
    rotated = [[0, 1, 2][r % 3:] + [0, 1, 2][:r % 3] for r in range(12)]
    assert Counter((a, b) for o in rotated for a, b in zip(o, o[1:]))[(1, 0)] == 0


class _SlowFirst(_Counter):
    """A pair whose first step after another pair was built is slow (0.05 s), as VGG-16's TAP
    step was after RBR's pair took its memory."""

    def step(self):
        super().step()
        if len(self.log) <= 3:
            time.sleep(0.05)


def test_a_warm_round_keeps_the_slow_first_steps_out_of_the_timed_rounds():
    log: list[str] = []
    pairs = [_SlowFirst(log, "none"), _SlowFirst(log, "tap"), _Counter(log, "rbr")]
    times = benchmark.step_seconds(pairs, [3, 3, 1])
    assert log[:3] == ["none", "tap", "rbr"] and len(log) == 3 + 7  # the warm round, untimed
    assert max(max(t) for t in times) < 0.04
    cold = benchmark.step_seconds([_SlowFirst([], "none")], 2, warm_rounds=0)
    assert cold[0][0] >= 0.05


def test_add_ratios_pairs_each_method_with_the_first_no_xs_row():
    rows = [{"method": "none", "status": "ok", "step_s": [0.1, 0.2], "peak_mem_mb_passes": [10.0, 10.0]},
            {"method": "tap", "status": "ok", "step_s": [0.2, 0.4, 9.0],
             "peak_mem_mb_passes": [11.0, 11.0]},
            {"method": "rbr", "status": "oom"}]
    out = benchmark.add_ratios(rows)
    assert out[1]["speed_ratio"] == pytest.approx(0.5) and out[1]["speed_rounds"] == 2
    assert out[1]["mem_ratio"] == pytest.approx(1.1) and out[1]["mem_ratio_lo"] == pytest.approx(1.1)
    assert math.isnan(out[2]["speed_ratio"]) and out[2]["mem_passes"] == 0
    assert benchmark.ratio_text(out[1]) == ("speed ×0.50 [0.50, 0.50] (2 rounds), "
                                            "memory ×1.10 [1.10, 1.10] (2 passes)")


def test_with_no_xs_timed_twice_a_method_is_paired_with_each_rounds_mean_of_the_two():
    # round 1: No XS 0.1 and 0.4 (geometric mean 0.2), TAP 0.2; round 2: 0.2 and 0.2, TAP 0.4
    rows = [{"method": "none", "status": "ok", "step_s": [0.1, 0.2], "peak_mem_mb_passes": [10.0]},
            {"method": "tap", "status": "ok", "step_s": [0.2, 0.4], "peak_mem_mb_passes": [12.0]},
            {"method": "none", "status": "ok", "step_s": [0.4, 0.2], "peak_mem_mb_passes": [10.0]}]
    out = benchmark.add_ratios(rows)
    assert out[1]["speed_ratio"] == pytest.approx(math.sqrt(1.0 * 0.5))  # per round 1.0, 0.5
    assert out[1]["mem_ratio"] == pytest.approx(1.2)  # memory: against the first No XS
    # the second No XS against the first: the noise floor, not against a mean that holds itself
    assert out[2]["speed_ratio"] == pytest.approx(math.sqrt(0.25 * 1.0))
    assert out[0]["speed_ratio"] == pytest.approx(1.0)
    assert benchmark.no_xs_rounds([[0.1, 0.2, 0.3], [0.4, 0.2]]) == pytest.approx([0.2, 0.2])


# ----------------------------------------------------------------------------- the chapter's tables

def test_a_stored_measurement_is_shown_again_only_with_the_same_settings(tmp_path):
    from tapkit.book import report, speed_memory

    stored = {"settings": {"batch_size": 2, "image_size": 32}, "models": ["resnet18"],
              "methods": ["none", "tap"], "device": "cpu: x86_64, 1 threads", "threads": 1}
    rows = [{"model": "resnet18", "method": "none", "it_per_s": 12.5},
            {"model": "resnet18", "method": "tap", "it_per_s": 12.0}]
    table = tmp_path / "tables" / "speed_memory.csv"
    assert speed_memory.stored_rows(table, **stored) is None           # nothing stored yet
    report.write_table(pd.DataFrame(rows), tmp_path, "speed_memory",
                       {"label": "profile smoke", **stored, "rows": rows})
    assert speed_memory.stored_rows(table, **stored) == rows
    for key, other in (("settings", {"batch_size": 4, "image_size": 32}), ("models", ["vgg16"]),
                       ("methods", ["none"]), ("device", "cuda: H100"), ("threads", 2)):
        assert speed_memory.stored_rows(table, **{**stored, key: other}) is None, key


def test_ratios_are_shown_by_architecture_then_method_with_no_xs_again_last():
    from tapkit.book import speed_memory

    ratios = pd.DataFrame({"model": ["vgg16", "vgg16", "resnet18", "resnet18", "resnet18"],
                           "method": ["none_again", "tap", "tap", "none", "none_again"],
                           "speed_ratio": [1.01, 0.97, 0.96, 1.0, 0.99]}, index=[7, 8, 9, 10, 11])
    out = speed_memory.in_order(ratios, ["resnet18", "vgg16"], ["none", "rrr", "tap"])
    assert list(zip(out.model, out.method)) == [("resnet18", "none"), ("resnet18", "tap"),
                                                ("resnet18", "none_again"), ("vgg16", "tap"),
                                                ("vgg16", "none_again")]
    assert out.speed_ratio.tolist() == [1.0, 0.96, 0.99, 0.97, 1.01]
    assert list(out.index) == [0, 1, 2, 3, 4]
    shown = speed_memory.committed_view(out.assign(speed_ratio=[1.0, 0.956, 0.994, 0.97, 1.011]))
    assert shown.loc[("resnet18", "tap"), "speed_ratio"] == 0.96
    assert shown.loc[("vgg16", "none_again"), "speed_ratio"] == 1.01


def test_step_memory_counts_the_teachers_forward_and_jts_double_backward():
    """KD/AT/JT's steps with a frozen teacher of the same architecture (its weights, built before
    the step, count as the inputs do: not at all): the teacher's forward adds the same to KD and
    AT, JT's second-order derivatives more, and the count is exact (the same twice)."""
    torch.set_num_threads(1)
    peaks = benchmark.step_memory_mb("two_layer_cnn", ["none", "kd", "at", "jt"], 8, 28, "adam")
    assert peaks["none"] < peaks["kd"] < peaks["jt"] and peaks["at"] < peaks["jt"]
    assert peaks["at"] == pytest.approx(peaks["kd"], rel=0.05)
    again = benchmark.step_memory_mb("two_layer_cnn", ["jt"], 8, 28, "adam")
    assert again["jt"] == peaks["jt"]

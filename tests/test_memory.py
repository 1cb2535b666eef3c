"""tapkit.memory: peak bytes of live tensors, counted at the dispatcher (Table 1's CPU memory)."""

import torch

from tapkit.memory import peak_bytes, training_state


def test_peak_counts_what_is_alive_at_once_by_hand():
    def fn():
        a = torch.ones(1000)          # 4,000 bytes
        b = a * 2                     # 8,000 alive
        del a                         # 4,000
        c = b + 1                     # 8,000 again
        d = c.view(10, 100)           # a view: no new storage
        return d.sum()                # + 4 bytes: 8,004 at most
    assert peak_bytes(fn) == 8004
    kept = torch.zeros(250)           # 1,000 bytes alive throughout
    assert peak_bytes(fn, [kept, kept[:10]]) == 9004  # a view of a kept tensor is not counted twice


def test_a_training_step_is_counted_the_same_twice_and_orders_the_methods():
    from tapkit.benchmark import _Pair, tracked_peak_mb

    peaks = {}
    for method in ("none", "tap", "rrr"):
        pair = _Pair("two_layer_cnn", method, 8, 28, "cpu")
        pair.step()  # the optimiser's momentum exists from here on
        peaks[method] = (tracked_peak_mb(pair), tracked_peak_mb(pair))
        assert peaks[method][0] == peaks[method][1]
    state = sum(t.untyped_storage().nbytes() for t in training_state(pair.model, pair.opt))
    # parameters, gradients and momentum alone are a floor; RRR's double backward adds to it
    assert peaks["none"][0] * 2**20 > state and peaks["rrr"][0] > peaks["tap"][0] >= peaks["none"][0]

"""``tapkit bench``'s paired rounds, memory passes and ``--efficiency``, end to end on a tiny
model."""

import json

import pytest

from tapkit import cli


def test_bench_pairs_cheap_methods_over_more_rounds_with_intervals(tmp_path):
    out = tmp_path / "bench.json"
    assert cli.main(["bench", "--models", "two_layer_cnn@2x28", "--methods", "none,tap,rrr",
                     "--steps", "2", "--paired-steps", "4", "--memory-passes", "2",
                     "--warmup", "1", "--out", str(out)]) == 0
    rows = {r["method"]: r for r in json.loads(out.read_text())}
    assert [len(rows[m]["step_s"]) for m in ("none", "tap", "rrr")] == [4, 4, 2]
    assert rows["tap"]["speed_rounds"] == 4 and rows["rrr"]["speed_rounds"] == 2
    assert len(rows["tap"]["peak_mem_mb_passes"]) == 2 and rows["tap"]["mem_passes"] == 2
    assert len(rows["rrr"]["peak_mem_mb_passes"]) == 1
    assert rows["rrr"]["mem_ratio_lo"] is None  # one pass: no interval (NaN, null in JSON)
    assert rows["none"]["speed_ratio"] == pytest.approx(1.0)
    for m in ("tap", "rrr"):
        r = rows[m]
        assert r["speed_ratio_lo"] <= r["speed_ratio"] <= r["speed_ratio_hi"]
        assert r["optimizer"] == "sgd" and r["steps"] == len(r["step_s"])


def test_bench_efficiency_writes_one_row_per_model(tmp_path):
    out = tmp_path / "eff.json"
    assert cli.main(["bench", "--efficiency", "--models", "two_layer_cnn@2x28",
                     "--optimizer", "adam", "--steps", "1", "--warmup", "1",
                     "--out", str(out)]) == 0
    (row,) = json.loads(out.read_text())
    assert row["model"] == "two_layer_cnn" and row["optimizer"] == "adam"
    assert row["step_flops"] > 0 and 0 < row["efficiency"]
    assert set(row["provenance"]) >= {"tapkit", "torch"}

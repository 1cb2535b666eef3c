"""scripts/gpu.py, the one command of a GPU lease: its plan and its CPU dry run."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parent.parent


def _gpu_module():
    spec = importlib.util.spec_from_file_location("gpu_script", REPO / "scripts" / "gpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_plan_is_the_papers_setting1_protocol():
    s, lams, runs = _gpu_module().setting1_configs("mnist", None, None)
    assert len(runs) == 25 and s.seeds == (0, 1, 2, 3, 4)
    cfgs = {(case, c.seed): c for case, c in runs}
    assert all(c.epochs == 50 and c.batch_size == 256 and c.optimizer == "sgd" and c.lr == 1e-3
               and c.momentum == 0.9 and c.source == "mnist" for c in cfgs.values())
    assert cfgs["base", 0].data == "clean" and cfgs["base", 0].method == "none"
    assert cfgs["tap", 3].lam == 1e-3 and cfgs["rbr", 1].lam == 1e4
    assert len({c.key() for c in cfgs.values()}) == 25


def test_dry_run_steps_every_run_and_exports_tables(tmp_path):
    out, export = tmp_path / "paper", tmp_path / "OUT"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gpu.py"), "--dry-run", "--seeds", "0",
         "--workers", "2", "--carry", str(tmp_path / "no-carry"), "--out", str(out),
         "--export", str(export)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = json.loads((export / "gpu_provenance.json").read_text())
    assert record["dry_run"] and record["data"] == {"train": 4000, "test": 1000}
    steps = record["setting1"]["steps"]
    assert [s["method"] for s in steps] == ["none", "none", "rrr", "rbr", "tap"]
    assert all(s["status"] == "ok" and 0 < s["task_loss"] < 5 for s in steps)
    assert set(record["wall_s"]) == {"setting1", "table1", "total"}
    assert {"git_commit", "torch", "device"} <= set(record["provenance"])
    table = (export / "tables" / "speed_memory.csv").read_text().splitlines()
    assert [line.split(",")[1] for line in table[1:]] == ["none", "tap", "rrr", "rbr", "none_again"]


def test_a_lease_cut_short_gives_the_table_of_the_cases_that_finished(tmp_path):
    """Setting 1's table from a store holding Base and No XS only (a lease stopped at its time
    limit): their means over five seeds, the three missing cases named in ``not_run``."""
    gpu = _gpu_module()
    s, lams, runs = gpu.setting1_configs("mnist", None, None)
    for i, (case, cfg) in enumerate(runs):
        if case not in ("base", "none"):
            continue
        acc = {"contaminated": 0.99, "permuted": 0.80 + 0.01 * cfg.seed, "clean": 0.6}
        record = {"status": "ok", "seconds": 100.0 + i, "metric": "accuracy",
                  "config": cfg.to_dict(),
                  "provenance": {"device": "cuda: test"}, **acc}
        (tmp_path / "runs" / cfg.key()).mkdir(parents=True)
        (tmp_path / "runs" / cfg.key() / "metrics.json").write_text(json.dumps(record))
    out = gpu.setting1_table(s, lams, runs, tmp_path)
    assert out["runs"] == 10 and out["not_run"] == dict.fromkeys(
        ("rrr", "rbr", "tap"), "5 of 5 runs not stored")
    table = pd.read_csv(tmp_path / "tables" / "mnist_gt.csv").set_index(["case", "split"])
    assert table.loc[("none", "permuted"), "mean"] == pytest.approx(0.82)  # seeds 0-4: .80-.84
    assert table.loc[("base", "clean"), "count"] == 5
    meta = json.loads((tmp_path / "tables" / "mnist_gt.json").read_text())
    assert set(meta["not_run"]) == {"rrr", "rbr", "tap"}


def test_table1_times_the_released_losses():
    """The benchmark builds each method with the options it is given: the released RBR and
    TAP's squared norm, as the paper's Table 1 timed them; without options, the defaults."""
    from tapkit.benchmark import _Pair
    from tapkit.experiments.protocol_base import RELEASED

    released = _Pair("two_layer_cnn", "rbr", 2, 28, "cpu", options=RELEASED)
    default = _Pair("two_layer_cnn", "rbr", 2, 28, "cpu")
    assert released.cfg.options.variant == "released" != default.cfg.options.variant
    assert _Pair("two_layer_cnn", "tap", 2, 28, "cpu", options=RELEASED).cfg.options.norm == "l2sq"


def test_the_lease_and_the_speed_page_time_one_protocol():
    """Table 1 is measured from the profile's bench protocol (tapkit.experiments.table1): the
    paper profile's, on the lease as on the speed page, times the authors' VGG-16 head and the
    released losses; the quick profile's the same VGG-16 (not the quarter width its chapters
    train) and the equations' forms."""
    import argparse

    from tapkit.experiments import protocols, table1
    from tapkit.experiments.protocol_base import EQUATIONS, RELEASED

    gpu = _gpu_module()
    lease = gpu.table1_protocol(argparse.Namespace(dry_run=False))
    assert lease == protocols.bench("paper")
    assert lease.models == ("vgg16_authors", "resnet18", "densenet121")
    assert lease.options is RELEASED and lease.context == ("two_layer_cnn@256x28",)
    quick = protocols.bench("quick")
    # the authors' full-width VGG-16 at 32 px, what the paper timed, though the quick medical
    # chapters train it at a quarter of its width
    assert protocols.medical("quick").variants["vgg16"] == "vgg16_quarter"
    assert quick.models == ("vgg16_authors@4x32", "resnet18", "densenet121")
    assert quick.options is EQUATIONS
    assert table1.timed_order(quick.methods) == ["none", "tap", "rrr", "rbr", "none"]
    dry = gpu.table1_protocol(argparse.Namespace(dry_run=True))
    assert table1.specs(dry) == ("two_layer_cnn@8x28",) and dry.options is RELEASED
    # a spent budget starts no model, names each, and still labels what was asked
    spent = table1.measure(lease, "cpu", "paper", budget_s=-1.0)
    assert spent.rows == [] and list(spent.not_run) == list(table1.specs(lease))
    meta = spent.meta()
    assert meta["options"]["rbr"] == {"variant": "released", "batchnorm": "running"}
    assert meta["models"] == list(table1.specs(lease)) and meta["settings"] == lease.as_dict()
    assert "RBR variant=released" in spent.label and "not run: vgg16_authors" in spent.label


def test_a_later_lease_keeps_the_earlier_leases_provenance():
    """A second lease that reruns Setting 1 only: Table 1 keeps the first lease's commit, both
    leases are listed, and the first lease's wall times stay beside the second's."""
    first = {"provenance": {"git_commit": "aaa"}, "table1": {"rows": 20},
             "setting1": {"runs": 15}, "wall_s": {"table1": 78.3}}
    second = {"provenance": {"git_commit": "bbb"}, "wall_s": {}}
    merged = _gpu_module().later_lease(first, second)
    assert merged["table1"]["provenance"]["git_commit"] == "aaa"
    assert [p["git_commit"] for p in merged["leases"]] == ["aaa", "bbb"]
    assert merged["provenance"]["git_commit"] == "bbb" and merged["wall_s"] == {"table1": 78.3}
    assert "provenance" not in first["table1"]  # the earlier record is not changed
    third = _gpu_module().later_lease(merged, {"provenance": {"git_commit": "ccc"}, "wall_s": {}})
    assert [p["git_commit"] for p in third["leases"]] == ["aaa", "bbb", "ccc"]

"""scripts/gpu.py, the one command of a GPU lease: its plan and its CPU dry run."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

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

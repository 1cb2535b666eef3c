"""Executors and the results store under several workers: a run is trained once, corrupt entries
are redone."""

import os
import time

import pytest
import torch

from tapkit.config import TrainConfig
from tapkit.experiments import executors, store as runner
from tapkit.experiments.executors import ProcessExecutor, make_executor
from tapkit.experiments.store import ResultStore
from fakes import fake_record, fake_train_run

CFG = TrainConfig(method="tap", lam=1e-3, epochs=1)


def _slow_fake_train_run(cfg, run_dir, teacher=None, masks=None, device="auto", progress=True,
                         compile_step=False, start_weights=None):
    with open(os.path.join(run_dir.parent, "events.log"), "a") as fh:
        fh.write(f"train {os.getpid()}\n")
    time.sleep(2.0)  # long enough for the other worker to ask meanwhile
    record = fake_record(cfg)
    from tapkit.results import write_json
    write_json(run_dir / "metrics.json", record)
    return record


def _ask_in_worker(job):
    """In a spawned worker: ask the store for the run (training replaced by a slow fake)."""
    root, cfg = job
    runner.train_run = _slow_fake_train_run
    with open(os.path.join(root, "events.log"), "a") as fh:
        fh.write(f"ask {os.getpid()}\n")
    return ResultStore(root).run(cfg, "cpu", progress=False)


def test_two_workers_asking_for_the_same_run_train_it_once(tmp_path):
    records = ProcessExecutor(2, progress=False).map(_ask_in_worker, [(str(tmp_path), CFG)] * 2)
    events = (tmp_path / "events.log").read_text().split()
    assert events.count("ask") == 2 and events.count("train") == 1
    assert records[0] == records[1] and records[0]["permuted"] == 0.5


def test_garbled_metrics_json_is_moved_aside_and_redone(tmp_path, monkeypatch, caplog):
    calls = []
    monkeypatch.setattr(runner, "train_run", fake_train_run(calls, seen="files"))
    run_dir = ResultStore(tmp_path).path(CFG)
    run_dir.mkdir(parents=True)
    (run_dir / "metrics.json").write_text('{"status": "ok", "contam')
    record = ResultStore(tmp_path).run(CFG, "cpu")
    assert record["permuted"] == 0.5 and len(calls) == 1
    assert "metrics.json" not in calls[0]  # moved aside before training
    aside = [p for p in run_dir.iterdir() if p.name.startswith("metrics.json.corrupt-")]
    assert len(aside) == 1 and aside[0].read_text() == '{"status": "ok", "contam'
    assert "unreadable" in caplog.text
    assert ResultStore(tmp_path).run(CFG, "cpu")["permuted"] == 0.5 and len(calls) == 1


def test_truncated_checkpoint_is_moved_aside_and_redone(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "train_run", fake_train_run(calls, seen="files"))
    run_dir = ResultStore(tmp_path).path(CFG)
    run_dir.mkdir(parents=True)
    ckpt = run_dir / "checkpoint.pt"
    torch.save({"model": {"w": torch.randn(1000)}, "epoch": 1}, ckpt)
    assert runner.checkpoint_problem(ckpt) is None
    ckpt.write_bytes(ckpt.read_bytes()[: ckpt.stat().st_size // 2])
    with pytest.raises(Exception):
        torch.load(ckpt, weights_only=False)  # what stopped the store before
    ResultStore(tmp_path).run(CFG, "cpu")
    assert len(calls) == 1 and "checkpoint.pt" not in calls[0]
    assert any(p.name.startswith("checkpoint.pt.corrupt-") for p in run_dir.iterdir())


def test_a_readable_checkpoint_is_kept_for_resuming(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "train_run", fake_train_run(calls, seen="files"))
    run_dir = ResultStore(tmp_path).path(CFG)
    run_dir.mkdir(parents=True)
    torch.save({"epoch": 1}, run_dir / "checkpoint.pt")
    ResultStore(tmp_path).run(CFG, "cpu")
    assert "checkpoint.pt" in calls[0]


@pytest.mark.parametrize("spec, kind", [("local", executors.LocalExecutor),
                                        ("processes:3", ProcessExecutor)])
def test_make_executor(spec, kind):
    assert isinstance(make_executor(spec), kind)


@pytest.mark.parametrize("spec", ["processes", "processes:x", "threads:2", "local:2"])
def test_make_executor_rejects_unknown_names(spec):
    with pytest.raises(ValueError, match="unknown executor"):
        make_executor(spec)


def test_submitit_executor_runs_the_store_like_the_others(tmp_path, monkeypatch):
    pytest.importorskip("submitit")
    from tapkit.experiments.executors import SubmititExecutor

    calls = []
    monkeypatch.setattr(runner, "train_run", fake_train_run(calls, seen="files"))
    executor = SubmititExecutor(str(tmp_path / "jobs"), cluster="debug")  # jobs run in-process
    frame = executors.run_many([CFG, CFG.replace(seed=1)], tmp_path / "runs", "cpu", executor)
    assert list(frame.seed) == [0, 1] and list(frame.permuted) == [0.5, 0.5] and len(calls) == 2


def _fail_on_two(x):
    if x == 2:
        raise RuntimeError("run 2 failed")
    return x * 10


def test_process_executor_keeps_order_and_raises_a_workers_error():
    assert ProcessExecutor(2, progress=False).map(_fail_on_two, [0, 1, 3]) == [0, 10, 30]
    with pytest.raises(RuntimeError, match="run 2 failed"):
        ProcessExecutor(2, progress=False).map(_fail_on_two, [0, 1, 2, 3])

"""Sweeps on a cluster (:mod:`tapkit.experiments.cluster`): a time limit from the runs' expected
time unless one is given, checkpointable jobs that a time limit requeues and that end with the
result of an uninterrupted run, and a job that dies failing alone."""

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from tapkit.config import TrainConfig
from tapkit.experiments import planner
from tapkit.experiments.executors import RunJob
from tapkit.experiments.failures import RunFailed, RunsFailedError, one_line
from tapkit.experiments.run import train_run

submitit = pytest.importorskip("submitit")
from tapkit.experiments.cluster import SubmititExecutor  # noqa: E402  (needs submitit)

MEDICAL = TrainConfig(experiment="pneu", model="resnet18", method="tap", lam=1e-3, per_class=100,
                      epochs=10, batch_size=16, image_size=224)


def test_expected_minutes_follow_table_1():
    # 10 epochs x 200 stand-in images (100 per class) at 1 / (16 x 36.7 it/s) s each (ResNet-18 TAP)
    assert planner.training_images(MEDICAL) == 200
    assert planner.expected_minutes(MEDICAL) == pytest.approx(2 + 2000 / 587.2 / 60)   # 2.0568
    assert planner.expected_minutes(MEDICAL, gpu=False) == pytest.approx(2 + 2000 / 587.2 / 60 * 200)
    # Decoy-MNIST: 4,000 embedded digits at 28 px; the two-layer CNN takes VGG-16's RBR rate
    mnist = TrainConfig(method="rbr", lam=1e4, epochs=50)
    assert planner.expected_minutes(mnist) == pytest.approx(2 + 50 * 4000 / (16 * 1.7) / 64 / 60)
    # a teacher trains on its clean share; KD adds the teacher's forward pass to No XS's step
    teacher = TrainConfig(data="holdout", clean_fraction=0.1)
    assert planner.training_images(teacher) == 400
    kd = TrainConfig(experiment="pneu", model="resnet18", method="kd", lam=1.0, teacher=teacher,
                     per_class=100, epochs=10, image_size=224)
    assert planner.expected_minutes(kd) == pytest.approx(2 + 2000 * 1.5 / (16 * 38.5) / 60)
    # DenseNet-121's RBR ran out of memory on the paper's GPU: its RRR rate (3.0 it/s) scaled by
    # VGG-16's RBR/RRR (1.7 / 2.6)
    rbr = TrainConfig(experiment="pneu", model="densenet121", method="rbr", lam=1.0,
                      per_class=100, epochs=10, image_size=224)
    assert planner.expected_minutes(rbr) == pytest.approx(2 + 2000 / (16 * 3.0 * 1.7 / 2.6) / 60)


def test_time_limit_has_a_margin_a_floor_and_a_cap():
    assert planner.timeout_minutes([planner.expected_minutes(MEDICAL)]) == 10          # floor
    assert planner.timeout_minutes([13.35, 2.0]) == 27                                 # 2 x 13.35
    assert planner.timeout_minutes([1e6]) == 24 * 60                                   # cap
    job = RunJob("store", "auto")  # auto: a GPU only where the job is given one
    assert job.expected_minutes(MEDICAL, gpus_requested=True) == planner.expected_minutes(MEDICAL)
    assert job.expected_minutes(MEDICAL) == planner.expected_minutes(MEDICAL, gpu=False)
    assert RunJob("store", "cuda").expected_minutes(MEDICAL) == planner.expected_minutes(MEDICAL)


class _Minutes:
    """A job whose items are their own expected minutes."""

    def __call__(self, x):
        return x * 10

    def expected_minutes(self, x, gpus_requested=False):
        return float(x)


def test_submitit_time_limit_comes_from_the_runs_unless_given(tmp_path):
    derived = SubmititExecutor(tmp_path / "a", cluster="debug")
    assert not (tmp_path / "a").exists()  # nothing submitted: no job folder
    assert derived.map(_Minutes(), [3, 7]) == [30, 70]
    assert derived.executor.parameters["timeout_min"] == 14  # 2 x 7 minutes
    given = SubmititExecutor(tmp_path / "b", cluster="debug", timeout_min=90)
    assert given.map(_Minutes(), [3, 700]) == [30, 7000]
    assert given.executor.parameters["timeout_min"] == 90
    assert SubmititExecutor(tmp_path / "c", "debug", timeout_min=89.5).params["timeout_min"] == 90
    with pytest.raises(ValueError, match="submitit rejects the parameters.*gpus_per_nod"):
        SubmititExecutor(tmp_path / "e", "debug", gpus_per_nod=1).map(_Minutes(), [1])
    for bad in (0, -5, "soon", float("nan")):
        with pytest.raises(ValueError, match="timeout_min must be a positive number of minutes"):
            SubmititExecutor(tmp_path / "d", "debug", timeout_min=bad)


def test_a_submitit_job_that_dies_fails_alone(tmp_path):
    out = SubmititExecutor(tmp_path, cluster="local").map(int, ["7", "x"])
    assert out[0] == 7 and isinstance(out[1], Exception)
    assert one_line(out[1]) == ("FailedJobError: ValueError: invalid literal for int() with "
                                "base 10: 'x'")


def test_a_long_error_is_cut_in_the_summary_but_given_in_full_once():
    cfg = TrainConfig(model="two_layer_cnn", method="none")
    advice = "Put the weights under $TORCH_HOME/hub/checkpoints."
    long = RunFailed.of(cfg, RuntimeError("weights could not be loaded " + "x" * 300 + " " + advice))
    short = RunFailed.of(cfg, ValueError("bad λ"))
    assert len(long.error) == 200 and long.error.endswith("...") and advice not in long.error
    assert long.detail.startswith("RuntimeError: weights could not") and long.detail.endswith(advice)
    assert short.error == "ValueError: bad λ" and short.detail == ""
    text = str(RunsFailedError([short, long], 3))
    assert text.startswith("2 of 3 runs failed: ") and text.count("\n") == 1
    assert text.splitlines()[1] == f"The first error in full ({long.cell()}): {long.detail}"
    assert "\n" not in str(RunsFailedError([short], 3))  # nothing was cut: one line


# ------------------------------------------------------- a time limit on submitit's local cluster

def _slow_run(tmp_path: Path) -> TrainConfig:
    """A run of 4 epochs of ~1-2 s on one thread (the time limit's signal lands inside an epoch)
    on a PNEU folder of 2 x 150 noise images, which a job loads in a moment."""
    rng = np.random.default_rng(0)
    for split, n in (("train", 150), ("test", 10)):
        for cls in ("NORMAL", "PNEUMONIA"):
            folder = tmp_path / "pneu" / "chest_xray" / split / cls
            folder.mkdir(parents=True)
            for i in range(n):
                Image.fromarray(rng.integers(0, 256, (40, 40), dtype=np.uint8)).save(
                    folder / f"{i}.jpeg")
    return TrainConfig(experiment="pneu", model="two_layer_cnn", method="tap", lam=1e-2,
                       source=str(tmp_path / "pneu"), image_size=32, epochs=4, batch_size=16)


def _tasks(folder: Path) -> list[int]:
    """Live submitit tasks (``python -m submitit.core._submit FOLDER``) of the job folder."""
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"submitit.core._submit" in args and str(folder).encode() in args:
            pids.append(int(cmdline.parent.name))
    return pids


def _time_limit_after_each_epoch(checkpoint: Path, folder: Path, times: int, hit: list,
                                 stop: threading.Event) -> None:
    """What submitit's local controller does at a job's time limit (submitit's USR2 to the
    task), done ``times`` times, each when a new epoch's checkpoint lands: the task is then
    inside the next epoch, whose work is lost and must be redone after the requeue."""
    seen = None
    while len(hit) < times and not stop.is_set():
        try:
            st = checkpoint.stat()
            state = (st.st_ino, st.st_mtime_ns)
        except FileNotFoundError:
            state = None
        tasks = [p for p in _tasks(folder) if p not in hit]
        if state is not None and state != seen and tasks:
            os.kill(tasks[0], submitit.JobEnvironment._usr_sig())
            hit.append(tasks[0])
            seen = state
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="finds the job's task in /proc")
def test_a_run_past_its_time_limit_is_requeued_and_ends_as_an_uninterrupted_run(
        tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the job's torch threads, as the reference's
    folder, root, slow = tmp_path / "jobs", tmp_path / "runs", _slow_run(tmp_path)
    # a limit under 10 minutes: submitit counts each signal as a time-out, not a preemption (its
    # limit on requeues, 3, is then spent by time-outs, as on a busy node)
    executor = SubmititExecutor(folder, cluster="local", timeout_min=5)
    hit: list[int] = []
    stop = threading.Event()
    limits = threading.Thread(target=_time_limit_after_each_epoch,
                              args=(root / slow.key() / "checkpoint.pt", folder, 2, hit, stop))
    torch.set_num_threads(1)
    reference: dict = {}  # the same run uninterrupted, here, meanwhile
    uninterrupted = threading.Thread(target=lambda: reference.update(
        train_run(slow, tmp_path / "reference", device="cpu", progress=False)))
    limits.start()
    uninterrupted.start()
    try:
        [record] = executor.map(RunJob(str(root), "cpu"), [slow])
    finally:
        stop.set()
        limits.join()
        uninterrupted.join()
    assert len(hit) == 2  # timed out in epoch 2 and in epoch 3
    logs = "".join(p.read_text() for p in folder.rglob("*_log.*"))
    assert logs.count("WARNING submitit: Caught signal SIGUSR2") == 2
    assert logs.count("this job is timed-out") >= 2 and "Requeued job" in logs
    assert "from epoch 1" in logs and "from epoch 2" in logs  # each attempt resumed
    assert isinstance(record, dict) and record["status"] == "ok" and record["epochs_done"] == 4
    assert not (root / slow.key() / "checkpoint.pt").exists()
    for name in ("contaminated", "permuted", "clean", "val_loss"):
        assert record[name] == reference[name], name
    for got, want in zip(record["history"], reference["history"], strict=True):
        assert (got["task_loss"], got["xs_loss"]) == (want["task_loss"], want["xs_loss"])

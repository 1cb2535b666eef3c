"""``tapkit sweep``: chapters' runs wave by wave through an executor into the store. Tiny: the
quick λ search (three TAP runs) at one epoch."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tapkit import cli
from tapkit.config import TrainConfig
from tapkit.experiments import planner, sweep as sweep_module
from tapkit.experiments.store import ResultStore
from fakes import fake_train_run

ARGS = ["sweep", "--profile", "quick", "--chapters", "lambda_search", "--epochs", "1"]


def _entries(root: Path) -> dict[str, float]:
    """Every run's metrics.json and when it was written."""
    return {p.parent.name: p.stat().st_mtime_ns for p in (root / "runs").glob("*/metrics.json")}


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep") / "quick"
    assert cli.main(ARGS + ["--executor", "processes:2", "--results", str(root)]) == 0
    return root


def test_processes_fill_the_store_and_a_second_call_trains_nothing(filled, tmp_path):
    entries = _entries(filled)
    assert len(entries) == 3
    records = [json.loads((filled / "runs" / k / "metrics.json").read_text()) for k in entries]
    assert {r["config"]["method"] for r in records} == {"tap"} and all(r["status"] == "ok" for r in records)
    assert sorted(r["config"]["lam"] for r in records) == [1e-4, 1e-3, 1e-2]
    assert all(r["epochs_done"] == 1 for r in records)
    assert (filled / "tables" / "lambda_choice.csv").exists()
    assert cli.main(ARGS + ["--results", str(filled)]) == 0
    assert _entries(filled) == entries


def _spy_on_submitit(monkeypatch) -> list[list[str]]:
    """The keys of every job array the submitit executor is asked to run."""
    from tapkit.experiments import cluster

    arrays, real = [], cluster.SubmititExecutor.map

    def spy(self, fn, items):
        arrays.append([cfg.key() for cfg in items])
        return real(self, fn, items)

    monkeypatch.setattr(cluster.SubmititExecutor, "map", spy)
    return arrays


def test_submitit_debug_executor_trains_only_what_is_missing(filled, tmp_path, monkeypatch):
    pytest.importorskip("submitit")
    root = tmp_path / "quick"
    shutil.copytree(filled, root)
    before = _entries(root)
    gone = sorted(before)[0]
    shutil.rmtree(root / "runs" / gone)
    arrays = _spy_on_submitit(monkeypatch)
    executor = f"submitit:{tmp_path / 'jobs'}:debug"
    assert cli.main(ARGS + ["--executor", executor, "--results", str(root)]) == 0
    assert arrays == [[gone]]  # the stored runs were dropped before submitting
    after = _entries(root)
    assert set(after) == set(before)
    assert {k: v for k, v in after.items() if k != gone} == {k: v for k, v in before.items() if k != gone}


def test_a_resumed_submitit_sweep_with_every_run_stored_submits_no_job(filled, tmp_path,
                                                                       monkeypatch):
    pytest.importorskip("submitit")
    root = tmp_path / "quick"
    shutil.copytree(filled, root)
    before = _entries(root)
    arrays = _spy_on_submitit(monkeypatch)
    jobs = tmp_path / "jobs"
    assert cli.main(ARGS + ["--executor", f"submitit:{jobs}:local", "--results", str(root)]) == 0
    assert arrays == [] and not jobs.exists()  # no job array, not even submitit's folder
    assert _entries(root) == before


def test_one_failed_run_loses_no_other_and_a_rerun_trains_only_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    root = tmp_path / "quick"
    search = sweep_module.plans.search_configs(sweep_module.protocols.mnist("quick", epochs=1))
    broken = search[1]  # λ = 1e-3
    calls: list[str] = []
    monkeypatch.setattr("tapkit.experiments.store.train_run", fake_train_run(calls, {broken.key()}))
    assert cli.main(ARGS[:4] + ["lambda_search,mnist", "--epochs", "1", "--results", str(root)]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        f"tapkit: error: 1 of 3 runs failed: lambda_search/decoy-mnist two_layer_cnn tap "
        f"lam=0.001 seed=0/{broken.key()} (RuntimeError: CUDA out of memory. Tried to allocate "
        "2.00 GiB); not run, as they read those results: mnist. The other runs are stored: "
        "running again trains only these and the runs that wait on them."]
    assert sorted(calls) == sorted(c.key() for c in search)
    assert set(_entries(root)) == {c.key() for c in search} - {broken.key()}
    assert not (root / "tables" / "lambda_choice.csv").exists()  # no choice from a partial search

    calls.clear()
    monkeypatch.setattr("tapkit.experiments.store.train_run", fake_train_run(calls))
    assert cli.main(ARGS + ["--results", str(root)]) == 0
    assert calls == [broken.key()]
    assert "tap,0.001" in (root / "tables" / "lambda_choice.csv").read_text()


def test_dry_run_lists_what_a_sweep_would_submit_and_trains_nothing(filled, tmp_path, capsys):
    root = tmp_path / "quick"
    shutil.copytree(filled, root)
    before = _entries(root)
    gone = sorted(before)[2]
    cfg = TrainConfig.from_dict(json.loads((root / "runs" / gone / "metrics.json").read_text())["config"])
    shutil.rmtree(root / "runs" / gone)
    assert cli.main(ARGS + ["--results", str(root), "--dry-run"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"lambda_search/{planner.label(cfg)}/{gone}"]
    assert set(_entries(root)) == set(before) - {gone}

    # an empty store: the λ search's runs, then nothing of the chapter that reads its choice
    empty = tmp_path / "empty"
    assert cli.main(ARGS[:4] + ["mnist", "--epochs", "1", "--results", str(empty), "--dry-run"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.rsplit("/", 1)[0] for line in listed] == [
        f"lambda_search/decoy-mnist two_layer_cnn tap lam={lam} seed=0"
        for lam in ("0.0001", "0.001", "0.01")]
    assert not empty.exists()

    # a stored λ search: the chapter is planned from its choice, as the sweep would
    assert cli.main(ARGS[:4] + ["mnist", "--epochs", "1", "--results", str(filled), "--dry-run"]) == 0
    mnist = planner.waves(sweep_module.CHAPTERS["mnist"]("quick", filled, None, epochs=1))[0]
    stored = set(_entries(filled))
    assert capsys.readouterr().out.splitlines() == [
        f"mnist/{planner.label(c)}/{c.key()}" for c in mnist if c.key() not in stored]
    assert len(stored & {c.key() for c in mnist}) == 1  # its chosen TAP run on seed 0: the search's


def test_seeds_override_every_chapter_and_the_search_runs_on_the_first(filled, capsys):
    """``--seeds 0,1,2``: each chapter on those seeds (e.g. the deep-CNN tables over three seeds,
    from a cluster), the λ search on seed 0 as before, so it is not trained again."""
    args = ARGS[:4] + ["mnist", "--epochs", "1", "--results", str(filled), "--dry-run"]
    assert cli.main(args + ["--seeds", "0,1,2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    mnist = planner.waves(sweep_module.CHAPTERS["mnist"]("quick", filled, None, epochs=1,
                                                         seeds=[0, 1, 2]))[0]
    stored = set(_entries(filled))
    assert lines == [f"mnist/{planner.label(c)}/{c.key()}" for c in mnist if c.key() not in stored]
    assert {c.seed for c in mnist} == {0, 1, 2} and len(lines) == len(mnist) - 1  # TAP, seed 0
    # every case on every seed, Base (No XS on clean digits) included, as the profile trains it
    assert sorted((c.method, c.data) for c in mnist if c.seed == 2) == [
        ("none", "clean"), ("none", "contaminated"), ("rbr", "contaminated"),
        ("rrr", "contaminated"), ("tap", "contaminated")]
    assert [c.seed for c in mnist if c.data == "clean"] == [0, 1, 2]
    for bad in ("0,,1", "1,1", "-1"):
        with pytest.raises(SystemExit):
            cli.main(args + ["--seeds", bad])


def test_a_corrupted_entry_is_moved_aside_and_redone(filled, tmp_path):
    root = tmp_path / "quick"
    shutil.copytree(filled, root)
    before = _entries(root)
    broken = sorted(before)[1]
    (root / "runs" / broken / "metrics.json").write_text('{"status": "ok", "contam')
    assert cli.main(ARGS + ["--results", str(root)]) == 0
    after = _entries(root)
    assert json.loads((root / "runs" / broken / "metrics.json").read_text())["status"] == "ok"
    assert list((root / "runs" / broken).glob("metrics.json.corrupt-*"))
    assert {k: v for k, v in after.items() if k != broken} == {k: v for k, v in before.items() if k != broken}


def test_a_sweep_killed_midway_resumes_without_retraining(filled, tmp_path):
    # the sweep starts where an earlier one stored the first λ's run (the filled store's, copied:
    # a run less to train), so that the killed one has two to train and is killed after its first
    root = tmp_path / "quick"
    shutil.copytree(filled, root)
    kept = sorted(_entries(root), key=lambda k: json.loads(
        (root / "runs" / k / "metrics.json").read_text())["config"]["lam"])[0]
    for key in set(_entries(root)) - {kept}:
        shutil.rmtree(root / "runs" / key)
    shutil.rmtree(root / "tables")
    stored = _entries(root)
    assert list(stored) == [kept]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "tapkit.cli", *ARGS, "--results", str(root)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while len(_entries(root)) <= len(stored) and proc.poll() is None:
            time.sleep(0.2)
    finally:
        proc.kill()
        proc.wait()
    first = _entries(root)
    assert len(first) == 2 and first[kept] == stored[kept]  # killed before its last run
    assert not (root / "tables" / "lambda_choice.csv").exists()
    assert cli.main(ARGS + ["--results", str(root)]) == 0
    after = _entries(root)
    assert len(after) == 3 and all(after[k] == v for k, v in first.items())
    assert (root / "tables" / "lambda_choice.csv").exists()


def test_waves_put_teachers_before_their_students_once():
    teacher = TrainConfig(data="holdout", clean_fraction=0.1)
    a = TrainConfig(method="kd", lam=1.0, teacher=teacher, clean_fraction=0.1)
    b = a.replace(method="at")
    plain = TrainConfig(method="tap", lam=1e-3)
    assert planner.waves([a, plain, b, a]) == [[teacher, plain], [a, b]]
    assert planner.waves([]) == []


def test_chapter_order_adds_the_lambda_search_and_rejects_unknown_chapters():
    assert sweep_module.chapter_order(["mnist", "knee"]) == ["lambda_search", "mnist", "knee"]
    # the medical Setting-2 chapters read Setting 1's PNEU/KNEE λ choice and runs
    assert sweep_module.chapter_order(["medical_distillation"]) == [
        "pneu", "knee", "medical_distillation"]
    with pytest.raises(ValueError, match="unknown chapter"):
        sweep_module.chapter_order(["mnsit"])


def test_a_student_whose_teacher_is_missing_raises_when_asked_not_to_train_it(tmp_path):
    teacher = TrainConfig(data="holdout", clean_fraction=0.1, epochs=1)
    student = TrainConfig(method="kd", lam=1.0, teacher=teacher, clean_fraction=0.1, epochs=1)
    with pytest.raises(RuntimeError, match="is not in"):
        ResultStore(tmp_path).run(student, "cpu", progress=False, train_teachers=False)
    assert not (tmp_path / student.key() / "metrics.json").exists()


def test_students_of_a_failed_teacher_are_not_submitted(tmp_path, monkeypatch):
    from tapkit.experiments.executors import run_many
    from tapkit.experiments.failures import RunsFailedError

    monkeypatch.setenv("TQDM_DISABLE", "1")
    teacher = TrainConfig(data="holdout", clean_fraction=0.1, epochs=1)
    student = TrainConfig(method="kd", lam=1.0, teacher=teacher, clean_fraction=0.1, epochs=1)
    plain = TrainConfig(method="tap", lam=1e-3, epochs=1)
    calls: list[str] = []
    monkeypatch.setattr("tapkit.experiments.store.train_run", fake_train_run(calls, {teacher.key()}))
    with pytest.raises(RunsFailedError) as err:
        run_many([student, plain], tmp_path, "cpu")
    assert calls == [teacher.key(), plain.key()]  # the student never ran
    assert [(f.key, f.error) for f in err.value.failures] == [
        (teacher.key(), "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"),
        (student.key(), f"not run: the run it needs, {teacher.key()}, failed")]
    assert str(err.value).startswith("2 of 3 runs failed: decoy-mnist two_layer_cnn none lam=0 "
                                     f"seed=0 data=holdout@0.1/{teacher.key()} (RuntimeError")
    assert ResultStore(tmp_path).load(plain)["status"] == "ok"


def test_a_failure_summary_is_one_line_naming_the_first_five():
    from tapkit.experiments.failures import RunFailed, RunsFailedError, one_line

    trace = ("Job (task=0) failed during processing with trace:\n----\nTraceback (most recent "
             "call last):\n  File \"x.py\", line 1, in f\n    g()\nValueError: bad mask\n\n----\n"
             "You can check full logs at:\n  - /jobs/1_0_log.err")
    assert one_line(RuntimeError(trace)) == "RuntimeError: ValueError: bad mask"
    assert one_line(KeyError("k")) == "KeyError: 'k'"
    assert one_line("Job 7 has not produced any output (state: TIMEOUT)\nstderr: ...") == (
        "Job 7 has not produced any output (state: TIMEOUT)")
    assert len(one_line("x" * 500)) == 200
    failures = [RunFailed(f"k{i}", f"run {i}", "E: e", "mnist") for i in range(7)]
    text = str(RunsFailedError(failures, 9))
    assert "\n" not in text and text.startswith("7 of 9 runs failed: mnist/run 0/k0 (E: e); ")
    assert "mnist/run 4/k4" in text and "k5" not in text and "; and 2 more (each is in the log)" in text


def test_every_registered_profile_can_be_swept(tmp_path, capsys):
    """``--profile`` takes the profiles' registry (smoke included: the quick one trimmed to
    seconds, e.g. to try a cluster): the smoke λ search is its one grid value, 1e-3."""
    from tapkit.experiments.protocols import PROFILES

    assert {"quick", "paper", "smoke"} <= set(PROFILES)
    args = ["sweep", "--profile", "smoke", "--chapters", "lambda_search", "--dry-run",
            "--results", str(tmp_path / "smoke")]
    assert cli.main(args) == 0
    listed = [line.rsplit("/", 1)[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == ["lambda_search/decoy-mnist two_layer_cnn tap lam=0.001 seed=0"]
    with pytest.raises(SystemExit):
        cli.main(["sweep", "--profile", "quik", "--dry-run"])

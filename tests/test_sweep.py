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


def test_submitit_debug_executor_trains_only_what_is_missing(filled, tmp_path):
    pytest.importorskip("submitit")
    root = tmp_path / "quick"
    shutil.copytree(filled, root)
    before = _entries(root)
    gone = sorted(before)[0]
    shutil.rmtree(root / "runs" / gone)
    executor = f"submitit:{tmp_path / 'jobs'}:debug"
    assert cli.main(ARGS + ["--executor", executor, "--results", str(root)]) == 0
    after = _entries(root)
    assert set(after) == set(before)
    assert {k: v for k, v in after.items() if k != gone} == {k: v for k, v in before.items() if k != gone}


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


def test_a_sweep_killed_midway_resumes_without_retraining(tmp_path):
    root = tmp_path / "quick"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "tapkit.cli", *ARGS, "--results", str(root)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not _entries(root) and proc.poll() is None:
            time.sleep(0.2)
    finally:
        proc.kill()
        proc.wait()
    first = _entries(root)
    assert len(first) >= 1
    assert cli.main(ARGS + ["--results", str(root)]) == 0
    after = _entries(root)
    assert len(after) == 3 and all(after[k] == v for k, v in first.items())


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

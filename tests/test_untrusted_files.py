"""Files from outside (a checkpoint in a ``--out`` folder, a copied results store) are data, never
code: a checkpoint whose unpickling would run code runs none, and a file that cannot be read is
moved aside with one warning line and its run redone."""

import json
import logging

import torch

from tapkit import cli
from tapkit.config import TrainConfig
from tapkit.experiments import store as runner
from tapkit.experiments.store import ResultStore
from tapkit.results import write_json
from fakes import fake_train_run


class Plant:
    """Unpickled, it creates the file ``path`` (``open(path, "w")``): what a crafted checkpoint
    can make ``torch.load(..., weights_only=False)`` do, a shell command as easily."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _plant(path, witness, **more):
    torch.save({"model": Plant(str(witness)), "epoch": 1, **more}, path)
    loaded = torch.load(path, weights_only=False)  # the plant is live: unpickled, it writes
    loaded["model"].close()
    assert witness.exists()
    witness.unlink()
    return path.read_bytes()


def _warnings(caplog, name):
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and name in r.getMessage()]


def test_a_planted_checkpoint_runs_no_code_and_the_run_starts_afresh(tmp_path, caplog):
    witness, out = tmp_path / "pwned", tmp_path / "run"
    out.mkdir()
    planted = _plant(out / "checkpoint.pt", witness)
    assert cli.main(["train", "--epochs", "1", "--batch-size", "256", "--out", str(out)]) == 0
    assert not witness.exists()
    record = json.loads((out / "metrics.json").read_text())
    assert record["status"] == "ok" and record["epochs_done"] == 1 and len(record["history"]) == 1
    aside = [p for p in out.iterdir() if p.name.startswith("checkpoint.pt.corrupt-")]
    assert len(aside) == 1 and aside[0].read_bytes() == planted
    warnings = _warnings(caplog, "checkpoint.pt")
    assert len(warnings) == 1 and "\n" not in warnings[0] and "moved aside" in warnings[0]
    assert "more than tensors and plain values" in warnings[0]


CFG = TrainConfig(method="tap", lam=1e-3, epochs=1)


def test_a_planted_model_in_a_copied_store_runs_no_code_and_is_redone(tmp_path, monkeypatch,
                                                                       caplog):
    calls = []

    monkeypatch.setattr(runner, "train_run", fake_train_run(
        calls, seen="files", weights={"w": torch.arange(3.0)}))
    store, witness = ResultStore(tmp_path), tmp_path / "pwned"
    run_dir = store.path(CFG)
    run_dir.mkdir(parents=True)
    write_json(run_dir / "metrics.json", {"status": "ok"})  # the copied entry says "trained"
    _plant(run_dir / "model.pt", witness)
    weights = store.weights(CFG)
    assert not witness.exists()
    assert list(weights) == ["w"] and torch.equal(weights["w"], torch.tensor([0.0, 1.0, 2.0]))
    assert len(calls) == 1 and "model.pt" not in calls[0] and "metrics.json" not in calls[0]
    names = sorted(p.name.split(".corrupt-")[0] for p in run_dir.iterdir() if ".corrupt-" in p.name)
    assert names == ["metrics.json", "model.pt"]
    assert len(_warnings(caplog, "model.pt")) == 2  # the model, and the record that vouched for it
    assert torch.equal(store.weights(CFG)["w"], weights["w"]) and len(calls) == 1

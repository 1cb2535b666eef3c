"""Protocols: ``quick`` (a 2-core laptop CPU, embedded data, minutes) and ``paper`` (a GPU, full
data, the paper's Experimental Design section).

Notebooks take ``profile`` as a papermill parameter and fill every parameter left as ``None``
from :func:`settings`, so ``-p profile paper`` switches everything and ``-p seeds "[1]"``
overrides one thing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .training import TrainConfig

# Paper: SGD (momentum 0.9, which the paper's text calls "weight decay of 0.9"), lr 1e-3, batch 256,
# 50 epochs, five seeds, full MNIST. Quick: Adam 1e-3 on the 5,000 embedded digits (with SGD the
# small data set leaves No XS underfit and it never learns the decoy; see the reproduction report).
MNIST = {
    "quick": dict(source="embedded", seeds=[0], epochs=5, batch_size=64, optimizer="adam", lr=1e-3),
    "paper": dict(source="torchvision", seeds=[0, 1, 2, 3, 4], epochs=50, batch_size=256,
                  optimizer="sgd", lr=1e-3),
}

# Paper lambdas for the two-layer CNN (appendix, hyperparameter tables).
MNIST_LAMBDAS = {"tap": 1e-3, "rrr": 1e-3, "rbr": 1e4}
MNIST_TEACHER_LAMBDAS = {"tap": 1e-4, "rrr": 1e-2, "rbr": 1e4}
MNIST_KD_LAMBDAS = {"at": 1.0, "jt": 1e-7, "kd": 1.0}

# Setting 2 (teacher annotations) and the distillation comparison: what each profile trains.
# Teachers hold out `fractions` of the training split; students train at `train_taus`; RRR/RBR
# with teacher masks (`xs_methods` beyond TAP) and KD/AT/JT (`kd_fractions`) cost the most, so the
# quick profile keeps one threshold, TAP only and the 10% teacher.
MNIST_TEACHERS = {
    "quick": dict(fractions=[0.1, 0.01], train_taus=[0.01], xs_methods=["tap"],
                  kd_fractions=[0.1]),
    "paper": dict(fractions=[0.1, 0.01], train_taus=[0.01, 0.05, 0.1],
                  xs_methods=["tap", "rrr", "rbr"], kd_fractions=[0.1, 0.01]),
}

# Medical protocol (PNEU/KNEE chapters, tapkit.medical): 224 px, batch 16, ImageNet weights, SGD
# lr 1e-5, five seeds (paper). The quick profile runs the digits stand-in at 32 px (the smallest
# size VGG-16's five max-pools accept) from random initialisation (no weights offline) with Adam,
# batch 8, three epochs, on one CPU thread (measured: two threads on these small steps were
# slower, up to 4x under load). Measured on the 2-core CPU, ResNet-18 and DenseNet-121 No XS
# learn the stand-in's tags in that time (KNEE's five tags less reliably). VGG-16 (no BatchNorm)
# learned nothing from random initialisation in 24 steps at three learning rates (constant
# predictions), and a quick-profile PNEU+KNEE sweep of it costs ~4 minutes even at one epoch
# (its full-derivative RBR step takes ~16 s: third derivatives through its 120M-parameter
# classifier), so the quick profile evaluates VGG-16 untrained (epochs 0) and says so; its
# training steps run in the speed-and-memory chapter. The stripe appendix is paper-profile only.
# `per_class` and `stripe_models` may be dicts keyed by experiment ("pneu", "knee").
MEDICAL = {
    "quick": dict(source="embedded", seeds=[0], epochs=3, batch_size=8, optimizer="adam", lr=1e-3,
                  image_size=32, per_class={"pneu": 28, "knee": 12}, pretrained=False, threads=1,
                  model_overrides={"vgg16": dict(epochs=0)}, stripe_models=[]),
    "paper": dict(source=None, seeds=[0, 1, 2, 3, 4], epochs=50, batch_size=16, optimizer="sgd",
                  lr=1e-5, image_size=224, per_class=None, pretrained=True, threads=None,
                  model_overrides={}, stripe_models=["vgg16", "resnet18", "densenet121"]),
}

# Table 1 (speed and memory of one training step): the paper's batch of 16 224-px images on a GPU;
# on the quick profile's 2-core CPU a small batch on every core (the chapter runs alone), and
# fewer steps for VGG-16 (its RBR step alone takes ~8 s there). `steps` (or
# `model_steps[model]`) are timed after `warmup` steps; the fastest gives it/s (tapkit.benchmark).
BENCH = {
    "quick": dict(batch_size=4, image_size=64, steps=5, warmup=1, threads=None,
                  model_steps={"vgg16": 3}),
    "paper": dict(batch_size=16, image_size=224, steps=10, warmup=2, threads=None, model_steps={}),
}


def settings(table: dict[str, dict], profile: str, **overrides: Any) -> dict[str, Any]:
    """The profile's settings with every non-``None`` override applied."""
    if profile not in table:
        raise ValueError(f"unknown profile {profile!r}; expected one of {sorted(table)}")
    out = dict(table[profile])
    out.update({k: v for k, v in overrides.items() if v is not None})
    return out


def mnist_config(s: dict[str, Any], **fields: Any) -> TrainConfig:
    """A Decoy-MNIST config from profile settings ``s`` and per-run fields."""
    return TrainConfig(experiment="decoy-mnist", model="two_layer_cnn", source=s["source"],
                       epochs=s["epochs"], batch_size=s["batch_size"], optimizer=s["optimizer"],
                       lr=s["lr"], **fields)


def medical_config(s: dict[str, Any], experiment: str, model: str, **fields: Any) -> TrainConfig:
    """A PNEU/KNEE (or stand-in) config from profile settings ``s`` and per-run fields."""
    return TrainConfig(experiment=experiment, model=model, source=s["source"] or "embedded",
                       epochs=s["epochs"], batch_size=s["batch_size"], optimizer=s["optimizer"],
                       lr=s["lr"], image_size=s["image_size"], per_class=s["per_class"],
                       pretrained=s["pretrained"], **fields)


def results_root(profile: str, base: str | Path = "results") -> Path:
    """Where a profile's runs and tables live: ``results/<profile>/``."""
    return Path(base) / profile


def mnist_lambdas(root: str | Path, lambdas: dict[str, float] | None = None) -> dict[str, float]:
    """The lambdas the MNIST chapters train with: the paper's, replaced by the lambda search's
    choice (``<root>/tables/lambda_choice.csv``) when no ``lambdas`` are given, then by ``lambdas``.

    Shared by the chapters that read the Setting-1 MNIST models, so they all ask for the same
    configs and hit the same cached runs."""
    import csv

    lams = dict(MNIST_LAMBDAS)
    choice = Path(root) / "tables" / "lambda_choice.csv"
    if lambdas is None and choice.exists():
        with open(choice, newline="") as fh:
            lams.update({row["method"]: float(row["lam"]) for row in csv.DictReader(fh)})
    lams.update(lambdas or {})
    return lams


def mnist_case_config(s: dict[str, Any], case: str, lams: dict[str, float], seed: int) -> TrainConfig:
    """The Setting-1 MNIST run of one case: ``"base"`` (No XS trained on clean digits) or a method
    (``none``, ``rrr``, ``rbr``, ``tap``) trained on contaminated digits with its lambda."""
    if case == "base":
        return mnist_config(s, method="none", data="clean", seed=seed)
    return mnist_config(s, method=case, lam=lams.get(case, 0.0), seed=seed)

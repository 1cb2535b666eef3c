"""The ``smoke`` profile: the quick profile trimmed to seconds (:func:`smoke`), so that the
browser tests build a whole (small) book within minutes (tests/test_browser.py); its numbers
test the pages, not the paper.
"""

from __future__ import annotations

from dataclasses import replace

from ..protocols import Profile, register_profile
from .quick import QUICK


def smoke(quick: Profile) -> Profile:
    """``quick`` on one seed and one epoch, the stand-ins' smallest data, one λ per search and a
    benchmark of one step: every chapter runs, in seconds."""
    tiny = {"per_class": {"pneu": 6, "knee": 3}, "batch_size": 8}
    medical = quick.medical
    return Profile(
        "smoke",
        # every MNIST case, RBR too (one epoch: seconds), so that the pages' every row is tested
        mnist=replace(quick.mnist, name="smoke", seeds=(0,), epochs=1, search={"tap": (1e-3,)},
                      ablation={"tap": (1e-3,)}, not_run={}),
        mnist_teachers=replace(quick.mnist_teachers, seeds=(0,)),
        medical=replace(medical, name="smoke", seeds=(0,), epochs=1,
                        per_class=tiny["per_class"], image_size=32, test_per_class=None,
                        model_overrides={"vgg16": {"lr": 1e-4}, "efficientnet_b0": tiny,
                                         "mobilenet_v2": tiny},
                        search={"tap": {"resnet18": (1e-2,), "densenet121": (1e-2,)},
                                "rrr": {"resnet18": (1e2,)}},
                        pretraining=replace(medical.pretraining, epochs=1, per_class=4)),
        medical_teachers=replace(quick.medical_teachers, teacher_epochs=1, models=("resnet18",)),
        bench=replace(quick.bench, batch_size=2, image_size=32, steps=1, warmup=0,
                      model_steps={}, paired_steps=2, model_paired_steps={}, memory_passes=2,
                      efficiency=(("two_layer_cnn@8x28", "sgd"), ("resnet18@2x32", "adam")),
                      efficiency_steps=1))


SMOKE = register_profile(smoke(QUICK))

"""The XS-method registry: its facts, its errors, and one training step of every registered model
with every registered method (RBR on BatchNorm networks included; KD/AT/JT from a tiny teacher)."""

import copy
import dataclasses

import pytest
import torch
from torch import nn

from tapkit import compiled, methods, models
from tapkit.config import TrainConfig
from tapkit.fit import make_optimizer, step_losses
from tapkit.method_options import AtOptions, NoOptions, RbrOptions, TapOptions
from tapkit.methods import Teacher, XSMethod, get_method, list_methods, register_method


def test_the_papers_methods_are_registered_in_its_order():
    assert list_methods() == ["none", "tap", "rrr", "rbr", "kd", "at", "jt"]
    assert methods.methods_where(teacher=True) == ["kd", "at", "jt"]
    assert methods.methods_where(input_grad=True) == ["rrr", "rbr", "jt"]
    assert methods.methods_where(activations=True) == ["tap", "at"]
    assert methods.methods_where(compilable=True) == ["none", "tap", "kd", "at"]
    assert get_method("rbr").options is RbrOptions and get_method("tap").options is TapOptions
    assert get_method("none").options is NoOptions and get_method("at").options is AtOptions


def test_unknown_method_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown XS method 'gradcam'; expected one of \['none', "
                                         r"'tap', 'rrr', 'rbr', 'kd', 'at', 'jt'\]"):
        get_method("gradcam")
    with pytest.raises(ValueError, match="unknown XS method"):
        TrainConfig(method="gradcam")


def test_registry_facts_drive_validation_and_compilation():
    with pytest.raises(ValueError, match="needs a teacher"):
        TrainConfig(method="at", lam=1.0)
    with pytest.raises(ValueError, match="already registered"):
        register_method(XSMethod("tap", None))
    with pytest.raises(ValueError, match="double backward"):
        register_method(XSMethod("grad_thing", None, input_grad=True))
    for name in list_methods():
        if get_method(name).compilable:
            compiled.check_compilable(name)
        else:
            with pytest.raises(ValueError, match="double backward"):
                compiled.check_compilable(name)


def test_adding_a_method_is_one_entry(monkeypatch):
    """A new method registered once trains through the unchanged loop: here an L1 penalty on the
    logits, which needs nothing but the batch."""
    monkeypatch.setattr(methods, "_METHODS", dict(methods._METHODS))
    register_method(XSMethod("logit_l1", lambda b: b.logits.abs().mean()))
    model = models.get_model("two_layer_cnn", 10)
    x, y = torch.randn(4, 1, 28, 28), torch.tensor([0, 1, 2, 3])
    cfg = TrainConfig(method="logit_l1", lam=1.0)
    task, xs = step_losses(model, x, y, torch.zeros(4, 1, 28, 28), cfg, ("relu1", "relu2"))
    assert xs.item() == pytest.approx(model(x).abs().mean().item(), rel=1e-6)


def test_no_xs_is_the_one_entry_without_an_xs_term(monkeypatch):
    """The tables' No XS rows are named by the registry (:func:`methods.no_xs`), so a second
    entry of that kind is an error where the name is asked for, not a silent pick."""
    assert methods.no_xs() == "none" and get_method(methods.no_xs()).kind is methods.Kind.NO_XS
    monkeypatch.setattr(methods, "_METHODS", dict(methods._METHODS))
    register_method(XSMethod("plain", None, kind=methods.Kind.NO_XS))
    with pytest.raises(ValueError, match=r"one registered method of kind NO_XS, found "
                                         r"\['none', 'plain'\]"):
        methods.no_xs()


def _tiny_teacher(in_channels: int, layers: int, num_classes: int = 3) -> Teacher:
    """A small CNN with as many target layers as the student (AT pairs them up)."""
    mods, targets = [], []
    for i in range(layers):
        mods += [nn.Conv2d(in_channels if i == 0 else 4, 4, 3, padding=1), nn.ReLU()]
        targets.append(str(2 * i + 1))
    net = nn.Sequential(*mods, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, num_classes))
    return Teacher(net.eval(), tuple(targets))


@pytest.mark.parametrize("name", models.list_models())
def test_every_model_takes_one_step_with_every_method(name):
    torch.manual_seed(0)
    channels, side = (1, 28) if name == "two_layer_cnn" else (3, 32)
    built = models.build_model(name, num_classes=3, in_channels=channels, image_size=side)
    model = built.model.train()
    x = torch.randn(2, channels, side, side)
    y = torch.tensor([0, 2])
    mask = torch.zeros(2, 1, side, side)
    mask[:, :, : side // 2, : side // 2] = 1.0
    teacher = _tiny_teacher(channels, len(built.targets))
    teacher_cfg = TrainConfig(model=name, data="holdout", clean_fraction=0.1)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    for method in list_methods():
        model.load_state_dict(start)  # every method steps from the same weights
        entry = get_method(method)
        cfg = TrainConfig(model=name, method=method, lam=1.0, optimizer="sgd",
                          teacher=teacher_cfg if entry.needs_teacher else None)
        opt = make_optimizer(model, cfg)
        task, xs = step_losses(model, x, y, mask, cfg, built.targets,
                               teacher if entry.needs_teacher else None)
        assert torch.isfinite(task) and torch.isfinite(xs), (name, method)
        # no term: exactly 0; a term: strictly positive on a quarter-image mask of random
        # weights and inputs (a term silently 0 would train nothing). In float32 a fresh
        # EfficientNet-B0's RBR underflows to 0 (input gradient ~1e-18 through BatchNorm's
        # initial running statistics; the term ~1e-64): float64 tells it from a term that is 0
        if entry.term is None:
            assert xs.item() == 0.0, (name, method)
        elif xs.item() == 0.0:
            double = copy.deepcopy(model).double()
            t64 = Teacher(copy.deepcopy(teacher.model).double(), teacher.targets)
            _, xs64 = step_losses(double, x.double(), y, mask.double(), cfg, built.targets,
                                  t64 if entry.needs_teacher else None)
            assert xs64.item() > 0.0, (name, method)
        else:
            assert xs.item() > 0.0, (name, method)
        # the step reaches the input layer (the first parameter; a copy of that one only:
        # VGG-16's whole 0.5 GB of weights copied per method cost more than its steps)
        first = next(model.parameters())
        before = first.detach().clone()
        opt.zero_grad(set_to_none=True)
        (task + xs).backward()
        opt.step()
        assert not torch.equal(before, first), (name, method)
        assert all(not m.training for m in teacher.model.modules()), "the teacher stays frozen"

import urllib.error

import pytest
import torch

from tapkit import models
from tapkit.losses import tap
from tapkit.training import TrainConfig, make_optimizer, step_losses


def _input(name):
    if name == "two_layer_cnn":
        return torch.randn(2, 1, 28, 28), 1
    return torch.randn(2, 3, 32, 32), 3


@pytest.mark.parametrize("name", models.list_models())
def test_every_registered_model_exposes_its_targets_and_trains_one_tap_step(name):
    x, channels = _input(name)
    built = models.build_model(name, num_classes=3, in_channels=channels)
    assert built.weights == "random" and len(built.targets) >= 2
    model = built.model.train()
    with models.capture(model, built.targets) as acts:
        logits = model(x)
    assert logits.shape == (2, 3)
    assert list(acts) == list(built.targets)
    for act in acts.values():
        assert act.dim() == 4 and act.shape[0] == 2 and act.requires_grad
    mask = torch.zeros(2, 1, *x.shape[-2:])
    mask[:, :, :6, :6] = 1.0
    cfg = TrainConfig(model=name, method="tap", lam=1.0)
    opt = make_optimizer(model, cfg)
    task, xs = step_losses(model, x, torch.tensor([0, 2]), mask, cfg, built.targets)
    assert torch.isfinite(task) and xs.item() > 0
    before = [p.detach().clone() for p in model.parameters()]
    (task + xs).backward()
    opt.step()
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters()))


def test_unknown_model_lists_the_valid_ones():
    with pytest.raises(ValueError, match="resnet18") as err:
        models.get_model("resnet19", 2)
    assert "two_layer_cnn" in str(err.value)


def test_unknown_layer_lists_the_valid_ones():
    model = models.get_model("two_layer_cnn", 10)
    with pytest.raises(ValueError, match="valid names: conv1, relu1"):
        with models.capture(model, ["relu1", "relu3"]):
            pass
    with pytest.raises(ValueError, match="empty"):
        with models.capture(model, []):
            pass


def test_capture_removes_hooks_even_after_an_exception():
    model = models.get_model("two_layer_cnn", 10)
    with pytest.raises(RuntimeError, match="boom"):
        with models.capture(model, ["relu1", "relu2"]):
            model(torch.randn(1, 1, 28, 28))
            raise RuntimeError("boom")
    assert all(not m._forward_hooks for m in model.modules())


def test_captured_activation_is_the_module_output_and_trains():
    model = models.get_model("two_layer_cnn", 10)
    x = torch.randn(2, 1, 28, 28)
    with models.capture(model, ["relu1"]) as acts:
        model(x)
    torch.testing.assert_close(acts["relu1"], torch.relu(model.conv1(x)))
    mask = torch.ones(2, 1, 28, 28)
    tap([acts["relu1"]], mask).backward()
    assert model.conv1.weight.grad.abs().sum() > 0


def test_pretrained_offline_falls_back_with_one_warning(monkeypatch):
    import torch.hub

    def offline(*args, **kwargs):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", offline)
    monkeypatch.setattr(models, "_WARNED", set())
    with pytest.warns(UserWarning, match="random initialisation"):
        built = models.build_model("resnet18", 2, 3, pretrained=True)
    assert built.weights == "random (offline fallback)"
    with _no_warning():
        again = models.build_model("resnet18", 2, 3, pretrained=True)
    assert again.weights == "random (offline fallback)"


class _no_warning:
    def __enter__(self):
        import warnings
        self._cm = warnings.catch_warnings(record=True)
        self.records = self._cm.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self._cm.__exit__(*exc)
        assert not [r for r in self.records if "random initialisation" in str(r.message)]


def test_two_layer_cnn_matches_the_paper_architecture():
    model = models.get_model("two_layer_cnn", 10)
    assert model.conv1.out_channels == 100 and model.conv2.out_channels == 100
    assert model.fc.in_features == 3600

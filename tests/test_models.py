import copy
import urllib.error

import pytest
import torch

from tapkit import models, weights
from tapkit.losses import tap
from tapkit.config import TrainConfig
from tapkit.fit import make_optimizer, step_losses


def _input(name):
    if name == "two_layer_cnn":
        return torch.randn(2, 1, 28, 28), 1
    return torch.randn(2, 3, 32, 32), 3


@pytest.mark.parametrize("name", models.list_models())
def test_every_registered_model_exposes_its_targets_and_trains_one_tap_step(name):
    """... and every target's activation map (Eq. 6, after σ) is non-negative."""
    x, channels = _input(name)
    built = models.build_model(name, num_classes=3, in_channels=channels)
    assert built.weights == "random" and len(built.targets) >= 2
    assert dict(built.sigma) == models.target_sigma(name)
    model = built.model.train()
    with models.capture(model, built.targets, built.sigma) as acts:
        logits = model(x)
    assert logits.shape == (2, 3)
    assert list(acts) == list(built.targets)
    for layer, act in acts.items():
        assert act.dim() == 4 and act.shape[0] == 2 and act.requires_grad
        assert act.sum(1).min().item() >= 0, f"{name}.{layer}: negative activation map"
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



@pytest.mark.parametrize("name", models.list_models())
def test_the_compiled_step_penalises_the_eager_steps_activations(name, monkeypatch):
    """One capture path: the compiled step's code computes the eager step's TAP term (and its
    class-weighted task loss) to 1e-5 on every registered model, σ included (Eq. 6); before, its own hooks skipped σ (EfficientNet-B0
    0.0068 against the eager 0.0311). ``torch.compile`` is the identity here (Dynamo tracing a
    DenseNet costs ~30 CPU-s); MobileNet-v2, with σ on every target, is traced by Dynamo for
    real."""
    from tapkit.compiled import compiled_step

    if name != "mobilenet_v2":
        monkeypatch.setattr(torch, "compile", lambda fn, **_: fn)
    x, channels = _input(name)
    torch.manual_seed(0)
    built = models.build_model(name, num_classes=3, in_channels=channels)
    model = built.model.eval()  # BatchNorm on running statistics: the two passes see one function
    mask = torch.zeros(2, 1, *x.shape[-2:])
    mask[:, :, :6, :6] = 1.0
    y = torch.tensor([0, 2])
    cfg = TrainConfig(model=name, method="tap", lam=1.0)
    weight = torch.tensor([0.2, 0.3, 0.5])  # PNEU's released class weights travel too
    with torch.no_grad():
        want = step_losses(model, x, y, mask, cfg, built.targets, class_weight=weight)
        torch._dynamo.reset()
        with compiled_step(model, cfg, built.targets, backend="eager",
                           class_weight=weight) as step:
            got = step(x, y, mask)
    assert want[1].item() > 0
    assert torch.allclose(got[1], want[1], rtol=1e-5, atol=1e-7), (got[1].item(), want[1].item())
    assert torch.allclose(got[0], want[0], rtol=1e-5)
    assert not any(model.get_submodule(t)._forward_hooks for t in built.targets)

@pytest.mark.parametrize("name", models.list_models())
def test_the_layout_is_the_registrys_and_computes_the_nchw_function(name):
    """A channels_last architecture has its convolution weights in NHWC and computes what the
    same weights in NCHW compute, to float rounding; the others stay NCHW."""
    x, channels = _input(name)
    torch.manual_seed(0)
    model = models.build_model(name, num_classes=3, in_channels=channels).model.eval()
    conv = next(m for m in model.modules() if isinstance(m, torch.nn.Conv2d)  # layout shows
                and m.weight.shape[1] > 1 and m.kernel_size != (1, 1))  # in C > 1 and k > 1 only
    nhwc = models.get_spec(name).channels_last
    assert conv.weight.is_contiguous(memory_format=torch.channels_last) == nhwc
    assert conv.weight.is_contiguous() == (not nhwc)
    nchw = copy.deepcopy(model).to(memory_format=torch.contiguous_format)
    with torch.no_grad():
        ours = model(x)
        reference = nchw(x)
    torch.testing.assert_close(ours, reference, rtol=1e-4, atol=1e-5)


def test_unknown_model_lists_the_valid_ones():
    with pytest.raises(ValueError, match="resnet18") as err:
        models.get_model("resnet19", 2)
    assert "two_layer_cnn" in str(err.value)


def test_unknown_layer_lists_the_valid_ones():
    model = models.get_model("two_layer_cnn", 10)
    with pytest.raises(ValueError, match="valid names: conv1, pool1, relu1"):
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
    torch.testing.assert_close(acts["relu1"], torch.relu(model.pool1(model.conv1(x))))
    mask = torch.ones(2, 1, 28, 28)
    tap([acts["relu1"]], mask).backward()
    assert model.conv1.weight.grad.abs().sum() > 0


def test_pretrained_offline_falls_back_with_one_warning(monkeypatch):
    import torch.hub

    def offline(*args, **kwargs):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", offline)
    monkeypatch.setattr(weights, "_WARNED", set())
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


def test_two_layer_cnn_pooling_before_relu_is_the_papers_block_bit_for_bit():
    """conv -> ReLU -> max-pool (Appendix B) and the model's conv -> max-pool -> ReLU: the same
    outputs and the same gradients, exactly, for the task loss and an input-gradient penalty."""
    torch.manual_seed(3)
    model = models.get_model("two_layer_cnn", 10)
    x = torch.randn(8, 1, 28, 28, requires_grad=True)
    y = torch.randint(0, 10, (8,))

    def paper(x):
        h = model.pool1(torch.relu(model.conv1(x)))
        return model.fc(torch.flatten(model.pool2(torch.relu(model.conv2(h))), 1))

    grads = []
    for forward in (model, paper):
        logits = forward(x)
        (gx,) = torch.autograd.grad(torch.log_softmax(logits, 1).sum(), x, create_graph=True)
        loss = torch.nn.functional.cross_entropy(logits, y) + gx.pow(2).sum()
        grads.append([logits.detach(), *torch.autograd.grad(loss, list(model.parameters()))])
    assert all(torch.equal(a, b) for a, b in zip(*grads))
    assert grads[0][1].abs().sum() > 0


def test_target_sizes_are_the_maps_d_m_l_is_brought_to():
    # 28 px: conv1 (pad 1) 28 -> pool1, relu1 14; conv2 (no pad) 12 -> pool2, relu2 6
    assert models.target_sizes("two_layer_cnn", 1, 28) == {"relu1": (14, 14), "relu2": (6, 6)}
    # 64 px: stem stride 2 -> 32, max-pool -> 16 = layer1, then each stage halves
    assert models.target_sizes("resnet18", 3, 64) == {"layer1": (16, 16), "layer2": (8, 8),
                                                      "layer3": (4, 4), "layer4": (2, 2)}


def test_sigma_is_what_makes_signed_targets_non_negative():
    """Without the declared σ, the DenseNet norm5 and the linear bottlenecks are signed (read
    when the module returns: DenseNet's functional ReLU later overwrites norm5's output)."""
    for name, layer in (("densenet121", "features.norm5"), ("efficientnet_b0", "features.3"),
                        ("densenet121_released", "features.transition2")):
        assert layer in models.target_sigma(name)
        model = models.get_model(name, 2, 3).eval()
        lowest = []
        handle = model.get_submodule(layer).register_forward_hook(
            lambda _m, _i, out: lowest.append(out.min().item()))
        with torch.no_grad():
            model(torch.randn(2, 3, 32, 32))
        handle.remove()
        assert lowest[0] < 0
    assert models.target_sigma("two_layer_cnn") == {} and models.target_sigma("resnet18") == {}


def test_capture_rejects_unknown_sigma():
    model = models.get_model("two_layer_cnn", 10)
    with pytest.raises(ValueError, match="unknown sigma"):
        with models.capture(model, ["relu1"], {"relu1": "tanh"}):
            pass
    with pytest.raises(ValueError, match="not among"):
        with models.capture(model, ["relu1"], {"relu2": "relu"}):
            pass


def test_densenet_targets_paper_and_released():
    assert models.target_layers("densenet121") == (
        "features.transition1.relu", "features.transition2.relu", "features.transition3.relu",
        "features.norm5")
    assert models.target_layers("densenet121_released") == (
        "features.transition1", "features.transition2", "features.transition3", "features.norm5")
    model = models.get_model("densenet121", 2, 3)
    for layer in models.target_layers("densenet121")[:3]:
        assert isinstance(model.get_submodule(layer), torch.nn.ReLU)


def test_vgg16_authors_has_the_authors_head_and_targets_the_max_pools():
    model = models.get_model("vgg16_authors", 5, 3)
    head = model.classifier
    assert [type(m).__name__ for m in head] == ["Linear", "ReLU", "Dropout", "Linear"]
    assert (head[0].in_features, head[0].out_features, head[3].out_features) == (25088, 1024, 5)
    assert head[2].p == 0.5
    for layer in models.target_layers("vgg16_authors"):
        assert isinstance(model.get_submodule(layer), torch.nn.MaxPool2d)
    assert models.get_model("vgg16", 5, 3).classifier[0].out_features == 4096


def _no_network(monkeypatch):
    import torch.hub

    def offline(*args, **kwargs):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(torch.hub, "download_url_to_file", offline)


def test_pretrained_without_fallback_raises_saying_where_to_put_the_weights(monkeypatch, tmp_path):
    import torchvision

    _no_network(monkeypatch)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    url = torchvision.models.MobileNet_V2_Weights.DEFAULT.url
    with pytest.raises(RuntimeError) as err:
        models.build_model("mobilenet_v2", 2, 3, pretrained=True, weights_fallback=False)
    message = str(err.value)
    assert str(tmp_path / "hub" / "checkpoints" / url.rsplit("/", 1)[-1]) in message
    assert url in message and "weights_fallback" in message


def test_pretrained_weights_load_from_torch_home_without_network(monkeypatch, tmp_path):
    import torchvision

    _no_network(monkeypatch)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    weights = torchvision.models.MobileNet_V2_Weights.DEFAULT
    torch.manual_seed(5)
    saved = torchvision.models.mobilenet_v2().state_dict()
    path = tmp_path / "hub" / "checkpoints" / weights.url.rsplit("/", 1)[-1]
    path.parent.mkdir(parents=True)
    torch.save(saved, path)
    built = models.build_model("mobilenet_v2", 2, 3, pretrained=True, weights_fallback=False)
    assert built.weights == str(weights)
    torch.testing.assert_close(built.model.features[0][0].weight, saved["features.0.0.weight"])


class _WithSpare(torch.nn.Module):
    """A network with a registered module its forward never calls (say, an auxiliary head)."""

    def __init__(self):
        super().__init__()
        self.conv, self.relu = torch.nn.Conv2d(1, 2, 3, padding=1), torch.nn.ReLU()
        self.aux, self.fc = torch.nn.ReLU(), torch.nn.Linear(2 * 16, 2)

    def forward(self, x):
        return self.fc(self.relu(self.conv(x)).flatten(1))


def test_a_target_that_never_ran_is_named_by_the_training_step():
    torch.manual_seed(0)
    x, y, mask = torch.rand(2, 1, 4, 4), torch.tensor([0, 1]), torch.ones(2, 1, 4, 4)
    cfg = TrainConfig(method="tap", lam=1.0)
    task, xs = step_losses(_WithSpare(), x, y, mask, cfg, ("relu",))
    assert xs.item() > 0
    with pytest.raises(ValueError, match=r"layer\(s\) \['aux'\] did not run in the forward pass"):
        step_losses(_WithSpare(), x, y, mask, cfg, ("relu", "aux"))


def test_a_variant_stands_for_the_paper_architecture_it_varies():
    # Table 1's speed claim is judged on the paper's three and their registry variants only
    from tapkit.experiments import table1

    assert models.paper_architecture("vgg16_authors") == "vgg16"
    assert models.paper_architecture("resnet18") == "resnet18"
    assert models.paper_architecture("two_layer_cnn") is None
    assert models.paper_architecture("efficientnet_b0") is None
    assert {"vgg16", "vgg16_authors", "resnet18", "densenet121"} <= table1.architectures()
    assert not table1.architectures() & {"two_layer_cnn", "efficientnet_b0", "mobilenet_v2"}

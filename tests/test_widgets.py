"""The activation-map explorer: the live mode recomputes with tapkit.maps.explain for the selected
image, model and layer; the kernel-free mode stores the same renderings in jslink-ed Stacks."""

import base64
import io
import re

import numpy as np
import pytest
import torch
from torch import nn

pytest.importorskip("ipywidgets")

from tapkit import maps, widgets  # noqa: E402
from tapkit.data import Split  # noqa: E402
from tapkit.losses import downscale_mask  # noqa: E402

LAYERS = ["relu1", "relu2"]


class Tiny(nn.Module):
    """Two conv blocks with named ReLUs: 16x16 -> relu1 16x16 -> relu2 6x6."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(4, 4, 3)
        self.relu2 = nn.ReLU()
        self.fc = nn.Linear(4 * 6 * 6, 3)

    def forward(self, x):
        x = self.relu2(self.conv2(self.pool(self.relu1(self.conv1(x)))))
        return self.fc(x.flatten(1))


@pytest.fixture
def setup():
    torch.manual_seed(0)
    models = {"A": Tiny().eval(), "B": Tiny().eval()}
    x = torch.randn(7, 1, 16, 16)
    mask = torch.zeros(7, 1, 16, 16)
    mask[:, :, :4, :4] = 1
    mask[3, :, -5:, -5:] = 1  # one image with its mask elsewhere
    split = Split(x, torch.tensor([0, 1, 2, 0, 1, 2, 0]), mask)
    return models, split


def expected(model, split, idx, layer):
    """The maps computed independently of the explorer."""
    out = maps.explain(model, split.x[idx: idx + 1], LAYERS)
    act = out.activations[layer]
    return out, act[0, 0].numpy(), downscale_mask(split.mask[idx: idx + 1], tuple(act.shape[-2:]))[0, 0].numpy()


def assert_view(view, model, split, idx, layer):
    out, act, small = expected(model, split, idx, layer)
    assert view.index == idx and view.layer == layer and view.label == int(split.y[idx])
    np.testing.assert_allclose(view.input_grad, out.input_grad[0, 0].numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(view.activation, act, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(view.layer_mask, small)
    np.testing.assert_allclose(view.probs, out.probs[0].numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(view.mask, split.mask[idx, 0].numpy())


def test_live_recomputes_for_the_selected_image_and_layer(setup):
    models, split = setup
    ex = widgets.explorer(models, split, LAYERS, live=True)
    assert ex.indices == list(range(7))
    assert_view(ex.current, models["A"], split, 0, "relu1")

    before = ex.widget.children[1].children[2].children[1].value
    ex.image.value = 3
    assert_view(ex.current, models["A"], split, 3, "relu1")
    assert ex.widget.children[1].children[2].children[1].value != before

    ex.layer.value = "relu2"
    assert ex.current.activation.shape == (6, 6)
    assert_view(ex.current, models["A"], split, 3, "relu2")

    ex.model.value = "B"
    assert_view(ex.current, models["B"], split, 3, "relu2")
    assert not np.allclose(ex.current.probs, expected(models["A"], split, 3, "relu2")[0].probs[0])


def test_live_calls_explain_on_each_change(setup, monkeypatch):
    models, split = setup
    calls = []
    real = maps.explain

    def spy(model, x, layers):
        calls.append((model, x.detach().clone(), list(layers)))
        return real(model, x, layers)

    ex = widgets.explorer(models, split, LAYERS, indices=[5, 2, 6], live=True)
    monkeypatch.setattr(maps, "explain", spy)
    ex.image.value = 2                      # position 2 -> test image 6
    ex.layer.value = "relu2"
    assert len(calls) == 2
    assert calls[0][0] is models["A"] and calls[0][2] == ["relu1"]
    assert torch.equal(calls[0][1], split.x[6:7])
    assert calls[1][2] == ["relu2"] and torch.equal(calls[1][1], split.x[6:7])
    assert ex.current.index == 6 and ex.recomputed == 3  # the initial draw, then two changes


def test_live_panels_show_the_current_numbers(setup):
    models, split = setup
    ex = widgets.explorer(models, split, LAYERS, live=True)
    ex.image.value = 4
    columns = ex.widget.children[1].children
    text = [col.children[1].value for col in columns]
    assert "test image #4 · label 1" in text[0]
    assert f"{ex.current.grad_in_mask:.0%}" in text[1]
    assert "relu1 (16×16)" in text[2]
    assert f"predicts <b>{ex.current.prediction}</b>" in text[3]


def test_static_stacks_hold_the_same_renderings_and_are_jslinked(setup):
    models, split = setup
    indices = [0, 3, 5]
    ex = widgets.explorer(models, split, LAYERS, indices=indices)
    inputs, grads, acts, probs = (col.children[1] for col in ex.widget.children[1].children)
    assert len(inputs.children) == 3 and len(grads.children) == 2 and len(acts.children) == 2
    for m, name in enumerate(models):
        views = widgets.compute_views(models[name], split, indices, LAYERS)
        for i, idx in enumerate(indices):
            for l, layer in enumerate(LAYERS):
                assert_view(views[i][layer], models[name], split, idx, layer)
                assert acts.children[m].children[l].children[i].value == widgets.activation_html(views[i][layer])
            assert grads.children[m].children[i].value == widgets.gradient_html(views[i][LAYERS[0]])
            assert probs.children[m].children[i].value == widgets.probs_html(views[i][LAYERS[0]])

    links = {(link.source[0].model_id, link.source[1], link.target[0].model_id, link.target[1])
             for link in ex.links}
    image_stacks = [inputs] + list(grads.children) + list(probs.children) + [
        s for per_model in acts.children for s in per_model.children]
    for stack in image_stacks:
        assert (ex.image.model_id, "value", stack.model_id, "selected_index") in links
    for stack in (grads, acts, probs):
        assert (ex.model.model_id, "index", stack.model_id, "selected_index") in links
    for per_model in acts.children:
        assert (ex.layer.model_id, "index", per_model.model_id, "selected_index") in links
    assert len(links) == len(image_stacks) + 3 + len(acts.children)


def test_static_state_is_small(setup):
    models, split = setup
    ex = widgets.explorer(models, split, LAYERS)  # default: 12 images, here all 7
    assert ex.indices == list(range(7))
    state = ex.widget.get_view_spec()  # displayable
    assert state["model_id"] == ex.widget.model_id
    pngs = re.findall(r"base64,([A-Za-z0-9+/=]+)", "".join(
        h.value for col in ex.widget.children[1].children for h in _leaves(col)))
    assert len(pngs) == 7 + 2 * 7 + 2 * 2 * 7
    assert sum(len(p) for p in pngs) < 7 * 7 * 4000


def _leaves(w):
    kids = getattr(w, "children", None)
    if not kids:
        return [w] if hasattr(w, "value") and isinstance(w.value, str) else []
    return [leaf for k in kids for leaf in _leaves(k)]


def test_render_map_outlines_the_mask():
    from PIL import Image

    values = np.arange(64, dtype=float).reshape(8, 8)
    region = np.zeros((8, 8))
    region[2:5, 2:6] = 0.5
    png = widgets.render_map(values, region, size=32)
    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    assert rgb.shape == (32, 32, 3)
    cyan = np.all(rgb == widgets.MASK_COLOUR, axis=-1)
    inside = np.zeros((32, 32), bool)
    inside[8:20, 8:24] = True
    assert cyan.any() and not (cyan & ~inside).any()   # only on the region's border
    assert not cyan[12:16, 12:20].any()                # not in its interior


def test_spread_over_classes_leads_with_first_then_takes_each_class_in_turn():
    labels = np.array([2, 0, 1, 0, 2, 1, 1, 0])
    # class 0 at 1, 3, 7; class 1 at 2, 5, 6; class 2 at 0, 4
    assert widgets.spread_over_classes(labels, 5) == [1, 2, 0, 3, 5]
    # first (say, images a model gets wrong) lead; an image already picked is not taken twice
    assert widgets.spread_over_classes(labels, 6, first=[6, 0]) == [6, 0, 1, 2, 3, 5]
    assert widgets.spread_over_classes(labels, 2, first=[7, 4, 5]) == [7, 4]
    # fewer images than asked: all of them, once
    assert sorted(widgets.spread_over_classes(labels, 20)) == list(range(8))


def test_bad_arguments(setup):
    models, split = setup
    with pytest.raises(ValueError, match="models is empty"):
        widgets.explorer({}, split, LAYERS)
    with pytest.raises(ValueError, match="sequence of module names"):
        widgets.explorer(models, split, "relu1")
    with pytest.raises(ValueError, match="at most"):
        widgets.explorer(models, split, LAYERS, indices=[0] * (widgets.MAX_STATIC_IMAGES + 1))
    with pytest.raises(ValueError, match="unknown layer"):
        widgets.explorer(models, split, ["nope"], live=True)


def test_png_is_valid_base64(setup):
    models, split = setup
    view = widgets.compute_views(models["A"], split, [1], LAYERS)[0]["relu2"]
    src = re.search(r'src="data:image/png;base64,([^"]+)"', widgets.activation_html(view)).group(1)
    assert base64.b64decode(src)[:8] == b"\x89PNG\r\n\x1a\n"


def test_views_summary_counts_right_answers_and_averages_the_shares_inside_the_masks(setup):
    """Per model, the right answers among the images and the mean shares inside M and D(M, l),
    computed here image by image from tapkit.maps.explain."""
    models, split = setup
    indices = [0, 3, 5]
    summary = widgets.views_summary(models, split, indices, LAYERS)
    assert list(summary.index) == ["A", "B"]
    for name, model in models.items():
        right, grad, act2 = 0, [], []
        for i in indices:
            out, act, small = expected(model, split, i, "relu2")
            right += int(out.probs[0].argmax()) == int(split.y[i])
            g = out.input_grad[0, 0].abs().numpy()
            grad.append((g * split.mask[i, 0].numpy()).sum() / g.sum())
            act2.append(np.abs(act)[small > 0].sum() / np.abs(act).sum())  # where D(M, l) > 0
        assert summary.loc[name, "right"] == f"{right}/3"
        assert summary.loc[name, "|∇x| inside M"] == pytest.approx(np.mean(grad), rel=1e-4)
        assert summary.loc[name, "relu2 inside D(M,l)"] == pytest.approx(np.mean(act2), rel=1e-4)

import pytest
import torch
from torch import nn

from tapkit import losses


def test_downscale_mask_hand_computed():
    mask = torch.zeros(1, 1, 6, 6)
    mask[0, 0, 2, 2] = 1.0
    # max-pool 3x3 stride 1 grows the pixel to rows/cols 1..3; 2x2 average blocks then give:
    expected = torch.tensor([[0.25, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 0.0]])
    torch.testing.assert_close(losses.downscale_mask(mask, 3)[0, 0], expected)
    # kernel_size=1 leaves the mask as is before averaging
    torch.testing.assert_close(losses.downscale_mask(mask, 6, kernel_size=1), mask)


def _two_layer_example():
    mask = torch.zeros(2, 1, 4, 4)
    mask[:, 0, 0, 0] = 1.0  # grown: the top-left 2x2 block; averaged to 2x2: D = [[1,0],[0,0]]
    act1 = torch.zeros(2, 2, 2, 2)
    act1[0, 0] = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    act1[0, 1] = torch.tensor([[-5.0, 1.0], [0.0, 0.0]])  # channel sum at (0,0): -4
    act1[1, 0, 0, 0] = 2.0                                 # channel sum at (0,0): 2
    act2 = torch.full((2, 3, 4, 4), 1.0)                   # D is the grown mask: 4 ones, sum_c = 3
    return mask, [act1, act2]


def test_tap_l1_hand_computed():
    mask, acts = _two_layer_example()
    # layer 1: batch mean of |-4| and |2| = 3; layer 2: 4 pixels * 3 = 12 per image; (3 + 12) / 2
    assert losses.tap(acts, mask).item() == pytest.approx(7.5)


def test_tap_l2sq_is_the_released_code_variant():
    mask, acts = _two_layer_example()
    # layer 1: mean(16, 4) = 10; layer 2: 4 * 9 = 36; (10 + 36) / 2
    assert losses.tap(acts, mask, norm="l2sq").item() == pytest.approx(23.0)


def test_tap_accepts_a_mapping_and_is_zero_outside_the_mask():
    mask, acts = _two_layer_example()
    assert losses.tap({"a": acts[0], "b": acts[1]}, mask).item() == pytest.approx(7.5)
    assert losses.tap(acts, torch.zeros_like(mask)).item() == 0.0


def test_tap_gradient_reaches_only_masked_activations():
    mask, acts = _two_layer_example()
    a = acts[0].clone().requires_grad_(True)
    losses.tap([a], mask).backward()
    assert a.grad[:, :, 1:, :].abs().sum() == 0 and a.grad[:, :, :, 1:].abs().sum() == 0
    assert a.grad[0, 0, 0, 0].item() == pytest.approx(-0.5)  # d|s|/ds = -1, batch mean 1/2


@pytest.mark.parametrize("bad_mask, message", [
    (torch.zeros(2, 4, 4), "N x 1 x H x W"),
    (torch.zeros(2, 3, 4, 4), "N x 1 x H x W"),
    (torch.zeros(3, 1, 4, 4), "batch size"),
    (torch.zeros(2, 1, 1, 1), "larger"),
])
def test_tap_bad_masks_raise(bad_mask, message):
    _, acts = _two_layer_example()
    with pytest.raises(ValueError, match=message):
        losses.tap(acts, bad_mask)


def test_tap_bad_activations_raise():
    mask, _ = _two_layer_example()
    with pytest.raises(ValueError, match="empty"):
        losses.tap([], mask)
    with pytest.raises(ValueError, match="4-D"):
        losses.tap([torch.zeros(2, 8)], mask)
    with pytest.raises(ValueError, match="norm"):
        losses.tap([torch.zeros(2, 1, 2, 2)], mask, norm="l2")


class Tiny(nn.Module):
    """Smooth (softplus), double precision: finite differences are exact to ~1e-8."""

    def __init__(self, channels=2):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(channels, 3, 3, padding=1).double()
        self.fc = nn.Linear(3 * 5 * 5, 4).double()

    def forward(self, x):
        return self.fc(nn.functional.softplus(self.conv(x)).flatten(1))


def _finite_difference_input_gradient(model, x, eps=1e-6):
    def f(z):
        return torch.log_softmax(model(z), 1).sum().item()
    grad = torch.zeros_like(x)
    flat = grad.view(-1)
    for i in range(x.numel()):
        up, down = x.clone(), x.clone()
        up.view(-1)[i] += eps
        down.view(-1)[i] -= eps
        flat[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def test_rrr_input_gradient_matches_finite_differences():
    model = Tiny()
    x = torch.randn(2, 2, 5, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    xg = x.clone().requires_grad_(True)
    autograd = losses.input_gradients(model(xg), xg)
    torch.testing.assert_close(autograd, _finite_difference_input_gradient(model, x), atol=1e-6, rtol=1e-5)
    mask = torch.zeros(2, 1, 5, 5, dtype=torch.float64)
    mask[:, :, :2, :2] = 1.0
    expected = ((autograd.sum(1, keepdim=True) * mask) ** 2).sum((1, 2, 3)).mean()
    assert losses.rrr(model, x, mask).item() == pytest.approx(expected.item(), rel=1e-10)


def test_rrr_and_rbr_are_differentiable_in_the_weights():
    """Finite differences of the loss in one weight against autograd (second/third order)."""
    model = Tiny()
    x = torch.randn(2, 2, 5, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    y = torch.tensor([0, 3])
    mask = torch.zeros(2, 1, 5, 5, dtype=torch.float64)
    mask[:, :, 3:, 3:] = 1.0
    for loss_fn in (lambda: losses.rrr(model, x, mask), lambda: losses.rbr(model, x, y, mask),
                    lambda: losses.rbr(model, x, y, mask, variant="released"),
                    lambda: losses.rrr(model, x, mask, scale="released")):
        w = model.conv.weight
        grad = torch.autograd.grad(loss_fn(), w)[0][1, 0, 1, 1].item()
        eps = 1e-6
        with torch.no_grad():
            w[1, 0, 1, 1] += eps
        up = loss_fn().item()
        with torch.no_grad():
            w[1, 0, 1, 1] -= 2 * eps
        down = loss_fn().item()
        with torch.no_grad():
            w[1, 0, 1, 1] += eps
        assert grad == pytest.approx((up - down) / (2 * eps), rel=1e-4, abs=1e-10)


def test_input_gradient_losses_reject_masks_of_the_wrong_size():
    model = Tiny()
    x = torch.randn(2, 2, 5, 5, dtype=torch.float64)
    with pytest.raises(ValueError, match="input is"):
        losses.rrr(model, x, torch.zeros(2, 1, 4, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="batch size"):
        losses.rbr(model, x, torch.tensor([0, 1]), torch.zeros(3, 1, 5, 5, dtype=torch.float64))
    with pytest.raises(ValueError, match="N x 1 x H x W"):
        losses.rrr(model, x, torch.zeros(2, 5, 5, dtype=torch.float64))


def test_rrr_accepts_models_returning_logits_and_activations():
    model = Tiny()
    wrapped = lambda z: (model(z), [])  # noqa: E731
    x = torch.randn(1, 2, 5, 5, dtype=torch.float64)
    mask = torch.ones(1, 1, 5, 5, dtype=torch.float64)
    assert losses.rrr(wrapped, x, mask).item() == pytest.approx(losses.rrr(model, x, mask).item())


# --------------------------------------------------------------------------- RBR restated

def _functional(model, x, y):
    """Independent restatement of RBR with torch.func: input gradient of the summed
    log-probabilities, and the influence term d/dx of the plain sum of all parameter gradients."""
    from torch.func import functional_call, grad

    params = dict(model.named_parameters())

    def sum_log_prob(z):
        return torch.log_softmax(functional_call(model, params, (z,)), 1).sum()

    def sum_of_param_grads(z):
        def loss(p):
            return nn.functional.cross_entropy(functional_call(model, p, (z,)), y)

        return sum(g.sum() for g in grad(loss)(params).values())

    return grad(sum_log_prob)(x), grad(sum_of_param_grads)(x)


def _rbr_by_hand(g, influence, mask):
    """Shao et al.: elementwise product, masked, squared, summed per image (every channel)."""
    return (mask * g * influence).pow(2).sum((1, 2, 3))


def _rbr_released_by_hand(g, influence, mask):
    """The authors' code: each term summed over the channels first."""
    return (mask * g.sum(1, keepdim=True) * influence.sum(1, keepdim=True)).pow(2).sum((1, 2, 3))


def _rbr_example():
    model = Tiny()
    x = torch.randn(3, 2, 5, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    y = torch.tensor([1, 2, 0])
    mask = torch.zeros(3, 1, 5, 5, dtype=torch.float64)
    mask[:, :, 1:4, :3] = 1.0
    return model, x, y, mask


def test_rbr_matches_an_independent_restatement():
    model, x, y, mask = _rbr_example()
    g, influence = _functional(model, x, y)
    expected = _rbr_by_hand(g, influence, mask)
    assert expected.mean().item() > 0
    assert losses.rbr(model, x, y, mask).item() == pytest.approx(expected.mean().item(), rel=1e-6)
    per_image = losses.rbr(model, x, y, mask, reduction="none")
    torch.testing.assert_close(per_image, expected, rtol=1e-6, atol=0)
    assert losses.rbr(model, x, y, torch.zeros_like(mask)).item() == 0.0


def test_rbr_released_keeps_only_the_first_layers_path_and_sums_over_the_batch():
    """The authors' code builds the task loss before x requires grad: the influence term then
    follows x only where the first layer's weight gradient holds it, with the upstream gradient
    delta = dL/dz of the first layer's output z held fixed: d/dx sum(conv(x, ones) * delta)."""
    model, x, y, mask = _rbr_example()
    xd = x.clone().requires_grad_(True)
    z = model.conv(xd)
    zd = z.detach().requires_grad_(True)
    loss = nn.functional.cross_entropy(model.fc(nn.functional.softplus(zd).flatten(1)), y)
    delta = torch.autograd.grad(loss, zd)[0]
    ones = torch.ones_like(model.conv.weight)
    first_layer_sum = (nn.functional.conv2d(xd, ones, padding=1) * delta).sum()
    influence = torch.autograd.grad(first_layer_sum, xd)[0]
    g, full_influence = _functional(model, x, y)
    expected = _rbr_released_by_hand(g, influence, mask).sum()
    released = losses.rbr(model, x, y, mask, variant="released")
    assert released.item() == pytest.approx(expected.item(), rel=1e-6)
    full_sum = _rbr_by_hand(g, full_influence, mask).sum()
    assert released.item() != pytest.approx(full_sum.item(), rel=1e-3)
    assert losses.rbr(model, x, y, mask).item() != pytest.approx(released.item(), rel=1e-3)
    with pytest.raises(ValueError, match="variant"):
        losses.rbr(model, x, y, mask, variant="partial")


# --------------------------------------------------------------------------- released scales

def test_rrr_released_scale_hand_computed():
    grad = torch.zeros(2, 1, 2, 2)
    grad[0, 0, 0, 1] = 0.5
    grad[1, 0, 1, 1] = 3.0
    mask = torch.zeros(2, 1, 2, 2)
    mask[0, 0, 0, 1] = 1.0  # |M| = 1 of H*W = 4: the mask becomes 4 there
    # image 0: (4 * 0.5)^2 = 4; image 1: empty mask, 0 (the released code gives NaN)
    assert losses.rrr_penalty(grad, mask, scale="released").item() == pytest.approx(2.0)
    assert losses.rrr_penalty(grad, mask).item() == pytest.approx(0.125)
    mask[1, 0, :, 1] = 1.0  # |M| = 2: scale 2, (2 * 3)^2 = 36
    torch.testing.assert_close(losses.rrr_penalty(grad, mask, "released", reduction="none"),
                               torch.tensor([4.0, 36.0]))
    assert losses.rrr_penalty(grad, mask, "released", reduction="sum").item() == pytest.approx(40.0)
    with pytest.raises(ValueError, match="scale"):
        losses.rrr_penalty(grad, mask, scale="paper")


def test_tap_cumulative_pooling_hand_computed():
    mask = torch.zeros(1, 1, 8, 8)
    mask[0, 0, 0, 0] = 1.0
    acts = [torch.ones(1, 2, 4, 4), torch.ones(1, 1, 2, 2)]  # channel sums 2 and 1
    # cumulative: 8 -> 4: grow to the top-left 2x2, average 2x2 blocks: D1[0,0] = 1;
    # 4 -> 2: grow D1 to its top-left 2x2, average: D2[0,0] = 1.
    d1, d2 = losses.downscale_masks(mask, [(4, 4), (2, 2)], pooling="cumulative")
    assert d1.sum().item() == d1[0, 0, 0, 0].item() == 1.0
    assert d2.sum().item() == d2[0, 0, 0, 0].item() == 1.0
    # L2^2: ((1*2)^2 + 1^2) / 2
    assert losses.tap(acts, mask, norm="l2sq", pooling="cumulative").item() == pytest.approx(2.5)
    # independent (Eq. 7): D2 from the input mask, a 2x2 grown block in a 4x4 cell: 0.25
    assert losses.tap(acts, mask).item() == pytest.approx((2.0 + 0.25) / 2)


def test_cumulative_pooling_interpolates_like_the_released_code():
    mask = torch.zeros(1, 1, 4, 4)
    mask[0, 0, 2, 2] = 1.0
    mask[0, 0, 3, 3] = 1.0
    # factor 4 // 3 = 1: no pooling; nearest interpolation by 3/4 keeps rows/cols 0, 1, 2
    (d,) = losses.downscale_masks(mask, [(3, 3)], pooling="cumulative")
    expected = torch.zeros(3, 3)
    expected[2, 2] = 1.0
    torch.testing.assert_close(d[0, 0], expected)
    with pytest.raises(ValueError, match="pooling"):
        losses.downscale_masks(mask, [(2, 2)], pooling="released")


def test_tap_l1_is_unchanged_by_downscaling_once():
    """The default equals the per-layer Eq. 7 computation bit for bit."""
    gen = torch.Generator().manual_seed(0)
    mask = (torch.rand(3, 1, 28, 28, generator=gen) > 0.8).float()
    acts = [torch.randn(3, 4, 14, 14, generator=gen), torch.randn(3, 5, 6, 6, generator=gen),
            torch.randn(3, 2, 14, 14, generator=gen)]
    by_layer = sum((losses.downscale_mask(mask, a.shape[-2:]) * a.sum(1, keepdim=True)).abs()
                   .sum((1, 2, 3)).mean() for a in acts) / len(acts)
    assert torch.equal(losses.tap(acts, mask), by_layer)
    masks = losses.downscale_masks(mask, [a.shape[-2:] for a in acts])
    assert masks[0] is masks[2]  # one pooling per distinct size


# --------------------------------------------------------------------------- BatchNorm per image

def _resnet18():
    from tapkit.models import build_model

    torch.manual_seed(0)
    return build_model("resnet18", 3, 3).model.double().train()


def test_input_gradient_penalties_are_per_image_with_batchnorm_on_running_statistics():
    model = _resnet18()
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 3, 32, 32, dtype=torch.float64, generator=gen)
    other = x.clone()
    other[1:] = torch.randn(2, 3, 32, 32, dtype=torch.float64, generator=gen) * 2 + 1
    y = torch.tensor([0, 1, 2])
    mask = torch.zeros(3, 1, 32, 32, dtype=torch.float64)
    mask[:, :, 4:12, 4:12] = 1.0
    a = losses.rrr(model, x, mask, reduction="none")
    b = losses.rrr(model, other, mask, reduction="none")
    assert a[0].item() > 0 and a[0].item() == pytest.approx(b[0].item(), rel=1e-9)
    mixed = losses.rrr(model, x, mask, batchnorm="batch", reduction="none")[0]
    assert mixed.item() != pytest.approx(
        losses.rrr(model, other, mask, batchnorm="batch", reduction="none")[0].item(), rel=1e-3)
    a = losses.rbr(model, x, y, mask, reduction="none")
    b = losses.rbr(model, other, y, mask, reduction="none")
    assert a[0].item() > 0 and a[0].item() == pytest.approx(b[0].item(), rel=1e-9)
    assert model.training and all(m.training for m in model.modules())


def test_batchnorm_modes_are_restored_after_an_exception():
    class Boom(nn.Module):
        def forward(self, x):
            raise RuntimeError("boom")

    model = nn.Sequential(nn.BatchNorm2d(1), Boom()).train()
    with pytest.raises(RuntimeError, match="boom"):
        losses.rrr(model, torch.randn(2, 1, 4, 4), torch.ones(2, 1, 4, 4))
    assert model[0].training
    with pytest.raises(ValueError, match="batchnorm"):
        losses.rrr(model, torch.randn(2, 1, 4, 4), torch.ones(2, 1, 4, 4), batchnorm="eval")


class TinyBN(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(1, 3, 3, padding=1).double()
        self.bn = nn.BatchNorm2d(3).double()
        self.fc = nn.Linear(3 * 5 * 5, 4).double()

    def forward(self, x):
        return self.fc(nn.functional.softplus(self.bn(self.conv(x))).flatten(1))


@pytest.mark.parametrize("method, variant, bn", [
    ("rrr", "full", "eval"), ("rrr", "full", "train"), ("rbr", "full", "eval"),
    ("rbr", "released", "eval"), ("rbr", "released", "train"),
])
def test_training_step_xs_terms_are_the_public_losses(method, variant, bn):
    import copy

    from tapkit.config import TrainConfig
    from tapkit.fit import step_losses
    from tapkit.method_options import RbrOptions, RrrOptions

    gen = torch.Generator().manual_seed(4)
    x = torch.randn(3, 1, 5, 5, dtype=torch.float64, generator=gen)
    y = torch.tensor([0, 3, 1])
    mask = torch.zeros(3, 1, 5, 5, dtype=torch.float64)
    mask[:, :, :2] = 1.0
    model = TinyBN().train()
    twin = copy.deepcopy(model)
    mode = "running" if bn == "eval" else "batch"
    options = RrrOptions(batchnorm=mode) if method == "rrr" else RbrOptions(variant, mode)
    cfg = TrainConfig(method=method, lam=1.0, options=options)
    _, xs = step_losses(model, x, y, mask, cfg, ())
    if mode == "running" and variant == "full":
        with torch.no_grad():
            twin(x)  # the training forward's update of the running statistics
    if method == "rrr":
        expected = losses.rrr(twin, x, mask, batchnorm=mode)
    else:
        expected = losses.rbr(twin, x, y, mask, variant=variant, batchnorm=mode)
    assert xs.item() > 0 and xs.item() == pytest.approx(expected.item(), rel=1e-9)
    assert model.bn.training


def test_a_boolean_mask_is_a_float_mask():
    """TAP by hand: a 3 x 3 activation 0..8 with the mask on the top-left pixel only; the 3 x 3
    max-pool grows the mask over pixels (0,0), (0,1), (1,0), (1,1), whose values 0 + 1 + 3 + 4 = 8.
    RRR by hand: gradient [[1, 2], [3, 4]], mask on the diagonal: 1^2 + 4^2 = 17; scaled as the
    released code does (H*W/|M| = 4/2): 2^2 + 8^2 = 68."""
    act = torch.arange(9.0).reshape(1, 1, 3, 3)
    on = torch.zeros(1, 1, 3, 3, dtype=torch.bool)
    on[0, 0, 0, 0] = True
    assert losses.tap([act], on).item() == 8.0 == losses.tap([act], on.float()).item()
    assert losses.downscale_mask(on, 3).dtype == torch.float32
    grad = torch.tensor([[1.0, 2.0], [3.0, 4.0]]).reshape(1, 1, 2, 2)
    diagonal = torch.eye(2, dtype=torch.bool).reshape(1, 1, 2, 2)
    assert losses.rrr_penalty(grad, diagonal).item() == 17.0
    assert losses.rrr_penalty(grad, diagonal, scale="released").item() == 68.0
    assert losses.rbr_penalty(grad, torch.ones_like(grad), diagonal).item() == 17.0


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_non_finite_mask_is_refused_not_returned_as_nan(bad):
    mask = torch.zeros(2, 1, 4, 4)
    mask[1, 0, 2, 3] = bad
    x = torch.rand(2, 1, 4, 4)
    model = nn.Sequential(nn.Flatten(), nn.Linear(16, 3))
    for call in (lambda: losses.tap([torch.ones(2, 3, 4, 4)], mask),
                 lambda: losses.downscale_mask(mask, 2),
                 lambda: losses.rrr(model, x, mask),
                 lambda: losses.rrr_penalty(x, mask),
                 lambda: losses.rbr(model, x, torch.tensor([0, 1]), mask)):
        with pytest.raises(ValueError, match="mask has NaN or infinite entries.*nan_to_num"):
            call()


def test_a_layer_that_never_ran_is_named():
    class Skips(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.unused = nn.Conv2d(1, 2, 3, padding=1), nn.Conv2d(2, 2, 3)

        def forward(self, x):
            return self.conv(x)

    from tapkit.models import capture

    model, x = Skips(), torch.rand(2, 1, 4, 4)
    with capture(model, ["conv", "unused"]) as acts:
        model(x)
    with pytest.raises(ValueError, match="layer 'unused' is None: the layer did not run"):
        losses.tap(acts, torch.ones(2, 1, 4, 4))


def test_a_loop_that_checked_its_masks_once_skips_the_check_per_step():
    from tapkit.masks import masks_checked

    nan = torch.full((1, 1, 4, 4), float("nan"))
    with masks_checked():  # fit's loop: its masks were checked before the first step
        assert torch.isnan(losses.tap([torch.ones(1, 3, 4, 4)], nan))
    with pytest.raises(ValueError, match="NaN"):  # and only inside the block
        losses.tap([torch.ones(1, 3, 4, 4)], nan)


class TinyPlain(nn.Module):
    """TinyBN without its BatchNorm: the same in training and eval mode."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3, padding=1).double()
        self.fc = nn.Linear(3 * 5 * 5, 4).double()

    def forward(self, x):
        return self.fc(nn.functional.softplus(self.conv(x)).flatten(1))


@pytest.mark.parametrize("method", ["rrr", "rbr"])
def test_a_model_without_batchnorm_or_dropout_takes_its_input_gradients_in_one_pass(method):
    import copy

    from tapkit.config import TrainConfig
    from tapkit.fit import step_losses

    gen = torch.Generator().manual_seed(5)
    x = torch.randn(3, 1, 5, 5, dtype=torch.float64, generator=gen)
    y = torch.tensor([0, 3, 1])
    mask = torch.zeros(3, 1, 5, 5, dtype=torch.float64)
    mask[:, :, 1:3] = 1.0
    cfg = TrainConfig(method=method, lam=0.5)  # batchnorm="running", the default
    assert cfg.options.batchnorm == "running"
    model = TinyPlain().train()
    twin = copy.deepcopy(model)
    passes = []
    model.conv.register_forward_hook(lambda *_: passes.append(1))
    task, xs = step_losses(model, x, y, mask, cfg, ())
    assert len(passes) == 1  # no extra pass: eval mode would compute the same
    (task + cfg.lam * xs).backward()
    # what the two-pass step computes: the task loss, then the public loss in an extra pass
    want_task = nn.functional.cross_entropy(twin(x), y)
    want_xs = (losses.rrr(twin, x, mask) if method == "rrr" else losses.rbr(twin, x, y, mask))
    (want_task + cfg.lam * want_xs).backward()
    assert xs.item() > 0 and xs.item() == pytest.approx(want_xs.item(), rel=1e-9)
    for p, q in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-9, atol=1e-12)
    # dropout or BatchNorm: the extra pass stays
    for extra in (nn.Dropout(0.5), nn.BatchNorm2d(3).double()):
        net = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1).double(), extra, nn.Flatten(),
                            nn.Linear(3 * 5 * 5, 4).double()).train()
        assert losses.depends_on_mode(net)
        calls = []
        net[0].register_forward_hook(lambda *_: calls.append(1))
        step_losses(net, x, y, mask, cfg, ())
        assert len(calls) == 2
    assert not losses.depends_on_mode(TinyPlain())

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
    for loss_fn in (lambda: losses.rrr(model, x, mask), lambda: losses.rbr(model, x, y, mask)):
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


def test_rbr_zero_outside_mask_and_variants_differ():
    model = Tiny()
    x = torch.randn(2, 2, 5, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    y = torch.tensor([1, 2])
    zero = torch.zeros(2, 1, 5, 5, dtype=torch.float64)
    assert losses.rbr(model, x, y, zero).item() == 0.0
    mask = torch.ones_like(zero)
    full, partial = losses.rbr(model, x, y, mask), losses.rbr(model, x, y, mask, variant="partial")
    assert full.item() > 0 and partial.item() > 0 and full.item() != pytest.approx(partial.item())
    with pytest.raises(ValueError, match="variant"):
        losses.rbr(model, x, y, mask, variant="released")


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

"""Explanatory-supervision (XS) losses L_XS of the paper's Eq. 3 (KD/AT/JT: :mod:`.baselines`).

Each loss is a pure function of tensors (and of the model where it needs gradients through it).
Per-image input gradients on a BatchNorm network take an explicit ``batchnorm`` argument
(``"running"``: running statistics for that pass, modes restored in ``finally``; ``"batch"``).
Eq. 4 RRR, Eq. 6 the activation map A^l, Eq. 7 the downscaling D(M, l), Definition 2 (Eq. 8) TAP.
The released code's normalisations, behind the paper's λ values, are offered by name
(``tap(norm="l2sq", pooling="cumulative")``, ``rrr(scale="released")``,
``rbr(variant="released")``); the equations as written are the defaults.
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Literal, Mapping, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .masks import check_input_mask, check_mask

TapNorm = Literal["l1", "l2sq"]
TapPooling = Literal["independent", "cumulative"]
BatchNormMode = Literal["running", "batch"]
Reduction = Literal["mean", "sum", "none"]
RrrScale = Literal["none", "released"]
RbrVariant = Literal["full", "released"]


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        expected = ", ".join(map(repr, allowed))
        raise ValueError(f"unknown {name} {value!r}; expected one of {expected}")


def _reduce(per_image: Tensor, reduction: Reduction) -> Tensor:
    _check_choice("reduction", reduction, ("mean", "sum", "none"))
    if reduction == "none":
        return per_image
    return per_image.mean() if reduction == "mean" else per_image.sum()


def _grow(mask: Tensor, kernel_size: int) -> Tensor:
    """Max-pool with stride 1: grows the mask by ``kernel_size // 2`` pixels (receptive fields)."""
    grown = F.max_pool2d(mask, kernel_size, stride=1, padding=kernel_size // 2)
    if grown.shape[-2:] != mask.shape[-2:]:  # even kernels pad one pixel too many
        grown = grown[..., : mask.shape[2], : mask.shape[3]]
    return grown


def _size(size: int | Sequence[int]) -> tuple[int, int]:
    return (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))


def downscale_mask(mask: Tensor, size: int | tuple[int, int], kernel_size: int = 3) -> Tensor:
    """D(M, l) of Eq. 7: max-pool with stride 1 (grows the mask by ``kernel_size // 2`` pixels to
    cover receptive fields), then adaptive average pooling to the activation's ``size``."""
    return downscale_masks(mask, [size], kernel_size)[0]


def downscale_masks(mask: Tensor, sizes: Sequence[int | Sequence[int]], kernel_size: int = 3,
                    pooling: TapPooling = "independent") -> list[Tensor]:
    """D(M, l) for every layer at once, one mask per entry of ``sizes`` (in layer order).

    ``pooling="independent"`` (Eq. 7): the mask is grown once (one max-pool for all layers) and
    average-pooled once per *distinct* size, so a batch costs 1 + (number of distinct sizes)
    kernels whatever the number of layers. ``pooling="cumulative"`` is the authors' released
    code: layer l's mask is pooled from layer l-1's downscaled mask (the input mask for the first
    layer) by the integer factor ``k = previous width // width``: grow with ``kernel_size`` and
    average-pool with kernel k when k > 1, then nearest-neighbour interpolation by the remaining
    ratio when the pooled mask is still larger (their ``suppress_at``).
    """
    mask = check_mask(mask)
    _check_choice("pooling", pooling, ("independent", "cumulative"))
    sizes = [_size(s) for s in sizes]
    for size in sizes:
        if size[0] > mask.shape[2] or size[1] > mask.shape[3]:
            raise ValueError(f"cannot downscale a {tuple(mask.shape[2:])} mask to a larger {size}")
    if pooling == "cumulative":
        return _cumulative(mask, sizes, kernel_size)
    grown = _grow(mask, kernel_size) if sizes else mask
    scaled: dict[tuple[int, int], Tensor] = {}
    for size in sizes:
        if size not in scaled:
            scaled[size] = F.adaptive_avg_pool2d(grown, size)
    return [scaled[size] for size in sizes]


def _cumulative(mask: Tensor, sizes: list[tuple[int, int]], kernel_size: int) -> list[Tensor]:
    out, region = [], mask
    for size in sizes:
        factor = (region.shape[2] // size[0], region.shape[3] // size[1])
        if factor[0] < 1 or factor[1] < 1:
            raise ValueError(f"cumulative pooling needs non-increasing sizes; got {size} after "
                             f"{tuple(region.shape[2:])}")
        ratio = (size[0] / (region.shape[2] / factor[0]), size[1] / (region.shape[3] / factor[1]))
        if max(factor) > 1:
            region = F.avg_pool2d(_grow(region, kernel_size), factor)
        if min(ratio) < 1:
            region = F.interpolate(region, scale_factor=ratio, mode="nearest")
        if tuple(region.shape[2:]) != size:
            raise ValueError(f"cumulative pooling gave a {tuple(region.shape[2:])} mask for a "
                             f"{size} activation; use pooling='independent'")
        out.append(region)
    return out


def tap(activations: Sequence[Tensor] | Mapping[str, Tensor], mask: Tensor, kernel_size: int = 3,
        norm: TapNorm = "l1", pooling: TapPooling = "independent") -> Tensor:
    """Targeted Activation Penalty (Definition 2, Eq. 8).

    ``(1/L) * sum_l mean_batch || D(M, l) * A^l ||``, where ``A^l`` is the channel sum of the l-th
    activation (Eq. 6; pass activations after their activation function σ, see
    :func:`tapkit.models.capture`). The paper's defaults: L1 norm and D(M, l) from the input mask
    for each layer (Eq. 7). The authors' released code: ``norm="l2sq"`` (squared Frobenius norm)
    and ``pooling="cumulative"`` (see :func:`downscale_masks`). The masks are downscaled once per
    call for all layers.
    """
    acts = list(activations.values()) if isinstance(activations, Mapping) else list(activations)
    if not acts:
        raise ValueError("activations is empty: pass at least one N x C x H x W activation")
    _check_choice("norm", norm, ("l1", "l2sq"))
    names = ([f"layer {n!r}" for n in activations] if isinstance(activations, Mapping)
             else [f"activation {i}" for i in range(len(acts))])
    check_mask(mask, finite=False)  # downscale_masks reads the values
    for i, act in zip(names, acts):
        if act is None:
            raise ValueError(f"{i} is None: the layer did not run in the forward pass; target a "
                             "module that the model's forward calls")
        if not isinstance(act, Tensor) or act.dim() != 4:
            shape = tuple(act.shape) if isinstance(act, Tensor) else type(act).__name__
            raise ValueError(f"{i} must be a 4-D N x C x H x W tensor, got {shape}")
        if act.shape[0] != mask.shape[0]:
            raise ValueError(f"{i} has batch size {act.shape[0]}, "
                             f"mask has {mask.shape[0]}")
        if act.shape[2] > mask.shape[2] or act.shape[3] > mask.shape[3]:
            raise ValueError(f"{i} is {tuple(act.shape[2:])}, larger than the "
                             f"{tuple(mask.shape[2:])} mask")
    if not mask.is_floating_point():
        mask = mask.to(acts[0].dtype)  # a boolean mask: max-pooling takes floats
    scaled = downscale_masks(mask, [a.shape[2:] for a in acts], kernel_size, pooling)
    total = mask.new_zeros(())
    for act, small in zip(acts, scaled):
        product = small * act.sum(dim=1, keepdim=True)
        per_image = product.abs().sum((1, 2, 3)) if norm == "l1" else product.pow(2).sum((1, 2, 3))
        total = total + per_image.mean()
    return total / len(acts)


@contextlib.contextmanager
def batchnorm_running(model, enabled: bool = True) -> Iterator[None]:
    """Run the BatchNorm layers of ``model`` on their running statistics inside the block (and
    without updating them), then restore each layer's mode, even after an exception.

    Why: in training mode BatchNorm normalises with the statistics of the whole batch, so one
    image's input gradient (Eq. 4) depends on the other images, and PyTorch has no third
    derivative of training-mode batch_norm (RBR). The authors' released code takes its input
    gradients in an extra forward pass in eval mode, which is what this does for BatchNorm only.
    """
    bns = ([m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
           if enabled and isinstance(model, nn.Module) else [])
    modes = [m.training for m in bns]
    try:
        for m in bns:
            m.eval()
        yield
    finally:
        for m, mode in zip(bns, modes):
            m.train(mode)


MODE_DEPENDENT = (nn.modules.batchnorm._BatchNorm, nn.modules.dropout._DropoutNd)


def depends_on_mode(model) -> bool:
    """Whether ``model`` computes differently in training and eval mode (it has BatchNorm or
    dropout). A model that does not gives the same input gradients in an extra forward pass on
    running statistics as in its training forward pass, so the training loop takes them from the
    latter (:func:`tapkit.fit.step_losses`)."""
    return isinstance(model, nn.Module) and any(isinstance(m, MODE_DEPENDENT)
                                                for m in model.modules())


def _batchnorm_context(model, batchnorm: BatchNormMode):
    _check_choice("batchnorm", batchnorm, ("running", "batch"))
    return batchnorm_running(model, batchnorm == "running")


_logits = lambda output: output[0] if isinstance(output, tuple) else output  # noqa: E731


def input_gradients(logits: Tensor, x: Tensor, create_graph: bool = True) -> Tensor:
    """d/dx of the summed log-probabilities, ``sum_k log_softmax(f(x))_k`` (inside Eq. 4)."""
    if not x.requires_grad:
        raise ValueError("x must require grad and be the input that produced the logits")
    total = F.log_softmax(logits, dim=1).sum()
    return torch.autograd.grad(total, x, create_graph=create_graph)[0]


# --------------------------------------------------------------------------- RRR (Eq. 4)

def rrr_penalty(grad: Tensor, mask: Tensor, scale: RrrScale = "none",
                reduction: Reduction = "mean") -> Tensor:
    """Eq. 4 from precomputed input gradients: ``sum_ij (M * sum_c grad_c)^2`` per image, then
    ``reduction`` over the batch (the paper's batch mean by default).

    ``scale="released"`` is the authors' code: the mask is multiplied by ``H*W / |M|`` before
    squaring, where ``|M|`` is the per-image sum of the mask's entries (its pixel count for a 0/1
    mask) and H*W the mask's size, so the penalty grows by ``(H*W/|M|)^2``. An empty mask gives 0
    here; the released code divides by zero there (NaN).
    """
    mask = check_input_mask(mask, grad)
    _check_choice("scale", scale, ("none", "released"))
    if scale == "released":
        count = mask.sum((1, 2, 3), keepdim=True)
        area = mask.shape[2] * mask.shape[3]
        mask = torch.where(count > 0, mask * (area / count.clamp_min(torch.finfo(mask.dtype).tiny)),
                           torch.zeros_like(mask))
    return _reduce((mask * grad.sum(dim=1, keepdim=True)).pow(2).sum((1, 2, 3)), reduction)


def rrr(model, x: Tensor, mask: Tensor, batchnorm: BatchNormMode = "running",
        scale: RrrScale = "none", reduction: Reduction = "mean") -> Tensor:
    """Right for the Right Reasons (Ross et al. 2017; the paper's Eq. 4), differentiable.

    ``model(x)`` may return logits or ``(logits, activations)``. ``batchnorm="running"`` takes the
    input gradient with BatchNorm on its running statistics, so each image's penalty depends on
    that image only (``"batch"``: the model's own mode, batch statistics when training).
    ``scale`` and ``reduction``: see :func:`rrr_penalty`.
    """
    mask = check_input_mask(mask, x)
    x = x.detach().requires_grad_(True)
    with _batchnorm_context(model, batchnorm):
        logits = _logits(model(x))
    return rrr_penalty(input_gradients(logits, x), mask, scale, reduction)


def influence(task_loss: Tensor, x: Tensor, params: Sequence[Tensor]) -> Tensor:
    """RBR's influence term ``d/dx sum_theta dL/dtheta``: the input gradient of the plain sum of
    all entries of all parameter gradients of the task loss L (Shao et al. 2021, as the XIL
    typology code and the TAP authors' code compute it), differentiable (third derivatives).

    Which paths from x it follows depends on how ``task_loss`` was built: from a forward pass of
    an ``x`` that required grad, the full derivative; from a forward pass before ``x`` required
    grad (the released code), only the places where the parameter gradients hold ``x`` itself,
    i.e. the first layer's weight gradient with the upstream gradient held fixed. A term that
    does not reach x at all is 0.
    """
    params = [p for p in params if p.requires_grad]
    if not params:
        raise ValueError("the model has no parameters that require grad")
    grads = torch.autograd.grad(task_loss, params, create_graph=True, allow_unused=True)
    total = sum(g.sum() for g in grads if g is not None)
    if not isinstance(total, Tensor) or not total.requires_grad:
        return torch.zeros_like(x)
    (out,) = torch.autograd.grad(total, x, create_graph=True, allow_unused=True)
    return torch.zeros_like(x) if out is None else out


def rbr_penalty(grad: Tensor, influence_term: Tensor, mask: Tensor,
                reduction: Reduction = "mean", sum_channels: bool = False) -> Tensor:
    """RBR from precomputed terms: the input gradient times the influence term, elementwise,
    masked, squared and summed per image, ``sum_cij (M * grad * IF)_cij^2`` (Shao et al. 2021, as
    the XIL typology code computes it), then ``reduction`` over the batch. ``sum_channels=True``
    sums each term over the channels before multiplying, as the authors' released code does
    (``sum_ij (M * sum_c grad_c * sum_c IF_c)^2``); on one-channel images the two agree."""
    mask = check_input_mask(mask, grad)
    if influence_term.shape != grad.shape:
        raise ValueError(f"influence term {tuple(influence_term.shape)} and input gradient "
                         f"{tuple(grad.shape)} differ in shape")
    if sum_channels:
        product = grad.sum(dim=1, keepdim=True) * influence_term.sum(dim=1, keepdim=True)
    else:
        product = grad * influence_term
    return _reduce((mask * product).pow(2).sum((1, 2, 3)), reduction)


def rbr(model: nn.Module, x: Tensor, y: Tensor, mask: Tensor, variant: RbrVariant = "full",
        batchnorm: BatchNormMode = "running", reduction: Reduction | None = None) -> Tensor:
    """Right for Better Reasons (Shao et al. 2021) as the paper uses it, differentiable.

    The input gradient of the summed log-probabilities times the influence term
    (:func:`influence`), masked, squared and summed per image. ``variant="full"`` (default): the
    task loss is the cross-entropy of the same forward pass (BatchNorm as ``batchnorm`` says), so
    the influence term is the full derivative; batch mean. ``variant="released"``: the authors'
    code: the task loss comes from a forward pass in the model's own mode made *before* x
    requires grad (the influence term keeps only the first layer's dependence on x), the input
    gradient from an extra forward pass (``batchnorm``), and the penalty is summed over the batch.
    ``reduction`` overrides the variant's batch reduction.
    """
    mask = check_input_mask(mask, x)
    _check_choice("RBR variant", variant, ("full", "released"))
    x = x.detach().clone()
    task = None
    if variant == "released":
        task = F.cross_entropy(_logits(model(x)), y)
    x.requires_grad_(True)
    with _batchnorm_context(model, batchnorm):
        logits = _logits(model(x))
    if task is None:
        task = F.cross_entropy(logits, y)
    grad = input_gradients(logits, x)
    term = influence(task, x, list(model.parameters()))
    released = variant == "released"
    return rbr_penalty(grad, term, mask, reduction or ("sum" if released else "mean"), released)

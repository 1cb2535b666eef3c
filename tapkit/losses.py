"""Explanatory-supervision (XS) losses L_XS of the paper's Eq. 3, and the distillation baselines.

Each loss is a pure function of tensors (and of the model where it needs gradients through it).
None switches the model between train and eval mode: where a loss must run BatchNorm in eval
mode (RBR's third derivative), the caller does so explicitly, see
:func:`tapkit.training.xs_forward`.

Equation numbers refer to ../shared/paper/tap-aaai24.tex:
Eq. 4 RRR, Eq. 6 the activation map A^l, Eq. 7 the downscaling D(M, l), Definition 2 (Eq. 8) TAP.
"""

from __future__ import annotations

from typing import Literal, Mapping, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

TapNorm = Literal["l1", "l2sq"]


def _check_mask(mask: Tensor, batch: int | None = None) -> None:
    if not isinstance(mask, Tensor) or mask.dim() != 4 or mask.shape[1] != 1:
        shape = tuple(mask.shape) if isinstance(mask, Tensor) else type(mask).__name__
        raise ValueError(f"mask must be a N x 1 x H x W tensor, got {shape}")
    if batch is not None and mask.shape[0] != batch:
        raise ValueError(f"mask has batch size {mask.shape[0]} but the input has {batch}")


def downscale_mask(mask: Tensor, size: int | tuple[int, int], kernel_size: int = 3) -> Tensor:
    """D(M, l) of Eq. 7: max-pool with stride 1 (grows the mask by ``kernel_size // 2`` pixels to
    cover receptive fields), then adaptive average pooling to the activation's ``size``."""
    _check_mask(mask)
    size = (size, size) if isinstance(size, int) else tuple(size)
    if size[0] > mask.shape[2] or size[1] > mask.shape[3]:
        raise ValueError(f"cannot downscale a {tuple(mask.shape[2:])} mask to a larger {size}")
    grown = F.max_pool2d(mask, kernel_size, stride=1, padding=kernel_size // 2)
    if grown.shape[-2:] != mask.shape[-2:]:  # even kernels pad one pixel too many
        grown = grown[..., : mask.shape[2], : mask.shape[3]]
    return F.adaptive_avg_pool2d(grown, size)


def tap(activations: Sequence[Tensor] | Mapping[str, Tensor], mask: Tensor, kernel_size: int = 3,
        norm: TapNorm = "l1") -> Tensor:
    """Targeted Activation Penalty (Definition 2, Eq. 8).

    ``(1/L) * sum_l mean_batch || D(M, l) * A^l ||``, where ``A^l`` is the channel sum of the l-th
    activation (Eq. 6) and the norm is L1 as in the paper (``norm="l1"``) or the squared
    Frobenius norm the authors' released code uses (``norm="l2sq"``). The mask is max-pooled once
    and average-pooled once per distinct activation size.
    """
    acts = list(activations.values()) if isinstance(activations, Mapping) else list(activations)
    if not acts:
        raise ValueError("activations is empty: pass at least one N x C x H x W activation")
    if norm not in ("l1", "l2sq"):
        raise ValueError(f"unknown norm {norm!r}; expected 'l1' or 'l2sq'")
    _check_mask(mask)
    grown = None
    scaled: dict[tuple[int, int], Tensor] = {}
    total = mask.new_zeros(())
    for i, act in enumerate(acts):
        if not isinstance(act, Tensor) or act.dim() != 4:
            shape = tuple(act.shape) if isinstance(act, Tensor) else type(act).__name__
            raise ValueError(f"activation {i} must be a 4-D N x C x H x W tensor, got {shape}")
        if act.shape[0] != mask.shape[0]:
            raise ValueError(f"activation {i} has batch size {act.shape[0]}, mask has {mask.shape[0]}")
        size = (act.shape[2], act.shape[3])
        if size not in scaled:
            if grown is None:
                grown = downscale_mask(mask, mask.shape[-2:], kernel_size)
            if size[0] > mask.shape[2] or size[1] > mask.shape[3]:
                raise ValueError(f"activation {i} is {size}, larger than the {tuple(mask.shape[2:])} mask")
            scaled[size] = F.adaptive_avg_pool2d(grown, size)
        product = scaled[size] * act.sum(dim=1, keepdim=True)
        per_image = product.abs().sum((1, 2, 3)) if norm == "l1" else product.pow(2).sum((1, 2, 3))
        total = total + per_image.mean()
    return total / len(acts)


def _logits(output) -> Tensor:
    return output[0] if isinstance(output, tuple) else output


def input_gradients(logits: Tensor, x: Tensor, create_graph: bool = True) -> Tensor:
    """d/dx of the summed log-probabilities, ``sum_k log_softmax(f(x))_k`` (inside Eq. 4)."""
    if not x.requires_grad:
        raise ValueError("x must require grad and be the input that produced the logits")
    total = F.log_softmax(logits, dim=1).sum()
    return torch.autograd.grad(total, x, create_graph=create_graph)[0]


def rrr_penalty(grad: Tensor, mask: Tensor) -> Tensor:
    """Eq. 4 from precomputed input gradients: batch mean of ``sum_ij (M * sum_c grad_c)^2``."""
    _check_mask(mask, grad.shape[0])
    if mask.shape[-2:] != grad.shape[-2:]:
        raise ValueError(f"mask is {tuple(mask.shape[-2:])} but the input is {tuple(grad.shape[-2:])}")
    return (mask * grad.sum(dim=1, keepdim=True)).pow(2).sum((1, 2, 3)).mean()


def rrr(model: nn.Module, x: Tensor, mask: Tensor) -> Tensor:
    """Right for the Right Reasons (Ross et al. 2017; the paper's Eq. 4), differentiable.

    ``model(x)`` may return logits or ``(logits, activations)``.
    """
    _check_mask(mask, x.shape[0])
    x = x.detach().requires_grad_(True)
    return rrr_penalty(input_gradients(_logits(model(x)), x), mask)


RbrVariant = Literal["full", "partial"]


def rbr_penalty(model: nn.Module, logits: Tensor, x: Tensor, y: Tensor, mask: Tensor,
                variant: RbrVariant = "full") -> Tensor:
    """RBR from logits of a forward pass on ``x`` (which must require grad).

    ``full`` (Shao et al. 2021): the influence-function term ``IF = d/dx sum_theta ||dL/dtheta||^2``
    of the task loss L, multiplied by the input gradient, squared inside the mask. Training on it
    needs third derivatives. ``partial`` is the variant the authors' released code trains with:
    the task loss there is built before x requires grad, so the influence term loses its
    dependence on x and only its magnitude ``sum_theta ||dL/dtheta||^2`` weights the input
    gradient.
    """
    _check_mask(mask, x.shape[0])
    if variant not in ("full", "partial"):
        raise ValueError(f"unknown RBR variant {variant!r}; expected 'full' or 'partial'")
    grad_x = input_gradients(logits, x)
    params = [p for p in model.parameters() if p.requires_grad]
    task = F.cross_entropy(logits, y)
    grads = torch.autograd.grad(task, params, create_graph=True, allow_unused=True)
    influence = sum(g.pow(2).sum() for g in grads if g is not None)
    if variant == "full":
        weight = torch.autograd.grad(influence, x, create_graph=True)[0]
    else:
        weight = influence
    if mask.shape[-2:] != x.shape[-2:]:
        raise ValueError(f"mask is {tuple(mask.shape[-2:])} but the input is {tuple(x.shape[-2:])}")
    return (mask * (grad_x * weight).sum(dim=1, keepdim=True)).pow(2).sum((1, 2, 3)).mean()


def rbr(model: nn.Module, x: Tensor, y: Tensor, mask: Tensor, variant: RbrVariant = "full") -> Tensor:
    """Right for Better Reasons (Shao et al. 2021) as the paper uses it, differentiable."""
    _check_mask(mask, x.shape[0])
    x = x.detach().requires_grad_(True)
    return rbr_penalty(model, _logits(model(x)), x, y, mask, variant)


# --- Knowledge-distillation baselines (Appendix "Comparison with Knowledge Distillation") ---

def kd(student_logits: Tensor, teacher_logits: Tensor, temperature: float = 4.0) -> Tensor:
    """Hinton et al. (2015): ``T^2 * KL(softmax(t/T) || softmax(s/T))``, batch mean."""
    t = F.log_softmax(teacher_logits.detach() / temperature, dim=1)
    s = F.log_softmax(student_logits / temperature, dim=1)
    return F.kl_div(s, t, reduction="batchmean", log_target=True) * temperature**2


def attention_map(act: Tensor, p: int = 2) -> Tensor:
    """Zagoruyko & Komodakis (2017): ``sum_c |A_c|^p``, flattened and L2-normalised per image."""
    if act.dim() != 4:
        raise ValueError(f"activation must be N x C x H x W, got {tuple(act.shape)}")
    q = act.abs().pow(p).sum(dim=1).flatten(1)
    return F.normalize(q, dim=1)


def at(student_acts: Sequence[Tensor], teacher_acts: Sequence[Tensor], p: int = 2) -> Tensor:
    """Attention transfer: mean over layer pairs of ``||Q_s - Q_t||_2``, batch mean.

    A student map whose size differs from the teacher's is resized bilinearly to the teacher's.
    """
    if len(student_acts) != len(teacher_acts) or not student_acts:
        raise ValueError(f"need equally many (>0) student and teacher activations, got "
                         f"{len(student_acts)} and {len(teacher_acts)}")
    total = student_acts[0].new_zeros(())
    for s, t in zip(student_acts, teacher_acts):
        if s.shape[-2:] != t.shape[-2:]:
            s = F.interpolate(s, size=t.shape[-2:], mode="bilinear", align_corners=False)
        diff = attention_map(s, p) - attention_map(t.detach(), p)
        total = total + diff.norm(dim=1).mean()
    return total / len(student_acts)


def jt(student_grad: Tensor, teacher_grad: Tensor) -> Tensor:
    """Jacobian transfer (Srinivas & Fleuret 2018): batch mean of the squared L2 distance between
    per-image L2-normalised input gradients. ``student_grad`` must carry a graph (double backward)."""
    if student_grad.shape != teacher_grad.shape:
        raise ValueError(f"gradient shapes differ: {tuple(student_grad.shape)} vs {tuple(teacher_grad.shape)}")
    s = F.normalize(student_grad.flatten(1), dim=1)
    t = F.normalize(teacher_grad.detach().flatten(1), dim=1)
    return (s - t).pow(2).sum(dim=1).mean()

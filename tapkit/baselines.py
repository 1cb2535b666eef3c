"""The knowledge-distillation baselines of the appendix ("Comparison with Knowledge
Distillation"): KD on logits, attention transfer (AT) on activations, Jacobian transfer (JT) on
input gradients. Pure functions of tensors, like :mod:`tapkit.losses`."""

from __future__ import annotations

from typing import Sequence

import torch.nn.functional as F
from torch import Tensor

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

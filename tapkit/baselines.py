"""The knowledge-distillation baselines of the appendix ("Comparison with Knowledge
Distillation"): KD on logits, attention transfer (AT) on activations, Jacobian transfer (JT) on
input gradients. Pure functions of tensors, like :mod:`tapkit.losses`.

AT and JT come in two forms (their options' ``variant``, :mod:`tapkit.method_options`):
``"paper"``, the cited methods (:func:`at`, :func:`jt`), and ``"released"``, the authors' code
(``src/loss.py`` ``get_at_loss`` and ``get_et_loss`` with ``src/explainer.py``'s label-specific
input gradient; :func:`at_released`, :func:`jt_released`), with which the paper's λ were tuned.
"""

from __future__ import annotations

import math
from typing import Literal, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

AtVariant = Literal["paper", "released"]
JtVariant = Literal["paper", "released"]

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


def pair_by_resolution(student_sizes: Sequence[int], teacher_sizes: Sequence[int]) -> list[tuple[int, int]]:
    """Which student layer AT compares with which teacher layer, ``(student, teacher)`` index
    pairs, from the layers' spatial sizes (heights), both listed shallow to deep.

    Equally many layers pair in order. Otherwise every layer of the shorter list takes the
    not-yet-paired layer of the longer list whose size is nearest (in log scale; the shallower
    on a tie), and the longer list's other layers go unpaired. A VGG-16 student (five pooling
    layers: 112, 56, 28, 14, 7 px at 224) with a ResNet-18 teacher (four stages: 56, 28, 14, 7)
    pairs the last four pools with the four stages and leaves the first pool out.
    """
    if not student_sizes or not teacher_sizes:
        raise ValueError("AT needs at least one student and one teacher layer")
    if len(student_sizes) == len(teacher_sizes):
        return [(i, i) for i in range(len(student_sizes))]
    flip = len(student_sizes) > len(teacher_sizes)
    short, long = (teacher_sizes, student_sizes) if flip else (student_sizes, teacher_sizes)
    free, pairs = list(range(len(long))), []
    for i, size in enumerate(short):
        j = min(free, key=lambda k: (abs(math.log(long[k] / size)), k))
        free.remove(j)
        pairs.append((j, i) if flip else (i, j))
    return sorted(pairs)


def _layer_pairs(student_acts: Sequence[Tensor], teacher_acts: Sequence[Tensor]):
    """The (student, teacher) layer pairs AT compares (:func:`pair_by_resolution`); a
    ``ValueError`` when either side has no activations."""
    if not student_acts or not teacher_acts:
        raise ValueError(f"need student and teacher activations, got {len(student_acts)} and "
                         f"{len(teacher_acts)}")
    return pair_by_resolution([a.shape[-2] for a in student_acts],
                              [a.shape[-2] for a in teacher_acts])


def at(student_acts: Sequence[Tensor], teacher_acts: Sequence[Tensor], p: int = 2) -> Tensor:
    """Attention transfer: mean over layer pairs of ``||Q_s - Q_t||_2``, batch mean.

    Layers pair by resolution (:func:`pair_by_resolution`), so student and teacher may have
    different numbers of targets; a student map whose size still differs from its teacher
    partner's is resized bilinearly to the teacher's.
    """
    pairs = _layer_pairs(student_acts, teacher_acts)
    total = student_acts[0].new_zeros(())
    for i, j in pairs:
        s, t = student_acts[i], teacher_acts[j]
        if s.shape[-2:] != t.shape[-2:]:
            s = F.interpolate(s, size=t.shape[-2:], mode="bilinear", align_corners=False)
        diff = attention_map(s, p) - attention_map(t.detach(), p)
        total = total + diff.norm(dim=1).mean()
    return total / len(pairs)


def jt(student_grad: Tensor, teacher_grad: Tensor) -> Tensor:
    """Jacobian transfer (Srinivas & Fleuret 2018): batch mean of the squared L2 distance between
    per-image L2-normalised input gradients. ``student_grad`` must carry a graph (double backward)."""
    if student_grad.shape != teacher_grad.shape:
        raise ValueError(f"gradient shapes differ: {tuple(student_grad.shape)} vs {tuple(teacher_grad.shape)}")
    s = F.normalize(student_grad.flatten(1), dim=1)
    t = F.normalize(teacher_grad.detach().flatten(1), dim=1)
    return (s - t).pow(2).sum(dim=1).mean()


def _column_normalised(maps: Tensor) -> Tensor:
    """``F.normalize(maps.sum(dim=1), p=2)`` as the released code writes it: the signed channel
    sum (N x H x W), each column ``[n, :, w]`` scaled to unit L2 norm (``dim=1`` is H)."""
    return F.normalize(maps.sum(dim=1), p=2, dim=1)


def at_released(student_acts: Sequence[Tensor], teacher_acts: Sequence[Tensor]) -> Tensor:
    """The released code's AT (``get_at_loss``): per layer pair, each map's signed channel sum
    normalised per column (:func:`_column_normalised`), the teacher's resized to the student's
    size (nearest, after normalising) where they differ, the Frobenius norm of the difference per
    image, batch mean, **summed** over the pairs. Layers pair as in :func:`at` (in order when the
    counts agree, as the released ``zip``)."""
    pairs = _layer_pairs(student_acts, teacher_acts)
    total = student_acts[0].new_zeros(())
    for i, j in pairs:
        s, t = _column_normalised(student_acts[i]), _column_normalised(teacher_acts[j].detach())
        if t.shape[-2:] != s.shape[-2:]:
            t = F.interpolate(t[:, None], size=s.shape[-2:]).squeeze(1)
        total = total + torch.linalg.matrix_norm(s - t).mean()
    return total


def class_input_gradients(logits: Tensor, x: Tensor, y: Tensor, create_graph: bool = True) -> Tensor:
    """d/dx of each image's true-class log-probability ``log_softmax(f(x))_y`` (the released
    code's ``get_input_gradients(..., label_specific=True)``, the student's map in its JT)."""
    if not x.requires_grad:
        raise ValueError("x must require grad and be the input that produced the logits")
    picked = F.log_softmax(logits, dim=1).gather(1, y.long().view(-1, 1)).sum()
    return torch.autograd.grad(picked, x, create_graph=create_graph)[0]


def jt_released(student_grad: Tensor, teacher_grad: Tensor) -> Tensor:
    """The released code's JT (``get_et_loss``): each gradient map's signed channel sum
    normalised per column (:func:`_column_normalised`), the squared Frobenius norm of the
    difference per image, batch mean. The student's map is its true-class gradient
    (:func:`class_input_gradients`)."""
    if student_grad.shape != teacher_grad.shape:
        raise ValueError(f"gradient shapes differ: {tuple(student_grad.shape)} vs {tuple(teacher_grad.shape)}")
    diff = _column_normalised(student_grad) - _column_normalised(teacher_grad.detach())
    return (torch.linalg.matrix_norm(diff) ** 2).mean()

"""What an annotation mask M must be for the XS losses (Eqs. 4 and 8): an N x 1 x H x W tensor
of finite values (0/1, or weights in [0, 1]). A boolean mask is cast to the float type of what it
multiplies; a NaN is refused, since it would make the loss NaN without a word.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Iterator

import torch
from torch import Tensor

_CHECKED = contextvars.ContextVar("tapkit_masks_checked", default=False)


@contextlib.contextmanager
def masks_checked() -> Iterator[None]:
    """Inside the block the losses skip their finite check: for a training loop that checked its
    masks once (``fit``), since reading a GPU tensor's values waits for the device every step."""
    token = _CHECKED.set(True)
    try:
        yield
    finally:
        _CHECKED.reset(token)


def check_finite_mask(mask: Tensor, always: bool = False) -> None:
    """Raise ``ValueError`` when ``mask`` holds NaN or infinite entries. Skipped (unless
    ``always``) inside :func:`masks_checked` and inside a compiled step, where reading the
    values would break the graph."""
    skip = not always and (_CHECKED.get() or torch.compiler.is_compiling())
    if not skip and not bool(torch.isfinite(mask).all()):
        raise ValueError("mask has NaN or infinite entries: an annotation mask holds 0/1 (or "
                         "weights in [0, 1]); replace them, e.g. torch.nan_to_num(mask, nan=0.0)")


def check_mask(mask: Tensor, batch: int | None = None, dtype: torch.dtype | None = None,
               finite: bool = True) -> Tensor:
    """``mask`` checked (N x 1 x H x W, of ``batch`` images, finite unless ``finite=False``); a
    boolean or integer mask is cast to ``dtype`` (default float32: max-pooling takes floats)."""
    if not isinstance(mask, Tensor) or mask.dim() != 4 or mask.shape[1] != 1:
        shape = tuple(mask.shape) if isinstance(mask, Tensor) else type(mask).__name__
        raise ValueError(f"mask must be a N x 1 x H x W tensor, got {shape}")
    if batch is not None and mask.shape[0] != batch:
        raise ValueError(f"mask has batch size {mask.shape[0]} but the input has {batch}")
    if finite:
        check_finite_mask(mask)
    return mask if mask.is_floating_point() else mask.to(dtype or torch.float32)


def check_input_mask(mask: Tensor, x: Tensor) -> Tensor:
    """``mask`` checked against the input ``x`` (same images and size), cast to ``x``'s type."""
    mask = check_mask(mask, x.shape[0], x.dtype)
    if mask.shape[-2:] != x.shape[-2:]:
        raise ValueError(f"mask is {tuple(mask.shape[-2:])} but the input is {tuple(x.shape[-2:])}")
    return mask

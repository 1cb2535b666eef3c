"""Spurious contamination functions SC(X*, y) with ground-truth masks.

Every function takes clean images ``X*`` (``N x H x W``, pixel values in [0, 255]) and the labels
whose spurious signal should be written (the true labels for SC(X*, y), a permutation of them
for SC(X*, permute(y)); see :func:`assign`) and returns ``(contaminated, mask)``: the images with
the signal added and the annotation mask ``M`` of the paper's Eq. 2 (1 on spurious pixels, 0
elsewhere), both ``float32`` arrays of shape ``N x H x W``.

Everything is vectorised with numpy indexing and seeded with a ``numpy.random.Generator``, so
contaminating the 60,000 MNIST training images takes a fraction of a second.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal, Sequence

import numpy as np

Assignment = Literal["label", "permuted", "swapped"]

MNIST_PATCH = 4
PNEU_TAGS: tuple[str, ...] = ("ABC", "XYZ")
KNEE_TAGS: tuple[str, ...] = ("ABC", "DEF", "GHI", "JKL", "MNO")


def _check(images: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    images = np.asarray(images, dtype=np.float32)
    labels = np.asarray(labels)
    if images.ndim != 3:
        raise ValueError(f"images must be N x H x W, got shape {images.shape}")
    if labels.shape != (images.shape[0],):
        raise ValueError(f"labels must have shape ({images.shape[0]},), got {labels.shape}")
    return images.copy(), labels.astype(np.int64)


def assign(labels: np.ndarray, how: Assignment, rng: np.random.Generator) -> np.ndarray:
    """The labels whose signal is written: SC(X*, y) or SC(X*, permute(y)).

    ``"label"`` keeps the true labels (the contaminated split), ``"permuted"`` shuffles them
    across images so that the signal carries no information about the class (MNIST, KNEE), and
    ``"swapped"`` flips a binary label (PNEU).
    """
    labels = np.asarray(labels, dtype=np.int64)
    if how == "label":
        return labels.copy()
    if how == "permuted":
        return rng.permutation(labels)
    if how == "swapped":
        if labels.size and (labels.min() < 0 or labels.max() > 1):
            raise ValueError("'swapped' assignment needs binary labels (0 or 1)")
        return 1 - labels
    raise ValueError(f"unknown assignment {how!r}; expected 'label', 'permuted' or 'swapped'")


def _corner_offsets(n: int, h: int, w: int, ph: int, pw: int, rng: np.random.Generator,
                    margin: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Top-left offsets of a ``ph x pw`` box in a random corner of each image."""
    corner = rng.integers(0, 4, size=n)
    top = np.where(corner // 2 == 0, margin, h - ph - margin)
    left = np.where(corner % 2 == 0, margin, w - pw - margin)
    return top, left


def _paste(images: np.ndarray, mask: np.ndarray, top: np.ndarray, left: np.ndarray,
           patch: np.ndarray, ink: np.ndarray | None = None) -> None:
    """Write per-image patches ``patch[n]`` (N x ph x pw) at ``(top[n], left[n])`` in place and
    mark the whole box in ``mask``; with ``ink`` (ph x pw, 1 = ink), only inked pixels change."""
    n, ph, pw = patch.shape
    rows = top[:, None, None] + np.arange(ph)[None, :, None]
    cols = left[:, None, None] + np.arange(pw)[None, None, :]
    idx = np.arange(n)[:, None, None]
    if ink is not None:
        patch = np.where(ink > 0, patch, images[idx, rows, cols])
    images[idx, rows, cols] = patch
    mask[idx, rows, cols] = 1.0


def corner_patch(images: np.ndarray, labels: np.ndarray, rng: np.random.Generator,
                 size: int = MNIST_PATCH, step: float = 25.0) -> tuple[np.ndarray, np.ndarray]:
    """Decoy-MNIST (Ross et al. 2017): a ``size x size`` patch of value ``255 - step * label``
    in a random corner of each image."""
    images, labels = _check(images, labels)
    n, h, w = images.shape
    mask = np.zeros_like(images)
    top, left = _corner_offsets(n, h, w, size, size, rng)
    value = (255.0 - step * labels).astype(np.float32)
    patch = np.broadcast_to(value[:, None, None], (n, size, size))
    _paste(images, mask, top, left, patch)
    return images, mask


@lru_cache(maxsize=64)
def render_text(text: str, height: int) -> np.ndarray:
    """A binary bitmap (``float32``, 1 = ink) of ``text`` whose box is about ``height`` pixels tall.

    Uses Pillow's built-in scalable font, so no font file is needed.
    """
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=max(height, 4))
    left, top, right, bottom = font.getbbox(text)
    canvas = Image.new("L", (right - left + 2, bottom - top + 2), 0)
    ImageDraw.Draw(canvas).text((1 - left, 1 - top), text, fill=255, font=font)
    ink = np.asarray(canvas, dtype=np.float32) / 255.0
    return (ink > 0.5).astype(np.float32)


def text_tag(images: np.ndarray, labels: np.ndarray, rng: np.random.Generator,
             tags: Sequence[str] = PNEU_TAGS, scale: float = 0.1,
             value: float = 255.0, box: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Medical text tags: ``tags[label]`` written in a random corner, font about ``scale`` of the
    image side, in ink of brightness ``value``; the mask is the tag's whole box (as an annotator
    would draw it). With ``box``, a label: the whole box is filled with brightness ``box`` and
    the letters written on it (black on white, ``value=0, box=255``, as a scanner prints a
    label), so the tag reads the same on any background."""
    images, labels = _check(images, labels)
    if labels.size and (labels.min() < 0 or labels.max() >= len(tags)):
        raise ValueError(f"labels must lie in [0, {len(tags) - 1}] for tags {tuple(tags)}")
    n, h, w = images.shape
    mask = np.zeros_like(images)
    height = max(int(round(scale * min(h, w))), 5)
    margin = max(1, min(h, w) // 32)
    for k, tag in enumerate(tags):
        sel = np.flatnonzero(labels == k)
        if sel.size == 0:
            continue
        ink = render_text(tag, height)
        ph, pw = ink.shape
        if ph + margin > h or pw + margin > w:
            raise ValueError(f"tag {tag!r} ({ph}x{pw} px) does not fit a {h}x{w} image")
        top, left = _corner_offsets(sel.size, h, w, ph, pw, rng, margin)
        sub_img, sub_mask = images[sel], mask[sel]
        patch = np.full((sel.size, ph, pw), value, np.float32)
        if box is None:
            _paste(sub_img, sub_mask, top, left, patch, ink)
        else:
            _paste(sub_img, sub_mask, top, left, np.where(ink > 0, patch, np.float32(box)))
        images[sel], mask[sel] = sub_img, sub_mask
    return images, mask


def stripe(images: np.ndarray, labels: np.ndarray, rng: np.random.Generator, width: int = 6,
           max_offset: int = 15, step: float = 127.0) -> tuple[np.ndarray, np.ndarray]:
    """Stripe artifact (appendix): a full-height vertical stripe ``width`` px wide, placed up to
    ``max_offset`` px from the left or right edge, of brightness ``255 - label * step``
    (``step`` = 127 for two classes, 51 for five grades)."""
    images, labels = _check(images, labels)
    n, h, w = images.shape
    if width + max_offset > w:
        raise ValueError(f"a {width}-px stripe {max_offset} px from the edge needs width >= "
                         f"{width + max_offset}, got {w}")
    mask = np.zeros_like(images)
    offset = rng.integers(0, max_offset + 1, size=n)
    right = rng.integers(0, 2, size=n).astype(bool)
    left = np.where(right, w - width - offset, offset)
    top = np.zeros(n, dtype=np.int64)
    value = (255.0 - step * labels).astype(np.float32)
    patch = np.broadcast_to(value[:, None, None], (n, h, width))
    _paste(images, mask, top, left, patch)
    return images, mask


CONTAMINATIONS = {"corner_patch": corner_patch, "text_tag": text_tag, "stripe": stripe}

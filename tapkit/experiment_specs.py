"""The experiments a config can name, as a registry (torchvision's model registry, for data
sets): one entry per experiment with its facts as data — its kind, the paper's name for it, the
label pages print, its metric, the name its tables use, and for PNEU and KNEE the folder layout
a user downloads. Every list of experiments, every paper-name and metric lookup derives from
here; adding an experiment is one :func:`register_experiment` call and its loader in
:mod:`tapkit.data` (a registry-wide test checks that every entry has one).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class ExperimentKind(Enum):
    """What an experiment is: the paper's Decoy-MNIST (MNIST sources), one of its medical data
    sets (a downloaded folder, or the digits stand-in), or a built-in pretraining task that
    stands in for ImageNet weights (nothing to download)."""

    MNIST = "Decoy-MNIST"
    MEDICAL = "medical"
    PRETRAIN = "pretraining"


@dataclass(frozen=True)
class FolderDataset:
    """A medical dataset as the user downloads it: ``<folder>/<split>/<class>/<pattern>``."""

    name: str
    folder: str
    classes: tuple[str, ...]
    pattern: str
    metric: str
    source: str

    @property
    def layout(self) -> str:
        return (f"{self.folder}/{{train,test}}/{{{','.join(self.classes)}}}/{self.pattern}  "
                f"({self.source})")


@dataclass(frozen=True)
class ExperimentSpec:
    """One experiment. ``name``: the config's (``TrainConfig.experiment``); ``paper_name``: the
    paper's tables' ("MNIST", "PNEU", "KNEE"; None for the pretraining tasks, which the paper
    does not have); ``label``: what pages print; ``metric``: its task metric
    (:data:`tapkit.metrics.TASK_METRICS`; a folder's is its dataset's); ``table_name``: the name
    its tables and cells use where it differs from ``name`` (Decoy-MNIST's tables say
    ``"mnist"``); ``folder``: the layout of the folder a user downloads (PNEU, KNEE);
    ``classes``: how many classes (grades) its task has; ``paper_train_size``: the paper's
    training set (MNIST 60,000, PNEU 5,232, KNEE 8,260; a cluster's time estimates read it)."""

    name: str
    kind: ExperimentKind
    label: str
    classes: int
    metric: str = "accuracy"
    paper_name: str | None = None
    table_name: str | None = None
    folder: FolderDataset | None = None
    paper_train_size: int | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The names that refer to it: its config name, then its tables' name if it has one."""
        return (self.name,) + ((self.table_name,) if self.table_name else ())


_EXPERIMENTS: dict[str, ExperimentSpec] = {}


def register_experiment(spec: ExperimentSpec) -> ExperimentSpec:
    """Add ``spec``; a name (or tables' name) already taken is refused, the first entry kept."""
    taken = [n for n in spec.names if any(n in s.names for s in _EXPERIMENTS.values())]
    if taken:
        raise ValueError(f"experiment {taken[0]!r} is already registered")
    folder = spec.folder
    if folder is not None and (folder.metric, len(folder.classes)) != (spec.metric, spec.classes):
        raise ValueError(f"{spec.name!r}: its folder's metric and classes ({folder.metric!r}, "
                         f"{len(folder.classes)}) are not the experiment's ({spec.metric!r}, "
                         f"{spec.classes})")
    _EXPERIMENTS[spec.name] = spec
    return spec


def get_experiment(name: str) -> ExperimentSpec:
    """The entry ``name`` refers to (its config name or its tables' name); ``ValueError``
    listing the registered names otherwise."""
    for spec in _EXPERIMENTS.values():
        if name in spec.names:
            return spec
    raise ValueError(f"unknown experiment {name!r}; expected one of {list_experiments()}")


def config_experiment(name: str) -> ExperimentSpec:
    """The entry a config's ``experiment`` names: its config name only (the tables' name of
    Decoy-MNIST, ``"mnist"``, is refused, saying which to write); ``ValueError`` otherwise."""
    spec = get_experiment(name)
    if spec.name != name:
        raise ValueError(f"a config names the experiment {spec.name!r}, not {name!r} (the name "
                         "its tables use)")
    return spec


def list_experiments(kind: ExperimentKind | None = None) -> list[str]:
    """Config names of the registered experiments (of ``kind``), in registration order."""
    return [s.name for s in _EXPERIMENTS.values() if kind is None or s.kind is kind]


def paper_names(kind: ExperimentKind | None = None) -> dict[str, str]:
    """``{name: the paper's name}`` for every registered name (config and tables') the paper
    has (of ``kind``): ``{"decoy-mnist": "MNIST", "mnist": "MNIST", "pneu": "PNEU", ...}``."""
    return {n: s.paper_name for s in _EXPERIMENTS.values()
            if s.paper_name and (kind is None or s.kind is kind) for n in s.names}


# KNEE's own ``val`` split is not used: the paper reserves 10% of the training split for
# validation, as for the others.
for _spec in (
        ExperimentSpec("decoy-mnist", ExperimentKind.MNIST, "Decoy-MNIST", 10, paper_name="MNIST",
                       table_name="mnist", paper_train_size=60_000),
        ExperimentSpec("pneu", ExperimentKind.MEDICAL, "PNEU", 2, "f1", "PNEU",
                       paper_train_size=5_232, folder=FolderDataset(
            "pneu", "chest_xray", ("NORMAL", "PNEUMONIA"), "*.jpeg", "f1",
            "Kermany et al. 2018, 'Chest X-Ray Images (Pneumonia)', Mendeley Data / Kaggle")),
        ExperimentSpec("knee", ExperimentKind.MEDICAL, "KNEE", 5, "mae", "KNEE",
                       paper_train_size=8_260, folder=FolderDataset(
            "knee", "kneeKL224", ("0", "1", "2", "3", "4"), "*.png", "mae",
            "Chen 2018, 'Knee Osteoarthritis Severity Grading Dataset', Mendeley Data / Kaggle")),
        # substitutes for ImageNet pretraining, nothing to download: embedded digits no stand-in
        # draws (tapkit.data.digits_pretrain) or formula-driven fractals (fractal_pretrain)
        ExperimentSpec("digits-pretrain", ExperimentKind.PRETRAIN, "digits pretraining", 10),
        ExperimentSpec("fractal-pretrain", ExperimentKind.PRETRAIN, "fractal pretraining", 40)):
    register_experiment(_spec)

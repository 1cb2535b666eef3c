"""The medical chapters' runs (PNEU, KNEE, or their digits stand-in): which runs, with which λ.

The PNEU, KNEE, overlap, visual-comparison and extra-architecture chapters all build their run
lists here, so they ask for exactly the same :class:`~tapkit.config.TrainConfig` objects and
hit the same cached runs in the results store.

Cases follow the paper's Results section: ``base`` (No XS trained on clean images), ``none``
("No XS", trained on contaminated images), and ``rrr``, ``rbr``, ``tap`` (Eq. 3 with the XS
loss of Eq. 4, RBR, or Definition 2) with ground-truth masks. λ: the paper's tables, replaced by
this profile's λ search (:func:`search_and_choose`: the paper profile's grids, the quick
profile's per-architecture grids) where it ran, then by the notebook's ``lambdas``.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch

from ..experiment_specs import ExperimentKind, paper_names
from ..methods import is_xs
from ..models import Role, build_model, models_where
from .cells import Cell, masks_of
from .paper_tables import lambdas_of, paper_lambda_table
from .protocols import Protocol, medical
from .setting1 import case_config, cases as setting1_cases, why_not_run
from .setting1 import left_out, stripe_left_out  # noqa: F401  (the chapters' and pages' names)

ARCHITECTURES = tuple(models_where(Role.MAIN))  # VGG-16, ResNet-18, DenseNet-121
EXTRA_ARCHITECTURES = tuple(models_where(Role.APPENDIX))  # EfficientNet-B0, MobileNet-v2
DATASETS = paper_names(ExperimentKind.MEDICAL)  # {"pneu": "PNEU", "knee": "KNEE"}
LAMBDA_SETTINGS = {"tag": "ground_truth", "stripe": "stripe_ground_truth"}
# App. "Additional Experiments with Deep Architectures" (tex line 805) gives the λ of
# EfficientNet-B0 and MobileNet-v2 in the text only (lambdas.csv's setting of that name)
EXTRA_SETTING = "appendix_architectures"


def paper_lambdas(experiment: str, model: str, artifact: str = "tag") -> dict[str, float]:
    """λ per XS method for one dataset and architecture from the paper's hyperparameter tables
    (ground-truth table for tags, stripe table for stripes); for EfficientNet-B0 / MobileNet-v2,
    the appendix text's (:data:`EXTRA_SETTING`)."""
    if artifact not in LAMBDA_SETTINGS:
        raise ValueError(f"unknown artifact {artifact!r}; expected one of {sorted(LAMBDA_SETTINGS)}")
    if model in EXTRA_ARCHITECTURES and experiment in DATASETS:
        return paper_table(EXTRA_SETTING, experiment, model)
    return paper_table(LAMBDA_SETTINGS[artifact], experiment, model)


def paper_table(setting: str, experiment: str, model: str) -> dict[str, float]:
    """λ per method of one of the paper's hyperparameter tables (:func:`.paper_tables.paper_lambda_table`):
    ``setting`` "ground_truth", "stripe_ground_truth", "teacher" (teacher annotations), "kd"
    (the distillation comparison) or :data:`EXTRA_SETTING` (the appendix architectures)."""
    if experiment not in DATASETS:
        raise ValueError(f"unknown experiment {experiment!r}; expected one of {sorted(DATASETS)}")
    lams = lambdas_of(setting, DATASETS[experiment], model)
    if not lams:
        known = sorted(paper_lambda_table().setting.unique())
        raise ValueError(f"the paper gives no {setting!r} λ for {model} on {DATASETS[experiment]} "
                         f"(tables: {known})")
    return lams


@lru_cache(maxsize=None)
def has_batchnorm(model: str) -> bool:
    """Whether a registered architecture contains BatchNorm (built on the meta device: no memory,
    no weights)."""
    with torch.device("meta"):
        net = build_model(model, 2, 3).model
    return any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in net.modules())


def start_config(p: Protocol, experiment: str, model: str):
    """The pretraining run architecture ``model``'s stand-in runs on ``experiment`` start from
    (with its overrides: VGG-16's own learning rate), or None (:meth:`Protocol.start`; or no
    run of ``model`` on ``experiment``: quick, VGG-16 on KNEE)."""
    if not run_models(p, experiment, [model], setting1_cases()):
        return None
    return p.start(p.settings(experiment, model))


def run_models(s: Protocol, experiment: str, models: Sequence[str],
               cases: Sequence[str]) -> list[str]:
    """The architectures of ``models`` with at least one of ``cases`` the protocol runs on
    ``experiment`` (quick: not VGG-16, whose every cell is ``not_run``)."""
    return [m for m in models if any(not why_not_run(s, experiment, m, c) for c in cases)]


def untrained(s: Protocol) -> list[str]:
    """Architectures the profile does not train (``epochs`` 0 in ``model_overrides``)."""
    return [m for m, o in s.model_overrides.items() if o.get("epochs") == 0]


def chapter_settings(profile: str, **overrides: Any) -> Protocol:
    """The profile's medical protocol with the notebook's non-``None`` parameters
    (:func:`tapkit.experiments.protocols.medical`)."""
    return medical(profile, **overrides)


def case_cell(p: Protocol, experiment: str, model: str, case: str, lam: float | None,
              seed: int, artifact: str = "tag") -> Cell:
    """One case of a Setting-1 medical table (:func:`case_config`) as a cell: its method row is
    the case, its masks the ground truth for an XS method."""
    return Cell(case_config(p, experiment, model, case, lam, seed, artifact), "", experiment,
                model, case, masks_of(case), None, seed, lam or 0.0, artifact)


def medical_runs(p: Protocol, experiment: str, models: Sequence[str],
                 cases: Sequence[str] | None = None, artifact: str = "tag",
                 lambdas: Mapping[str, Any] | None = None) -> list[Cell]:
    """Every (model, case, seed) run of a medical chapter but the protocol's ``not_run`` cells,
    each architecture and case on its seeds (:meth:`Protocol.seeds_of`).
    ``lambdas`` overrides the paper's λ, per model and method (``{model: {method: λ}}``), then
    per method (``{method: λ}``). ``cases`` None: every case (:func:`.setting1.cases`)."""
    out, cases = [], cases or setting1_cases()
    for model in models:
        lams = paper_lambdas(experiment, model, artifact)
        lams.update((lambdas or {}).get(model, {}))
        lams.update({k: float(v) for k, v in (lambdas or {}).items() if not isinstance(v, Mapping)})
        for case in [c for c in cases if not why_not_run(p, experiment, model, c)]:
            lam = lams.get(case) if is_xs(case) else 0.0
            out += [case_cell(p, experiment, model, case, lam, seed, artifact)
                    for seed in p.seeds_of(model, case, experiment)]
    return out


# ----------------------------------------------------------------------------- λ search

def search_runs(p: Protocol, experiment: str, models: Sequence[str],
                 methods: Sequence[str], artifact: str = "tag") -> list[Cell]:
    """The λ search of a medical chapter: every λ of the protocol's grid for each architecture
    and XS method it trains (:meth:`Protocol.grid`; none without a grid or for a
    ``not_run`` cell), on the first seed."""
    return [case_cell(p, experiment, model, method, float(lam), p.seeds[0], artifact)
            for model in models for method in methods
            if not why_not_run(p, experiment, model, method)
            for lam in p.grid(method, model, experiment)]


def choice_name(experiment: str, artifact: str = "tag") -> str:
    return f"lambda_choice_{experiment}_{artifact}"


def searched_lambdas(root: str | Path, experiment: str, artifact: str = "tag",
                     lambdas: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The λ overrides a medical chapter trains with: the search's choice per architecture and
    method (``<root>/tables/lambda_choice_<experiment>_<artifact>.csv``, when the search ran),
    then the notebook's ``lambdas``."""
    out: dict[str, Any] = {}
    path = Path(root) / "tables" / f"{choice_name(experiment, artifact)}.csv"
    if path.exists():
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                out.setdefault(row["model"], {})[row["method"]] = float(row["lam"])
    for key, value in (lambdas or {}).items():
        out[key] = {**out.get(key, {}), **value} if isinstance(value, Mapping) else value
    return out

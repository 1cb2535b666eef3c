"""Setting 2 and the distillation comparison on PNEU and KNEE (or their digits stand-in): the
teachers, the students with teacher and random masks, and the KD/AT/JT students, as configs.

Every student is a Setting-1 config of :mod:`.medical_plans` (same protocol, architecture
settings and data) taught by a ResNet-18 teacher (:func:`teacher_config`) that trained on a clean
10% or 1% of the training split held out before contamination. The paper's random baseline
changes with τ: its masks cover what the teachers' masks cover at that τ
(:func:`teacher_coverage`, read from the trained teachers), so random students are planned
after the teachers have trained. Ground-truth and No-XS references are Setting 1's runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd
import torch
from torch import Tensor

from .. import teachers
from ..baselines import pair_by_resolution
from ..config import TrainConfig
from ..data import Split
from ..fit import experiment_data, training_split
from ..models import build_model, capture, target_layers
from .cells import Annotation, Cell
from .medical_plans import paper_lambdas, paper_table, searched_lambdas
from .setting1 import case_config, why_not_run
from .plans import annotator
from .protocols import MedicalTeachersProtocol, Protocol
from .store import teacher_saliency

XS_METHODS = ("tap", "rrr", "rbr")


def _student(experiment: str, model: str, method: str, annotation: Annotation,
             tau: float | None, seed: int, lam: float, cfg: TrainConfig) -> Cell:
    """A Setting-2 or distillation student as a :class:`.cells.Cell` (its table named later)."""
    return Cell(cfg, "", experiment, model, method, annotation, tau, seed, lam)


def teacher_config(p: Protocol, t: MedicalTeachersProtocol, experiment: str,
                   fraction: float, seed: int) -> TrainConfig:
    """The teacher of ``seed``: ``t.teacher_model`` with its Setting-1 settings, no XS, on the
    clean ``fraction`` of the training split (``data="holdout"``), for ``t.teacher_epochs``."""
    base = case_config(p, experiment, t.teacher_model, "none", 0.0, seed)
    cfg = teachers.teacher_config(base, fraction)
    return cfg if t.teacher_epochs is None else cfg.replace(epochs=t.teacher_epochs)


def holdout(teacher: TrainConfig) -> Split:
    """The clean images a teacher config trains on."""
    return training_split(teacher, experiment_data(teacher)[1])


def teacher_configs(p: Protocol, t: MedicalTeachersProtocol,
                    experiment: str) -> list[tuple[str, int, TrainConfig]]:
    """``(teacher name, seed, config)`` of every teacher of ``experiment``."""
    return [(annotator(f), seed, teacher_config(p, t, experiment, f, seed))
            for f in t.fractions for seed in p.seeds]


def student_lambdas(t: MedicalTeachersProtocol, root: str | Path, experiment: str, model: str,
                    lambdas: Mapping[str, Any] | None = None) -> dict[str, float]:
    """λ per method of ``model``'s students. ``"paper"``: the paper's teacher-annotation and
    distillation tables. ``"setting1"``: the Setting-1 λ this profile trains with (its search's
    choice where it searched, else the paper's ground-truth table) and ``t.kd_lambda`` for
    KD/AT/JT. Then ``lambdas`` (per method, or per model and method)."""
    if t.lambda_source == "paper":
        lams = {**paper_table("teacher", experiment, model), **paper_table("kd", experiment, model)}
    else:
        lams = {**setting1_lambdas(root, experiment, model),
                **dict.fromkeys(t.kd_methods, t.kd_lambda)}
    lams.update({k: float(v) for k, v in (lambdas or {}).items() if not isinstance(v, Mapping)})
    lams.update((lambdas or {}).get(model, {}))
    return lams


def setting1_lambdas(root: str | Path, experiment: str, model: str) -> dict[str, float]:
    """The λ Setting 1 trains ``model`` with (tags): the paper's ground-truth table, replaced by
    this profile's search choice where it searched (as :func:`.medical_plans.medical_runs`)."""
    return {**paper_lambdas(experiment, model), **searched_lambdas(root, experiment).get(model, {})}


def mask_coverage(saliencies: Iterable[Tensor], taus: Iterable[float],
                  threshold: str = "absolute") -> dict[float, float]:
    """Per τ, the share of pixels the masks ``threshold(E, τ)`` annotate, the mean over the
    teachers' saliency maps ``saliencies``: the coverage of that τ's random masks."""
    maps, taus = list(saliencies), list(taus)
    return {tau: sum(teachers.threshold(e, tau, threshold).mean().item()  # type: ignore[arg-type]
                     for e in maps) / len(maps) for tau in taus}


def teacher_coverage(p: Protocol, t: MedicalTeachersProtocol, experiment: str,
                     runs_root: str | Path, device: str = "cpu",
                     threshold: str = "absolute") -> dict[float, float]:
    """:func:`mask_coverage` at ``t.train_taus`` of the teachers of ``experiment`` in the store
    (trained first if it does not hold them)."""
    return mask_coverage((teacher_saliency(cfg, runs_root, device)[0]
                          for *_, cfg in teacher_configs(p, t, experiment)), t.train_taus, threshold)


def xs_students(p: Protocol, t: MedicalTeachersProtocol, experiment: str, model: str,
                lams: Mapping[str, float], coverage: Mapping[float, float] | None,
                threshold: str = "absolute") -> list[Cell]:
    """TAP/RRR/RBR (``t.xs_methods`` but the protocol's ``not_run`` cells) of ``model`` with each
    teacher's masks and (unless ``coverage`` is None) with random masks of ``coverage[tau]``, at
    every τ of ``t.train_taus``."""
    out = []
    for method in [m for m in t.xs_methods if not why_not_run(p, experiment, model, m)]:
        for tau in t.train_taus:
            for seed in p.seeds:
                cfg = case_config(p, experiment, model, method, lams[method], seed)
                for fraction in t.fractions:
                    taught = teachers.with_teacher(
                        cfg, teacher_config(p, t, experiment, fraction, seed),
                        annotation="teacher", tau=tau, threshold=threshold)
                    out.append(_student(experiment, model, method, annotator(fraction), tau,
                                        seed, lams[method], taught))
                if coverage is None:
                    continue
                rnd = cfg.replace(annotation="random", random_coverage=round(coverage[tau], 6))
                out.append(_student(experiment, model, method, Annotation.RANDOM, tau, seed,
                                    lams[method], rnd))
    return out


def reference_students(p: Protocol, t: MedicalTeachersProtocol, experiment: str,
                       model: str, gt_lams: Mapping[str, float]) -> list[Cell]:
    """Setting 1's runs beside them: No XS and each XS method with ground-truth masks (at
    Setting 1's λ ``gt_lams``), read from the cache when the Setting-1 chapter ran."""
    out = []
    for seed in p.seeds:
        out.append(_student(experiment, model, "none", Annotation.NONE, None, seed, 0.0,
                            case_config(p, experiment, model, "none", 0.0, seed)))
        for method in [m for m in t.xs_methods if not why_not_run(p, experiment, model, m)]:
            out.append(_student(experiment, model, method, Annotation.GROUND_TRUTH, None, seed,
                                gt_lams[method],
                                case_config(p, experiment, model, method, gt_lams[method], seed)))
    return out


def kd_students(p: Protocol, t: MedicalTeachersProtocol, experiment: str, model: str,
                lams: Mapping[str, float]) -> list[Cell]:
    """KD/AT/JT students of ``model`` with each ``t.kd_fractions`` teacher, each method's options
    from ``p.options`` (e.g. KD's temperature). AT pairs the student's and the teacher's target
    layers by resolution (:func:`tapkit.baselines.pair_by_resolution`)."""
    out = []
    for fraction in t.kd_fractions:
        for method in t.kd_methods:
            for seed in p.seeds:
                cfg = teachers.with_teacher(case_config(p, experiment, model, "none", 0.0, seed),
                                            teacher_config(p, t, experiment, fraction, seed),
                                            method=method, lam=lams[method],
                                            options=p.options_for(method))
                out.append(_student(experiment, model, method, annotator(fraction), None, seed,
                                    lams[method], cfg))
    return out


def setting2_students(p: Protocol, t: MedicalTeachersProtocol, experiment: str,
                      root: str | Path, coverage: Mapping[float, float],
                      threshold: str = "absolute",
                      lambdas: Mapping[str, Any] | None = None) -> list[Cell]:
    """The Setting-2 chapter's students of ``experiment``: for every architecture of
    ``t.models``, :func:`xs_students` and Setting 1's :func:`reference_students`."""
    out = []
    for model in t.models:
        out += xs_students(p, t, experiment, model,
                           student_lambdas(t, root, experiment, model, lambdas), coverage, threshold)
        out += reference_students(p, t, experiment, model, setting1_lambdas(root, experiment, model))
    return out


def distillation_students(p: Protocol, t: MedicalTeachersProtocol, experiment: str,
                          root: str | Path,
                          lambdas: Mapping[str, Any] | None = None) -> list[Cell]:
    """The distillation chapter's students of ``experiment``, for every ``t.kd_models``
    architecture: TAP with the ``t.kd_fractions`` teachers' masks at τ = 0.01 (Setting 2's
    runs), their KD/AT/JT students (:func:`kd_students`) and No XS (Setting 1's run)."""
    tap_t = t.with_overrides(train_taus=(0.01,), xs_methods=("tap",))
    kd_cases = {annotator(f) for f in t.kd_fractions}
    out = []
    for model in t.kd_models:
        lams = student_lambdas(t, root, experiment, model, lambdas)
        out += [st for st in xs_students(p, tap_t, experiment, model, lams, None)
                if st.annotation in kd_cases]
        out += kd_students(p, t, experiment, model, lams)
        out += reference_students(p, t.with_overrides(xs_methods=()), experiment, model, {})
    return out


def at_pairs(p: Protocol, t: MedicalTeachersProtocol, experiment: str,
             model: str) -> pd.DataFrame:
    """AT's layer pairs of a ``model`` student and its ``t.teacher_model`` teacher at the
    protocol's image size (:func:`tapkit.baselines.pair_by_resolution`): one row per student
    target layer with its size and its teacher partner. The networks run on the meta device (no
    weights, no memory)."""
    student = case_config(p, experiment, model, "none", 0.0, p.seeds[0])
    teacher = teacher_config(p, t, experiment, t.fractions[0], p.seeds[0])
    size = student.image_size or 224
    heights = {}
    for role, cfg in (("student", student), ("teacher", teacher)):
        with torch.device("meta"):
            net = build_model(cfg.model, 2, 3, False, size).model.eval()
            with capture(net, target_layers(cfg.model)) as acts, torch.no_grad():
                net(torch.empty(1, 3, size, size))
        heights[role] = {name: a.shape[-2] for name, a in acts.items()}
    s_names, t_names = list(heights["student"]), list(heights["teacher"])
    partner = dict(pair_by_resolution(list(heights["student"].values()),
                                      list(heights["teacher"].values())))
    return pd.DataFrame([{"student": model, "student layer": name,
                          "size": f"{heights['student'][name]} px",
                          "teacher layer": t_names[partner[i]] if i in partner else "–",
                          "teacher size": (f"{heights['teacher'][t_names[partner[i]]]} px"
                                           if i in partner else "–")}
                         for i, name in enumerate(s_names)])

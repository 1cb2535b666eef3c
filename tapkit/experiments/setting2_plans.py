"""Setting 2 and the distillation comparison, written once for every dataset (Decoy-MNIST, PNEU,
KNEE or their digits stand-in): the teachers, the students with teacher and random masks, Setting
1's references, and the KD/AT/JT students, as :class:`.cells.Cell` objects.

Every student is a Setting-1 config (:func:`.setting1.case_config`: same protocol, architecture
settings and data) taught by a teacher (:func:`teacher_config`) that trained on a clean 10% or 1%
of the training split held out before contamination. What differs between the datasets is data
of the :class:`~.setting2_protocols.TeachersProtocol`: the paper's random baseline on PNEU/KNEE
changes with τ (its masks cover what the teachers' masks cover at that τ, :func:`teacher_coverage`,
read from the trained teachers, so those students are planned after the teachers have trained),
while Decoy-MNIST's random masks have the patch's coverage, one run per seed; RRR/RBR learn from
every teacher or from the first; the λ come from the paper's tables or from Setting 1.
The chapters' entry points (:func:`teacher_cells`, :func:`student_lambdas`,
:func:`setting2_students`, :func:`distillation_students`) take ``experiment`` and ``model`` None
for the protocol's only ones (Decoy-MNIST's two-layer CNN) and resolve them once; the functions
they call take both by name.
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
from ..methods import no_xs, proposed_method
from ..models import build_model, capture, target_layers
from .cells import Annotation, Cell
from .medical_plans import DATASETS, paper_lambdas, paper_table, searched_lambdas
from .plans import mnist_lambdas
from .protocols import MNIST_KD_LAMBDAS, MNIST_TEACHER_LAMBDAS, Protocol
from .setting1 import case_config, why_not_run
from .setting2_protocols import LambdaSource, RandomMasks, TeachersProtocol, Threshold
from .store import teacher_saliency

def annotator(fraction: float) -> Annotation:
    """The annotation of the teacher that learnt from the clean ``fraction`` (the paper's
    ``teacher_10``, ``teacher_1``)."""
    return Annotation.of_teacher(fraction)


def teacher_cases(t: TeachersProtocol) -> list[Annotation]:
    """The annotations of a Setting-2 table, in its order: each teacher, random masks, the ground
    truth and none (No XS)."""
    return [annotator(f) for f in t.fractions] + [Annotation.RANDOM, Annotation.GROUND_TRUTH,
                                                  Annotation.NONE]


def teacher_config(p: Protocol, t: TeachersProtocol, experiment: str | None,
                   fraction: float, seed: int) -> TrainConfig:
    """The teacher of ``seed``: ``t``'s teacher architecture with its Setting-1 settings, no XS,
    on the clean ``fraction`` of the training split (``data="holdout"``), for
    ``t.teacher_epochs`` (None: the students' epochs)."""
    base = case_config(p, experiment, t.teacher(p), no_xs(), 0.0, seed)
    cfg = teachers.teacher_config(base, fraction)
    return cfg if t.teacher_epochs is None else cfg.replace(epochs=t.teacher_epochs)


def teacher_cells(p: Protocol, t: TeachersProtocol, experiment: str | None = None) -> list[Cell]:
    """Every teacher of ``experiment``, fraction-major then seed; method none, annotation the
    teacher's own (its table is named by the chapter)."""
    e = p.settings(experiment, t.teacher(p)).experiment
    return [Cell(cfg, "", e, cfg.model, no_xs(), annotator(f), None, seed)
            for f in t.fractions for seed in p.seeds
            for cfg in [teacher_config(p, t, e, f, seed)]]


def holdout(teacher: TrainConfig) -> Split:
    """The clean images a teacher config trains on."""
    return training_split(teacher, experiment_data(teacher)[1])


def paper_student_lambdas(experiment: str, model: str) -> dict[str, float]:
    """λ per method of the paper's teacher-annotation and distillation tables: the appendix's
    MNIST values, or the PNEU/KNEE tables of ``model``."""
    if experiment not in DATASETS:
        return {**MNIST_TEACHER_LAMBDAS, **MNIST_KD_LAMBDAS}
    return {**paper_table("teacher", experiment, model), **paper_table("kd", experiment, model)}


def setting1_lambdas(root: str | Path, experiment: str, model: str) -> dict[str, float]:
    """The λ Setting 1 trains ``model`` with (tags): the paper's ground-truth table, replaced by
    this profile's search choice where it searched (:func:`.plans.mnist_lambdas`,
    :func:`.medical_plans.medical_runs`)."""
    if experiment not in DATASETS:
        return mnist_lambdas(root)
    return {**paper_lambdas(experiment, model), **searched_lambdas(root, experiment).get(model, {})}


def student_lambdas(p: Protocol, t: TeachersProtocol, root: str | Path, experiment: str | None,
                    model: str | None, lambdas: Mapping[str, Any] | None = None) -> dict[str, float]:
    """λ per method of ``model``'s students (``t.lambda_source``): the paper's teacher-annotation
    and distillation tables; those with the λ of the methods ``p`` searched in Setting 1 in their
    place (``SEARCHED``); or the Setting-1 λ this profile trains with and ``t.kd_lambda`` for
    KD/AT/JT. Then ``lambdas`` (per method, or per model and method)."""
    run = p.settings(experiment, model)
    e, model = run.experiment, run.model
    if t.lambda_source is LambdaSource.PAPER:
        lams = paper_student_lambdas(e, model)
    elif t.lambda_source is LambdaSource.SEARCHED:
        own = setting1_lambdas(root, e, model)
        lams = {**paper_student_lambdas(e, model),
                **{m: lam for m, lam in own.items() if p.grid(m, model, e)}}
    else:
        lams = {**setting1_lambdas(root, e, model), **dict.fromkeys(t.kd_methods, t.kd_lambda)}
    lams.update({k: float(v) for k, v in (lambdas or {}).items() if not isinstance(v, Mapping)})
    lams.update((lambdas or {}).get(model, {}))
    return lams


def threshold_rule(t: TeachersProtocol, threshold: str | None = None) -> str:
    """The students' mask rule: ``threshold`` where a notebook gives one, else the protocol's
    (:attr:`TeachersProtocol.threshold`: the paper profile's released quantile rule), as the
    string a config records."""
    return Threshold(t.threshold if threshold is None else threshold).value


def mask_coverage(saliencies: Iterable[Tensor], taus: Iterable[float],
                  threshold: str = "absolute") -> dict[float, float]:
    """Per τ, the share of pixels the masks ``threshold(E, τ)`` annotate, the mean over the
    teachers' saliency maps ``saliencies``: the coverage of that τ's random masks."""
    maps, taus = list(saliencies), list(taus)
    return {tau: sum(teachers.threshold(e, tau, threshold).mean().item()  # type: ignore[arg-type]
                     for e in maps) / len(maps) for tau in taus}


def teacher_coverage(p: Protocol, t: TeachersProtocol, experiment: str | None,
                     runs_root: str | Path, device: str = "cpu",
                     threshold: str | None = None) -> dict[float, float]:
    """:func:`mask_coverage` at ``t.train_taus`` of the teachers of ``experiment`` in the store
    (trained first if it does not hold them), by the rule :func:`threshold_rule` (None: the
    protocol's)."""
    return mask_coverage((teacher_saliency(c.cfg, runs_root, device)[0]
                          for c in teacher_cells(p, t, experiment)), t.train_taus,
                         threshold_rule(t, threshold))


def taught_students(p: Protocol, t: TeachersProtocol, experiment: str, model: str,
                    lams: Mapping[str, float], threshold: str | None = None) -> list[Cell]:
    """TAP/RRR/RBR (``t.xs_methods`` but the protocol's ``not_run`` cells) of ``model`` with each
    teacher's masks (RRR/RBR: the ``t.xs_fractions`` teachers') at every τ of ``t.train_taus``,
    thresholded by :func:`threshold_rule` (None: the protocol's rule); method, τ, seed, then
    teacher."""
    threshold = threshold_rule(t, threshold)
    out = []
    for method in [m for m in t.xs_methods if not why_not_run(p, experiment, model, m)]:
        fractions = (t.fractions if method == proposed_method() or t.xs_fractions is None
                     else t.xs_fractions)
        for tau in t.train_taus:
            for seed in p.seeds:
                cfg = case_config(p, experiment, model, method, lams[method], seed)
                out += [Cell(teachers.with_teacher(cfg, teacher_config(p, t, experiment, f, seed),
                                                   annotation="teacher", tau=tau,
                                                   threshold=threshold),
                             "", experiment, model, method, annotator(f), tau, seed, lams[method])
                        for f in fractions]
    return out


def random_students(p: Protocol, t: TeachersProtocol, experiment: str, model: str,
                    lams: Mapping[str, float],
                    coverage: Mapping[float, float] | None = None) -> list[Cell]:
    """The XS methods of ``model`` with random masks (``t.random_masks``): of ``coverage[tau]``
    at every τ (:attr:`RandomMasks.TEACHERS`; the teachers' coverage, :func:`teacher_coverage`),
    or of the ground truth's coverage once per seed, τ None (:attr:`RandomMasks.GROUND_TRUTH`)."""
    methods = [m for m in t.xs_methods if not why_not_run(p, experiment, model, m)]
    if t.random_masks is RandomMasks.GROUND_TRUTH:
        return [Cell(case_config(p, experiment, model, m, lams[m], seed).replace(
                         annotation="random"), "", experiment, model, m, Annotation.RANDOM, None,
                     seed, lams[m])
                for m in methods for seed in p.seeds]
    if coverage is None:
        raise ValueError("random masks of the teachers' coverage need that coverage per τ "
                         "(teacher_coverage, once the teachers have trained)")
    return [Cell(case_config(p, experiment, model, m, lams[m], seed).replace(
                     annotation="random", random_coverage=round(coverage[tau], 6)), "",
                 experiment, model, m, Annotation.RANDOM, tau, seed, lams[m])
            for m in methods for tau in t.train_taus for seed in p.seeds]


def xs_students(p: Protocol, t: TeachersProtocol, experiment: str, model: str,
                lams: Mapping[str, float], coverage: Mapping[float, float] | None = None,
                threshold: str | None = None) -> list[Cell]:
    """:func:`taught_students` and :func:`random_students`, by method, τ (random masks of the
    ground truth's coverage after every τ) and seed, the teachers before the random masks."""
    taught = taught_students(p, t, experiment, model, lams, threshold)
    rnd = random_students(p, t, experiment, model, lams, coverage)
    taus, seeds = list(t.train_taus), list(p.seeds)
    return sorted(taught + rnd, key=lambda c: (
        t.xs_methods.index(c.method), len(taus) if c.tau is None else taus.index(c.tau),
        seeds.index(c.seed)))


def reference_students(p: Protocol, t: TeachersProtocol, experiment: str,
                       model: str, gt_lams: Mapping[str, float]) -> list[Cell]:
    """Setting 1's runs beside them: No XS and each XS method with ground-truth masks (at
    Setting 1's λ ``gt_lams``), read from the cache when the Setting-1 chapter ran."""
    out = []
    for seed in p.seeds:
        out.append(Cell(case_config(p, experiment, model, no_xs(), 0.0, seed), "", experiment,
                        model, no_xs(), Annotation.NONE, None, seed, 0.0))
        for method in [m for m in t.xs_methods if not why_not_run(p, experiment, model, m)]:
            out.append(Cell(case_config(p, experiment, model, method, gt_lams[method], seed), "",
                            experiment, model, method, Annotation.GROUND_TRUTH, None, seed,
                            gt_lams[method]))
    return out


def kd_students(p: Protocol, t: TeachersProtocol, experiment: str, model: str,
                lams: Mapping[str, float]) -> list[Cell]:
    """KD/AT/JT students of ``model`` with each ``t.kd_fractions`` teacher, each method's options
    from ``p.options`` (e.g. KD's temperature). AT pairs the student's and the teacher's target
    layers by resolution (:func:`tapkit.baselines.pair_by_resolution`)."""
    out = []
    for fraction in t.kd_fractions:
        for method in t.kd_methods:
            for seed in p.seeds:
                cfg = teachers.with_teacher(case_config(p, experiment, model, no_xs(), 0.0, seed),
                                            teacher_config(p, t, experiment, fraction, seed),
                                            method=method, lam=lams[method],
                                            options=p.options_for(method))
                out.append(Cell(cfg, "", experiment, model, method, annotator(fraction), None, seed,
                                lams[method]))
    return out


def setting2_students(p: Protocol, t: TeachersProtocol, experiment: str | None,
                      root: str | Path, coverage: Mapping[float, float] | None,
                      threshold: str | None = None,
                      lambdas: Mapping[str, Any] | None = None) -> list[Cell]:
    """The Setting-2 chapter's students of ``experiment``: for every student architecture,
    :func:`xs_students` (random masks of ``coverage``, see there) and Setting 1's
    :func:`reference_students`."""
    out = []
    for model in t.students(p):
        e = p.settings(experiment, model).experiment
        out += xs_students(p, t, e, model, student_lambdas(p, t, root, e, model, lambdas),
                           coverage, threshold)
        out += reference_students(p, t, e, model, setting1_lambdas(root, e, model))
    return out


def distillation_students(p: Protocol, t: TeachersProtocol, experiment: str | None,
                          root: str | Path,
                          lambdas: Mapping[str, Any] | None = None) -> list[Cell]:
    """The distillation chapter's students of ``experiment``, for every KD student architecture:
    TAP with the ``t.kd_tap_fractions`` teachers' masks at τ = 0.01 (Setting 2's runs), their
    KD/AT/JT students (:func:`kd_students`) and No XS (Setting 1's run)."""
    tap_t = t.with_overrides(train_taus=(0.01,), xs_methods=(proposed_method(),))
    tap_cases = {annotator(f) for f in (t.kd_tap_fractions or t.kd_fractions)}
    out = []
    for model in t.kd_students(p):
        e = p.settings(experiment, model).experiment
        lams = student_lambdas(p, t, root, e, model, lambdas)
        out += [st for st in taught_students(p, tap_t, e, model, lams)
                if st.annotation in tap_cases]
        out += kd_students(p, t, e, model, lams)
        out += reference_students(p, t.with_overrides(xs_methods=()), e, model, {})
    return out


def at_pairs(p: Protocol, t: TeachersProtocol, experiment: str,
             model: str) -> pd.DataFrame:
    """AT's layer pairs of a ``model`` student and its ``t.teacher_model`` teacher at the
    protocol's image size (:func:`tapkit.baselines.pair_by_resolution`): one row per student
    target layer with its size and its teacher partner. The networks run on the meta device (no
    weights, no memory)."""
    student = case_config(p, experiment, model, no_xs(), 0.0, p.seeds[0])
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

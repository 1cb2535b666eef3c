"""What the medical chapters found, for their openings (:mod:`.openings`): PNEU and KNEE (or
their digits stand-in) in Setting 1, the overlap and Figure-1 maps, the extra architectures, and
Setting 2's teachers and distillation. Each function is pure (tables or maps in, one or two
sentences out); "loss" is a model's reliance on the tag (:func:`tapkit.metrics.tag_reliance`):
what its metric worsens by when the tags are permuted, more meaning more use of the tag whatever
the metric's direction (KNEE's MAE: lower is better), as the chapters' own findings
(:mod:`.medical`, :mod:`.medical_setting2`) and the report's claims (:mod:`.medical_claims`) read
it."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pandas as pd

from ..experiments.cells import Annotation
from ..experiments.setting1 import xs_cases
from ..methods import no_xs, proposed_method
from ..metrics import tag_reliance, task_metric
from . import report
from .claim_judges import EXTRA_RUNS, OVERLAP_TABLES, SETTING1_RUNS, STRIPE_RUNS
from .claim_specs import page_claims
from .evidence import Evidence
from .claims import verdicts
from .labels import in_prose, label
from .overlap_tables import against_none_text
from .preconditions import none_learned, not_learned_text, over_learned, unlearned


def _named(key: str) -> str:
    """A method or an annotation as a sentence of these openings names it (:func:`.labels.in_prose`
    without its article): ``"No XS"``, ``"10% teacher"``, ``"random masks"``."""
    return in_prose(key).removeprefix("the ")


def worse(experiment: str) -> str:
    """The metric's loss in words: ``F-score lost``, ``MAE added``."""
    metric = task_metric(experiment)
    return f"{metric.label} {'lost' if metric.higher_is_better else 'added'}"


def losses(summary: pd.DataFrame, experiment: str, keys: Sequence[str]) -> pd.Series:
    """Per ``keys`` of a summary table (split, mean): the reliance on the tag
    (:func:`tapkit.metrics.tag_reliance`), contaminated − permuted for a score, permuted −
    contaminated for KNEE's MAE."""
    wide = summary.pivot_table(index=list(keys), columns="split", values="mean", sort=False)
    return tag_reliance(wide["contaminated"], wide["permuted"], task_metric(experiment))


def learned_losses(summary: pd.DataFrame, runs: pd.DataFrame | None, experiment: str,
                   keys: Sequence[str]) -> pd.Series:
    """:func:`losses` of ``summary``, each cell's mean taken over its runs that learned the task
    (:func:`.preconditions.learned_task`) where the per-run table ``runs`` has them: NaN for a
    cell none of whose runs learned it. Why: a run that predicts about a constant loses nothing
    when the tags are permuted, so averaged in it passes for one that kept off the tag (KNEE
    DenseNet-121 TAP in a quick build: +0.210 over three seeds, +0.343 over the two that
    learned). A Setting-2 student table's ``method`` is its ``case``, as in :func:`unlearned`."""
    return over_learned(losses(summary, experiment, keys), runs, task_metric(experiment), keys)


def _value(d: float) -> str:
    """A cell's loss in an opening; nothing where no run of it learned the task (its flag says
    so)."""
    return "" if pd.isna(d) else " " + signed(d)


def signed(d: float) -> str:
    """``+0.178``, ``-0.100``, and ``0.000`` for what rounds to zero (never ``-0.000``)."""
    return "0.000" if abs(d) < 0.0005 else f"{d:+.3f}"


def _span(values: Sequence[float]) -> str:
    lo, hi = min(values), max(values)
    return signed(lo) if signed(lo) == signed(hi) else f"{signed(lo)} to {signed(hi)}"


def _by_case(loss: pd.Series, cases: Iterable[str], skip: Sequence[str],
             flagged: Mapping[tuple[str, str], tuple[tuple[int, ...], int]] | None = None
             ) -> list[str]:
    """``No XS: ResNet-18 0.400, DenseNet-121 0.000`` per case of a (model, case) loss; a cell
    in ``flagged`` names its seeds that did not learn the task (:func:`unlearned`)."""
    out = []
    for case in cases:
        cells = [f"{label(m)}{_value(d)}" + not_learned_text((flagged or {}).get((m, c)))
                 for (m, c), d in loss.items() if c == case and m not in skip]
        if cells:
            out.append(f"{_named(case)} — {', '.join(cells)}")
    return out


# what the flags of :func:`.preconditions.not_learned_text` mean, said once after the numbers
_FLAGGED = (" Runs marked so are left out of these means and of every verdict on the tag: a run "
            "that learned little of the task has little to lose when the tags are permuted, so "
            "its number says little about its use of the tag.")


def flagged_note() -> str:
    """:data:`_FLAGGED` on a Setting-1 page, whose "matches the Base model" reads the paper's
    method's unlearned runs too (:func:`.medical_claims.base_gap`)."""
    own = label(proposed_method())
    return (_FLAGGED + f" A {own} run marked so still counts against \"{own} matches the Base "
            "model\".")


def medical_found(summary: pd.DataFrame, experiment: str, root: str | Path,
                  skip: Sequence[str] = ()) -> str:
    """Setting 1 on PNEU or KNEE: each method's loss per architecture (``summary``) and the
    report's verdicts on the claims this page shows, judged by the claim registry from the
    chapter's per-run table under ``root`` (:func:`.claim_specs.page_claims`: the report's
    cells, seeds and reasons). Architectures in ``skip`` (untrained) are named, and so are the
    seeds behind a mean that did not learn the task (:func:`unlearned`)."""
    ev, table = Evidence(Path(root)), SETTING1_RUNS.format(experiment)  # the page's, read once
    runs = ev.table(table)[0]
    loss = learned_losses(summary, runs, experiment, ["model", "case"])
    flagged = unlearned(runs, experiment)
    parts = _by_case(loss, (no_xs(), *xs_cases()), skip, flagged)
    text = (f"{worse(experiment)} when the tags are permuted (more means more use of the tag): "
            + "; ".join(parts) + "."
            + (flagged_note() if flagged else "")
            if parts else "no architecture trained here has a No XS or XS run.")
    if skip:
        text += (" Not trained in this profile: "
                 + ", ".join(label(m) for m in skip) + ".")
    judged = page_claims(ev, experiment, [table, STRIPE_RUNS.format(experiment)])
    return text + (" " + verdicts(judged) if judged else "")


def extra_found(summaries: Mapping[str, pd.DataFrame],
                runs: Mapping[str, pd.DataFrame] | None = None,
                root: str | Path | None = None) -> str:
    """The extra architectures: No XS's and TAP's loss per data set and architecture; with
    ``runs`` (the per-run frames, ``val_constant`` among their columns) each cell whose runs did
    not learn the task says so (:func:`unlearned`): a model that predicts a constant loses
    nothing when the tags are permuted, and has not thereby kept off them. With ``root``, the
    report's verdicts on the page's claims, judged from the per-run tables it wrote there
    (:func:`.claim_specs.page_claims`)."""
    parts, any_flagged = [], False
    cases = (no_xs(), proposed_method())
    for experiment, summary in summaries.items():
        own = (runs or {}).get(experiment)
        loss = learned_losses(summary, own, experiment, ["model", "case"])
        flagged = unlearned(own, experiment)
        name = f"{experiment.upper()} {task_metric(experiment).label}"
        shown = [(m, c) for m, c in loss.index if c in cases]
        if shown and all(none_learned(flagged.get(k)) for k in shown):
            models = list(dict.fromkeys(label(m) for m, _ in shown))
            every = losses(summary, experiment, ["model", "case"])[shown]
            parts.append(f"{name}: no run of {' or '.join(models)} learned the task, so their "
                         f"{_span(every.tolist())} says nothing about the tag")
            continue
        any_flagged |= bool(flagged)
        parts.append(f"{name}: " + ", ".join(_by_case(loss, cases, (), flagged)))
    judged = [] if root is None else page_claims(
        Evidence(Path(root)), "extra_architectures",
        [EXTRA_RUNS.format(e) for e in summaries])
    return ("metric lost when the tags are permuted (more means more use of the tag): "
            + "; ".join(parts) + "."
            + (flagged_note() if any_flagged else "")
            + (" " + verdicts(judged) if judged else ""))


def overlap_found(compare: pd.DataFrame, root: str | Path) -> str:
    """The overlap page's finding: TAP against No XS in the overlap of their top-quartile
    activations with the tags (:func:`.overlap_tables.against_none_text`), and the report's
    verdicts on the overlap claims, judged from the chapter's per-run table under ``root``
    (:func:`.claim_specs.page_claims`: the report's cells, seeds and reasons)."""
    judged = page_claims(Evidence(Path(root)), "overlap", OVERLAP_TABLES)
    return (against_none_text(compare, proposed_method())
            + (" " + verdicts(judged) if judged else ""))


def mask_share(maps, mask) -> dict[str, float]:
    """The share of each map's absolute mass on the masked pixels: ``input gradient`` and
    ``activations`` (each layer's map brought to the image's size by nearest-neighbour
    upsampling, the share averaged over layers); ``maps`` is a :class:`tapkit.maps.Maps`."""
    import torch.nn.functional as F

    def share(a) -> float:
        a = F.interpolate(a.abs().float(), size=mask.shape[-2:], mode="nearest")
        return ((a * mask).sum() / a.sum().clamp_min(1e-12)).item()

    acts = [share(a) for a in maps.activations.values()]
    return {"input gradient": share(maps.input_grad), "activations": sum(acts) / len(acts)}


def visual_found(figure1, panels: Mapping[tuple[str, str], tuple], skip: Sequence[str] = ()) -> str:
    """What the drawn maps show: on the Figure-1 image, each method's share of input gradient and
    activations on the tag; over the appendix panels, how often TAP's activations sit on the tag
    less than No XS's. ``figure1`` and each panel are ``(mask, {method label: Maps})``."""
    parts = []
    if figure1 is not None:
        mask, found = figure1
        shares = {name: mask_share(m, mask) for name, m in found.items()}
        parts.append(
            f"on the Figure-1 image the tag covers {mask.float().mean().item():.1%} of the "
            "pixels and holds " + ", ".join(
                f"{v['input gradient']:.0%} of {name}'s input gradient and "
                f"{v['activations']:.0%} of its activations" for name, v in shares.items()) + ".")
    pairs, own, none = [], label(proposed_method()), label(no_xs())
    for (_, model), (mask, found) in panels.items():
        if model not in skip and {none, own} <= set(found):
            pairs.append(mask_share(found[own], mask)["activations"]
                         < mask_share(found[none], mask)["activations"])
    if pairs:
        parts.append(f"In {sum(pairs)} of the {len(pairs)} appendix panels with both, {own}'s "
                     f"activations put less of their mass on the tags than {none}'s.")
    text = " ".join(parts) or "no trained model could be drawn here."
    return text[0].lower() + text[1:]


def _student(method: str, annotation: str) -> str:
    """A Setting-2 student as an opening names it: ``"No XS"``, ``"TAP (10% teacher)"``,
    ``"KD (1% teacher)"``, ``"TAP (random masks)"``."""
    plain = annotation in (Annotation.NONE.value, report.NO_TEACHER) or method == no_xs()
    return _named(method) + ("" if plain else f" ({_named(annotation)})")


# the tables the medical teachers page writes before its opening, which its claims' judges read,
# and the Setting-1 runs (written before it), whose Base and ground-truth TAP its students are
# compared with
MEDICAL_TEACHER_TABLES = ("medical_teacher", "medical_annotation_quality",
                          "medical_teacher_performance", "pneu_gt_runs", "knee_gt_runs")
# the distillation page's: its summary, the mask quality TAP's students are gated on, and
# KNEE's Setting-1 Base its students are compared with
MEDICAL_KD_TABLES = ("medical_kd", "medical_annotation_quality", "knee_gt_runs")


def medical_teachers_found(quality: pd.DataFrame, summary: pd.DataFrame, root: str | Path,
                           runs: pd.DataFrame | None = None) -> str:
    """Setting 2 on PNEU/KNEE: the teachers' annotation precision beside random's (``quality``
    with ``tag_coverage``), each student's loss when the tags are permuted (``summary``:
    experiment, model, method, annotation, tau, split, mean; each loss is of the means over
    architectures and τ), and the report's verdicts on the claims this page shows, judged by the
    claim registry from the page's tables under ``root`` (:func:`.claim_specs.page_claims`: the
    report's cells, gates and reasons). With ``runs`` (the students' per-run frame) a student
    whose runs did not learn the task says so (:func:`unlearned`): a collapsed student loses
    nothing when the tags are permuted, which is no sign of keeping off them."""
    parts, any_flag = [], False
    for e, q in quality.groupby("experiment", sort=False):
        own = None if runs is None else runs[runs["experiment"] == e]
        keys = ("method", "annotation")
        loss = learned_losses(report.printable(summary[summary["experiment"] == e]), own, e,
                              keys)
        flagged = unlearned(own, e, keys)
        any_flag = any_flag or bool(flagged)
        order = sorted(loss.items(), key=lambda kv: kv[0][0] != no_xs())  # No XS first
        cells = [f"{_student(m, c)}{_value(d)}" + not_learned_text(flagged.get((m, c)))
                 for (m, c), d in order]
        students = (f"; {worse(e)} when the tags are permuted: " + ", ".join(cells)
                    if any(m == proposed_method() for m, _ in loss.index) else "")
        parts.append(f"{e.upper()}: teacher masks' precision {q.precision.min():.1%}–"
                     f"{q.precision.max():.1%} against random's {q.tag_coverage.iloc[0]:.1%}"
                     + students)
    judged = page_claims(Evidence(Path(root)), "medical_teachers", MEDICAL_TEACHER_TABLES)
    return ("; ".join(parts) + "." + (_FLAGGED if any_flag else "")
            + (" " + verdicts(judged) if judged else ""))


def medical_kd_found(summary: pd.DataFrame, runs: pd.DataFrame | None = None,
                     root: str | Path | None = None) -> str:
    """TAP against KD/AT/JT on PNEU/KNEE: per data set and student architecture, each student's
    loss when the tags are permuted (``summary``: experiment, model, teacher, method, split,
    mean); with ``runs`` (the per-run frame) a student whose runs did not learn the task says
    so (:func:`unlearned`); with ``root``, the report's verdicts on the claims this page shows
    (:func:`.claim_specs.page_claims` on its table and the teachers page's mask quality, which
    TAP's students are gated on)."""
    parts, any_flag = [], False
    for e, part in summary.groupby("experiment", sort=False):
        own = None if runs is None else runs[runs["experiment"] == e]
        keys = ("model", "teacher", "method")
        loss = learned_losses(part, own, e, keys)
        flagged = unlearned(own, e, keys)
        any_flag = any_flag or bool(flagged)
        for model in dict.fromkeys(part["model"]):
            cells = [f"{_student(c, t)}{_value(d)}" + not_learned_text(flagged.get((m, t, c)))
                     for (m, t, c), d in loss.items() if m == model]
            parts.append(f"{e.upper()} {label(model)} "
                         f"({task_metric(e).label}): " + ", ".join(cells))
    judged = [] if root is None else page_claims(Evidence(Path(root)), "medical_distillation",
                                                 MEDICAL_KD_TABLES)
    return ("what each student's metric loses when the tags are permuted (more means more use "
            "of the tag): " + "; ".join(parts) + "." + (_FLAGGED if any_flag else "")
            + (" " + verdicts(judged) if judged else ""))

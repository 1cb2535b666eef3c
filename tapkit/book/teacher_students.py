"""The paper's claims on how TAP's Setting-2 students fare by architecture and τ on PNEU and KNEE
(l.410: "For DenseNet-121 and VGG-16, an increase in τ surprisingly results in an increase in
contamination sensitivity ... only DenseNet-121 is successful in maintaining good performance
which still suffers from some contamination sensitivity. VGG-16 achieves a seemingly low MAE
which exploits spurious correlations. ResNet-18 did not train well with noisy annotations"),
judged on the medical Setting-2 summary (``medical_teacher``) as :mod:`.teacher_claims` judges
the others: per architecture and teacher (the 10% and the 1%), each part decided by its interval
(unpaired: a summary keeps no seeds), only where the teachers' masks mark the tags better than
random ones and No XS took the tag, with several seeds; on the digits stand-in labelled so.

Whether a student learned the task is a part of these claims, not a precondition: "only
DenseNet-121 maintains good performance" and "ResNet-18 did not train well" are about it. Where
it is not ("τ raises the sensitivity"), a student that did not learn the task is named and left
out, never averaged into a trend: a near-constant prediction loses nothing when the tags are
swapped."""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence

import pandas as pd

from ..experiments.cells import Annotation
from ..experiments.setting1 import BASE
from ..methods import proposed_method
from ..metrics import task_metric
from ..seedstats import Estimate, from_summary
from .claims import (INCONCLUSIVE, NOT_RUN, NOT_TESTABLE, REPRODUCED, Claim, combined,
                     keeps_verdict, needs_all)
from .labels import in_prose, label
from .medical_claims import RELIANCE, _grouped
from .medical_notes import constant_score
from .summary_reliance import reliance_parts, reliances
from .teacher_claims import (CLAIM_TAU, _at_tau, _medical_verdict, score_difference,
                             setting1_reference, setting_gates, unlearned_students)
from .thresholds import LEARNED, LEARNED_SHARE, MARGIN, MATCHES_BASE

TEACHERS = (Annotation.TEACHER_10.value, Annotation.TEACHER_1.value)  # "teacher annotations"
WHERE = "Setting 2, l.410"


def _students(summary: pd.DataFrame, experiment: str, method: str) -> pd.Series:
    """The rows of ``method``'s students of either teacher on ``experiment``."""
    return ((summary["experiment"] == experiment) & (summary["method"] == method)
            & summary["annotation"].astype(str).isin(TEACHERS))


def _row(summary: pd.DataFrame, read: pd.Series, model: str, teacher: str,
         split: str) -> pd.Series | None:
    """One cell's row of ``split`` among the ``read`` rows; None where it is missing or did not
    converge (NaN)."""
    rows = summary[read & (summary["model"] == model)
                   & (summary["annotation"].astype(str) == teacher) & (summary["split"] == split)]
    return None if rows.empty or pd.isna(rows["mean"].iloc[0]) else rows.iloc[0]


def _reliance(summary: pd.DataFrame, read: pd.Series, experiment: str, model: str,
              teacher: str) -> Estimate | None:
    """The student's reliance on the tag (:func:`.summary_reliance.reliances`); None without."""
    rows = summary[read & (summary["model"] == model)
                   & (summary["annotation"].astype(str) == teacher)]
    found = reliances(rows, experiment, "annotation")
    return found[0][2] if found else None


def _learned_score(experiment: str) -> float:
    """The score a quarter of the way (:data:`.thresholds.LEARNED_SHARE`) from a constant
    prediction's to perfect: a student's permuted score must reach it to "keep good
    performance"."""
    metric, const = task_metric(experiment), constant_score(experiment)
    return const + LEARNED_SHARE * ((1.0 if metric.higher_is_better else 0.0) - const)


def tau_sensitivity_claim(summary: pd.DataFrame, meta: Mapping, experiment: str,
                          models: Sequence[str], *methods: str,
                          quality: pd.DataFrame | None = None) -> Claim:
    """Raising τ raises the contamination sensitivity of TAP's teacher students (``methods[0]``;
    none: the paper's own) on ``experiment``, for each of ``models`` (l.410: "for DenseNet-121
    and VGG-16"; on PNEU "a similar trend"; the paper's KNEE Δ-MAE 0.161 → 0.474 and 0.691 →
    1.048 over τ 0.01 → 0.1): per architecture and teacher, the reliance at the largest τ
    trained minus the one at the smallest (its std √(σ₁² + σ₂²), unpaired) wholly above 0
    holds, wholly below fails, else inconclusive; the cells combined. A student that did not
    learn the task at some τ is named and left out; an architecture of ``models`` with no
    student judged leaves the claim *not testable* (or *not run*, never trained at two τ)."""
    method = methods[0] if methods else proposed_method()
    names = " and ".join(label(m) for m in models)
    claim = (f"Raising τ raises the reliance on the tag of {label(method)}'s teacher students "
             f"({experiment.upper()}: {names})")
    read = _students(summary, experiment, method) & summary["model"].isin(models)
    rows = summary[read].assign(tau=pd.to_numeric(summary.loc[read, "tau"], errors="coerce"))
    bounds = task_metric(experiment).range(2)
    parts, verdicts, judged, dropped, kept = [], [], set(), [], []
    for (model, teacher), g in rows.groupby(["model", rows["annotation"].astype(str)],
                                            sort=False):
        by_tau = {t: reliance_parts(g[g["tau"] == t], experiment, "annotation")
                  for t in sorted(g["tau"].dropna().unique())}
        by_tau = {t: found[0][2:] for t, found in by_tau.items() if found}
        if len(by_tau) < 2:
            continue
        name = f"{label(model)} {in_prose(teacher).removeprefix('the ')}"
        unlearned = unlearned_students(g, experiment)
        if unlearned:
            dropped.append(f"{name}: left out ({'; '.join(unlearned)})")
            continue
        kept.append(g)
        (lo_tau, (r0, s0, n0)), (hi_tau, (r1, s1, n1)) = (min(by_tau.items()),
                                                          max(by_tau.items()))
        d = from_summary(r1 - r0, (s0 ** 2 + s1 ** 2) ** 0.5, min(n0, n1), bounds=bounds)
        verdict = keeps_verdict(d.lo, d.hi, 0.0)
        verdicts.append(verdict)
        judged.add(model)
        parts.append(f"{name}: " + " → ".join(f"{r:+.3f}" for r, _, _ in by_tau.values())
                     + f" over τ {', '.join(f'{t:g}' for t in by_tau)} (τ {hi_tau:g} − "
                     f"τ {lo_tau:g}: {d.text()}) — {verdict}")
    if not parts and not dropped:
        return Claim(claim, WHERE, f"no {names} student at two τ or more", "—",
                     experiment.upper(), NOT_RUN,
                     reason=f"this build trained no {names} teacher student at two τ or more")
    verdict = combined(verdicts) if verdicts else INCONCLUSIVE
    taus = sorted(rows["tau"].dropna().unique())
    evidence = f"{RELIANCE} — " + "; ".join(parts + dropped)
    why = setting_gates(summary, experiment, taus, quality)
    if not verdicts:
        why += dropped
    c = _medical_verdict(claim, WHERE, evidence, meta, lambda: verdict == REPRODUCED, why,
                         verdict, read=pd.concat(kept) if kept else rows)
    # trained at two τ or more; one τ is *not run* for the trend, as none is
    trained = {m for m, g in rows.groupby("model") if g["tau"].nunique() > 1}
    unjudged = [m for m in models if m not in judged]
    c = needs_all(c, [label(m) for m in unjudged if m not in trained])
    return _untested(c, [f"{label(m)}: no student that learned the task at every τ"
                         for m in unjudged if m in trained])


def _untested(c: Claim, left: Sequence[str]) -> Claim:
    """``c``, or *not testable here* where a part the claim needs (``left``: an architecture
    whose students all failed a precondition) leaves it open: a verdict on the rest can fail the
    claim, not reproduce it (as :func:`.claims.needs_all` for parts never run)."""
    if not left or c.verdict not in (REPRODUCED, INCONCLUSIVE):
        return c
    return replace(c, verdict=NOT_TESTABLE, reason="; ".join(left))


def only_model_keeps_claim(summary: pd.DataFrame, meta: Mapping, experiment: str, model: str,
                           *methods: str, quality: pd.DataFrame | None = None) -> Claim:
    """At τ = 0.01 only ``model`` (DenseNet-121) keeps good performance with teacher annotations,
    "though with some contamination sensitivity" (l.410; the paper's KNEE permuted MAE 0.758
    against ResNet-18's 1.009 and VGG-16's 0.889, Δ-MAE 0.16-0.20). Per teacher, every part
    decided by its interval: ``model``'s student scores better on the permuted split than each
    other architecture's (:func:`.teacher_claims.score_difference` above 0); its permuted score
    is a quarter of the way from a constant prediction's to perfect or more
    (:data:`.thresholds.LEARNED_SHARE`: "good performance"); its reliance on the tag lies above
    :data:`.thresholds.MARGIN` ("some"). The teachers combined."""
    method = methods[0] if methods else proposed_method()
    claim = (f"Only {label(model)}'s {label(method)} students keep good performance with teacher "
             f"masks at τ {CLAIM_TAU:g}, relying on the tag somewhat ({experiment.upper()})")
    read = _students(summary, experiment, method) & _at_tau(summary["tau"], CLAIM_TAU)
    metric, good = task_metric(experiment), _learned_score(experiment)
    others = [m for m in dict.fromkeys(summary.loc[read, "model"]) if m != model]
    parts, verdicts, open_parts = [], [], []
    for teacher in TEACHERS:
        mine = _row(summary, read, model, teacher, "permuted")
        if mine is None:
            continue
        name = f"{label(model)} {in_prose(teacher).removeprefix('the ')}"
        found = []
        for other in others:
            theirs = _row(summary, read, other, teacher, "permuted")
            if theirs is None:
                continue
            d = score_difference(mine, theirs, experiment)
            found.append((f"better than {label(other)}", keeps_verdict(d.lo, d.hi, 0.0),
                          f"better than {label(other)}'s by {d.text()}"))
        own = from_summary(mine["mean"], mine["std"], int(mine["count"]),
                           bounds=metric.range(1))
        found.append(("good performance", keeps_verdict(own.lo, own.hi, good,
                                                        metric.higher_is_better),
                      f"permuted {metric.label} {own.text()} (good: {good:.3f} or "
                      f"{'more' if metric.higher_is_better else 'less'})"))
        rel = _reliance(summary, read, experiment, model, teacher)
        some = INCONCLUSIVE if rel is None else keeps_verdict(rel.lo, rel.hi, MARGIN)
        found.append(("some reliance", some, f"reliance {rel.text() if rel else '(none)'}"))
        verdict = combined([v for _, v, _ in found])
        verdicts.append(verdict)
        open_parts += [(f"{p} {v}", name) for p, v, _ in found if v != REPRODUCED]
        parts.append(f"{name}: " + ", ".join(w for _, _, w in found) + f" — {verdict}")
    if not parts or not others:
        missing = f"{label(model)} student" if not parts else "other architecture's student"
        return Claim(claim, WHERE, f"no {missing} at τ {CLAIM_TAU:g}", "—", experiment.upper(),
                     NOT_RUN, reason=f"this build trained no {missing} with teacher masks on "
                     f"{experiment.upper()} to compare")
    verdict = combined(verdicts)
    c = _medical_verdict(claim, WHERE, "permuted score — " + "; ".join(parts), meta,
                         lambda: verdict == REPRODUCED,
                         setting_gates(summary, experiment, (CLAIM_TAU,), quality), verdict,
                         read=summary[read])
    return replace(c, reason=_grouped(open_parts)) if c.verdict == INCONCLUSIVE else c


def _against_base(summary: pd.DataFrame, read: pd.Series, setting1: pd.DataFrame | None,
                  experiment: str, model: str, teacher: str) -> Estimate | None:
    """How much better Setting 1's Base (its clean score,
    :func:`.teacher_claims.setting1_reference`) scores than the student on contaminated images
    (> 0: Base better); None without either."""
    ref = setting1_reference(setting1, model, BASE, "clean", experiment)
    mine = _row(summary, read, model, teacher, "contaminated")
    return None if ref is None or mine is None else score_difference(ref, mine, experiment)


def seemingly_good_claim(summary: pd.DataFrame, meta: Mapping, experiment: str, model: str,
                         *methods: str, quality: pd.DataFrame | None = None,
                         setting1: pd.DataFrame | None = None) -> Claim:
    """``model`` (VGG-16) "achieves a seemingly low MAE which exploits spurious correlations"
    with teacher annotations (l.410; the paper's contaminated MAE 0.198 against Base's 0.49,
    Δ-MAE 0.69): at τ = 0.01, per teacher, the student's contaminated score no worse than Base's
    clean one by more than :data:`.thresholds.MATCHES_BASE`, and its reliance on the tag above
    :data:`.thresholds.LEARNED` ("exploits", as No XS's is judged) (:func:`_against_base_claim`)."""
    method = methods[0] if methods else proposed_method()
    claim = (f"{label(model)}'s {label(method)} students with teacher masks look as good as Base "
             f"on contaminated images by relying on the tag ({experiment.upper()})")
    return _against_base_claim(claim, summary, meta, experiment, model, method, quality,
                               setting1, behind=False, on_tag=True, taus=(CLAIM_TAU,))


def fails_to_train_claim(summary: pd.DataFrame, meta: Mapping, experiment: str, model: str,
                         *methods: str, quality: pd.DataFrame | None = None,
                         setting1: pd.DataFrame | None = None) -> Claim:
    """``model`` (ResNet-18) "did not train well with noisy annotations: while contamination
    sensitivity is low, this may be specious given its high MAE" (l.410; the paper's MAE 1.00 at
    τ 0.01 and 1.245 above, against Base's 0.60): at every τ trained, per teacher, the student's
    contaminated score worse than Base's clean one by more than
    :data:`.thresholds.MATCHES_BASE`, and its reliance on the tag below
    :data:`.thresholds.LEARNED` (:func:`_against_base_claim`)."""
    method = methods[0] if methods else proposed_method()
    claim = (f"{label(model)}'s {label(method)} students with teacher masks train badly, so their "
             f"low reliance on the tag means little ({experiment.upper()})")
    return _against_base_claim(claim, summary, meta, experiment, model, method, quality,
                               setting1, behind=True, on_tag=False)


def _against_base_claim(claim: str, summary: pd.DataFrame, meta: Mapping, experiment: str,
                        model: str, method: str, quality: pd.DataFrame | None,
                        setting1: pd.DataFrame | None, behind: bool, on_tag: bool,
                        taus: Sequence[float] | None = None) -> Claim:
    """``model``'s ``method`` students with teacher masks, at ``taus`` (None: every τ trained)
    and per teacher, against Setting 1's Base of ``model`` (``setting1``: its clean score, as
    :func:`.teacher_claims.setting1_reference`) and the tag, two parts each decided by its
    interval: the contaminated score behind Base's by more than :data:`.thresholds.MATCHES_BASE`
    (``behind``) or by no more than it; the reliance on the tag above
    :data:`.thresholds.LEARNED` (``on_tag``) or below it. The cells combined; an inconclusive
    claim names the parts that held it back."""
    read = _students(summary, experiment, method)
    tol = MATCHES_BASE[experiment]
    if taus is None:
        taus = sorted(pd.to_numeric(summary.loc[read, "tau"], errors="coerce").dropna().unique())
    names = (("trains badly", "low reliance") if behind else
             ("looks as good as Base", "relies on the tag"))
    parts, verdicts, open_parts = [], [], []
    for tau in taus:
        at = read & _at_tau(summary["tau"], tau)
        for teacher in TEACHERS:
            rel = _reliance(summary, at, experiment, model, teacher)
            if rel is None:
                continue
            name = (f"{label(model)} {in_prose(teacher).removeprefix('the ')}"
                    + (f" τ {tau:g}" if len(taus) > 1 else ""))
            g = _against_base(summary, at, setting1, experiment, model, teacher)
            base = INCONCLUSIVE if g is None else keeps_verdict(g.lo, g.hi, tol, behind)
            tag = keeps_verdict(rel.lo, rel.hi, LEARNED, on_tag)
            verdict = combined([base, tag])
            verdicts.append(verdict)
            open_parts += [(f"{p} {v}", name) for p, v in zip(names, (base, tag))
                           if v != REPRODUCED]
            parts.append(f"{name}: Base's clean score ahead of the student's contaminated "
                         "one by " + (g.text() if g is not None else
                                      "(no Setting 1 Base run to compare)")
                         + f" ({'more than' if behind else 'no more than'} {tol:g}: {base}), "
                         f"reliance {rel.text()} ({'above' if on_tag else 'below'} {LEARNED:g}: "
                         f"{tag}) — {verdict}")
    if not parts:
        return Claim(claim, WHERE, f"no {label(model)} teacher student", "—", experiment.upper(),
                     NOT_RUN, reason=f"this build trained no {label(model)} student with "
                     f"teacher masks on {experiment.upper()}")
    verdict = combined(verdicts)
    judged = (read & (summary["model"] == model)
              & pd.to_numeric(summary["tau"], errors="coerce").isin(taus))
    c = _medical_verdict(claim, WHERE, "; ".join(parts), meta, lambda: verdict == REPRODUCED,
                         setting_gates(summary, experiment, taus, quality), verdict,
                         read=summary[judged])
    return replace(c, reason=_grouped(open_parts)) if c.verdict == INCONCLUSIVE else c

"""The paper's claims on RRR and RBR trained on teacher and random masks (App. "RRR/RBR with
teacher annotations", l.914-916: "RRR and RBR do not work as well with noisy teacher annotations
as TAP, either because they fail to protect the model or become numerically unstable"; "several
models trained with RRR and RBR and random annotations did not converge, especially at the
higher threshold"), judged on the medical Setting-2 summary (``medical_teacher``), whose cells
keep the count of runs that did not converge (``dnc_runs``: a NaN or infinite loss,
:mod:`tapkit.fit`) beside the mean and std of the others. As in :mod:`.teacher_claims`: with
several seeds, only where the teachers' masks mark the tags better than random ones and No XS
took the tag; on the digits stand-in labelled so. The students of the 10% teacher's masks at
τ = 0.01 (:func:`comparators_on_tag_claim`) and every block of τ and masks
(:func:`worse_than_tap_claim`, :func:`unstable_on_random_claim`) are judged here."""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

import pandas as pd

from ..experiments.cells import Annotation
from ..methods import comparators, proposed_method
from .claims import (INCONCLUSIVE, NOT_REPRODUCED, NOT_RUN, REPRODUCED, Claim, combined,
                     keeps_verdict, needs_all)
from .labels import label
from .medical_claims import RELIANCE
from .summary_reliance import above_other, reliance_gap, reliances
from .teacher_claims import (CLAIM_TAU, _at_tau, _medical_verdict, score_difference,
                             setting_gates, unlearned_students)
from .thresholds import MARGIN

WHERE = "App. RRR/RBR with teacher annotations"
MASKS = Annotation.TEACHER_10.value  # the appendix trains RRR/RBR on the 10% teacher's masks


def _cells(summary: pd.DataFrame, annotation: str):
    """``(experiment, model, τ, rows by method)`` of the students of ``annotation``'s masks, one
    per (data set, architecture, τ) block of the appendix's table."""
    rows = summary[summary["annotation"].astype(str) == annotation]
    rows = rows.assign(tau=pd.to_numeric(rows["tau"], errors="coerce"))
    for (exp, model, tau), g in rows.groupby(["experiment", "model", "tau"], sort=False):
        yield exp, model, float(tau), g


def _unstable(block: pd.DataFrame, method: str) -> int:
    """How many of ``method``'s runs in the block did not converge (0 without the column)."""
    rows = block[block["method"] == method]
    return int(rows["dnc_runs"].max()) if "dnc_runs" in rows and len(rows) else 0


def _pair_verdict(block: pd.DataFrame, exp: str, model: str, tap: str,
                  other: str) -> tuple[str, str]:
    """Whether ``other`` works less well than ``tap`` in one block: some of its runs did not
    converge ("numerically unstable"), or TAP's permuted score is better than its (the
    difference's interval above 0), or it relies on the tag more than TAP by more than
    :data:`.thresholds.MARGIN` ("fail to protect the model"): reproduced where one of these is
    decided; not reproduced where ``other``'s permuted score is decidedly better than TAP's;
    else inconclusive. The verdict and the evidence's words."""
    failed = _unstable(block, other)
    if failed:
        return REPRODUCED, (f"{label(other)}: {failed} run{'s' if failed > 1 else ''} did not "
                            "converge")
    perm = block[block["split"] == "permuted"].set_index("method")
    if ({other, tap} - set(perm.index)
            or pd.isna(perm.loc[other, "mean"]) or pd.isna(perm.loc[tap, "mean"])):
        return INCONCLUSIVE, f"{label(other)}: no permuted score"
    d = score_difference(perm.loc[tap], perm.loc[other], exp)
    g = reliance_gap(block, exp, "method", model, other, tap)
    better = keeps_verdict(d.lo, d.hi, 0.0)
    relies = INCONCLUSIVE if g is None else keeps_verdict(g.lo, g.hi, MARGIN)
    verdict = (REPRODUCED if REPRODUCED in (better, relies) else
               NOT_REPRODUCED if better == NOT_REPRODUCED else INCONCLUSIVE)
    return verdict, (f"{label(tap)} − {label(other)} permuted {d.text()}, {label(other)}'s "
                     f"reliance above {label(tap)}'s by {g.text() if g else '(none)'}")


def worse_than_tap_claim(summary: pd.DataFrame, meta: Mapping, *methods: str,
                         quality: pd.DataFrame | None = None) -> Claim:
    """RRR and RBR (``methods``; none: the comparators) "do not work as well with noisy teacher
    annotations as TAP" (l.914; the paper: TAP's 10%-teacher students best on the permuted split
    in 11 of 12 blocks). Per (data set, architecture, τ) block of students of the 10% teacher's
    masks and comparator (:func:`_pair_verdict`): the claim holds where more than half the pairs
    hold, fails where half or more fail, else inconclusive ("in general"). A block whose TAP
    student did not learn the task is named and left out."""
    methods = list(methods or comparators())
    tap, named = proposed_method(), " and ".join(label(m) for m in methods)
    claim = f"{named} work less well than {label(tap)} with the 10% teacher's masks"
    parts, verdicts, dropped, taus, seen, read = [], [], [], set(), set(), []
    for exp, model, tau, block in _cells(summary, MASKS):
        present = [m for m in methods if m in set(block["method"])]
        if tap not in set(block["method"]) or not present:
            continue
        seen.update(present)
        name = f"{exp.upper()} {label(model)} τ {tau:g}"
        unlearned = unlearned_students(block[block["method"] == tap], exp)
        if unlearned:
            dropped.append(f"{name}: left out ({'; '.join(unlearned)})")
            continue
        taus.add(tau)
        # the seeds of TAP's and of each converged comparator's cells: a cell that did not
        # converge is this claim's evidence, not a want of seeds
        calm = block["dnc_runs"] == 0 if "dnc_runs" in block else True
        read.append(block[(block["method"] == tap) | (block["method"].isin(present) & calm)])
        for other in present:
            verdict, words = _pair_verdict(block, exp, model, tap, other)
            verdicts.append(verdict)
            parts.append(f"{name}, {words} — {verdict}")
    if not parts and not dropped:
        return Claim(claim, WHERE, f"no {named} student with the 10% teacher's masks beside "
                     f"{label(tap)}'s", "—", "PNEU/KNEE", NOT_RUN,
                     reason=f"this build trained no {named} student with teacher masks")
    held, failed = verdicts.count(REPRODUCED), verdicts.count(NOT_REPRODUCED)
    verdict = (REPRODUCED if 2 * held > len(verdicts) else
               NOT_REPRODUCED if verdicts and 2 * failed >= len(verdicts) else INCONCLUSIVE)
    why = [w for e in dict.fromkeys(summary["experiment"])
           for w in setting_gates(summary, e, sorted(taus), quality, (MASKS,))]
    if not verdicts:
        why += dropped
    evidence = ("; ".join(parts + dropped)
                + f" (holds in {held} of {len(verdicts)} comparisons)")
    c = _medical_verdict(claim, WHERE, evidence, meta, lambda: verdict == REPRODUCED, why,
                         verdict, read=pd.concat(read) if read else None)
    return needs_all(c, [label(m) for m in methods if m not in seen])


def unstable_on_random_claim(summary: pd.DataFrame, meta: Mapping, *methods: str,
                             quality: pd.DataFrame | None = None) -> Claim:
    """RRR and RBR (``methods``; none: the comparators) with random masks fail to converge in
    several runs, "especially at the higher threshold" (l.916; the paper: 9 or more of their 60
    random-mask runs at τ 0.01, 14 or more at τ 0.1, TAP's none). Counted, not estimated: their
    runs that did not converge number two or more and more than TAP's with the same masks; and,
    where two τ or more were trained, more at the largest τ than at the smallest (one τ leaves
    that part *not run*). ``quality`` is unused: random masks need no teacher."""
    methods = list(methods or comparators())
    tap, named = proposed_method(), " and ".join(label(m) for m in methods)
    claim = (f"{named} with random masks fail to converge in several runs, more than "
             f"{label(tap)}, most at the larger τ")
    counts: dict[float, dict[str, list[int]]] = {}
    for _, _, tau, block in _cells(summary, Annotation.RANDOM.value):
        at = counts.setdefault(tau, {})
        for method in (*methods, tap):
            rows = block[(block["method"] == method) & (block["split"] == "contaminated")]
            if len(rows):
                failed, ran = _unstable(block, method), int(rows["count"].max())
                at.setdefault(method, [0, 0])
                at[method][0] += failed
                at[method][1] += failed + ran
    mine = {t: sum(c[m][0] for m in methods if m in c) for t, c in counts.items()}
    if not any(m in c for c in counts.values() for m in methods):
        return Claim(claim, WHERE, f"no {named} student with random masks", "—", "PNEU/KNEE",
                     NOT_RUN, reason=f"this build trained no {named} student with random masks")
    theirs = sum(c[tap][0] for c in counts.values() if tap in c)
    several = sum(mine.values()) >= 2 and sum(mine.values()) > theirs
    parts = [f"τ {t:g}: " + ", ".join(f"{label(m)} {f} of {n} runs" for m, (f, n) in c.items())
             for t, c in sorted(counts.items())]
    verdicts = [REPRODUCED if several else NOT_REPRODUCED]
    taus = sorted(counts)
    if len(taus) > 1:
        verdicts.append(REPRODUCED if mine[taus[-1]] > mine[taus[0]] else NOT_REPRODUCED)
    verdict = NOT_REPRODUCED if NOT_REPRODUCED in verdicts else REPRODUCED
    evidence = ("runs that did not converge, random masks — " + "; ".join(parts)
                + f" ({named}: {sum(mine.values())}, {label(tap)}: {theirs})")
    c = _medical_verdict(claim, WHERE, evidence, meta, lambda: verdict == REPRODUCED, (),
                         verdict)
    return needs_all(c, ["a second τ (\"especially at the higher threshold\")"]
                     if len(taus) < 2 else [])


def comparators_on_tag_claim(summary: pd.DataFrame, meta: Mapping, experiment: str,
                             *methods: str, quality: pd.DataFrame | None = None,
                             or_worse: bool = False) -> Claim:
    """RRR and RBR (``methods``; none given: the comparators) with the 10% teacher's masks do not
    keep the students off the tag on ``experiment`` (App. RRR/RBR with teacher annotations; the
    test: "contaminated − permuted F1 ≫ TAP's per arch"): per architecture and method at τ =
    0.01, the reliance interval wholly above :data:`.thresholds.MARGIN`, and above TAP's with
    the same masks by more than it (:func:`.summary_reliance.relies_more_verdict`), holds; either
    wholly below fails; else inconclusive; the cells combined. With ``or_worse`` (KNEE's test:
    "Δ-MAE and/or permuted MAE worse than TAP") a cell also holds where TAP's permuted score is
    better than the student's by its interval (the paper's KNEE VGG-16 RBR relies less than TAP,
    0.31 against 0.69, and scores 1.203 against TAP's 0.889). A cell whose student or TAP
    student did not learn the task is named and left out (the paper's PNEU VGG-16 RRR collapsed
    to F1 0.49). Judged with several seeds where the 10% teacher's masks beat random ones and No
    XS took the tag; *not run* where the profile trained no such student."""
    methods = list(methods or comparators())
    named = "/".join(label(m) for m in methods)
    tap = proposed_method()
    claim = (f"{named} with the 10% teacher's masks leave the students on the tag, more than "
             f"{label(tap)}'s ({experiment.upper()})")
    masks = ((summary["experiment"] == experiment) & _at_tau(summary["tau"], CLAIM_TAU)
             & (summary["annotation"] == MASKS))
    read = masks & summary["method"].isin(methods)
    found = [(m, c, d) for m, c, d in reliances(summary[read], experiment, "method")]
    if not found:
        return Claim(claim, WHERE, f"no {named} student with "
                     f"teacher masks on {experiment.upper()}", "—", experiment.upper(), NOT_RUN,
                     reason=f"this build trained no {named} student with teacher masks")
    both = summary[masks & summary["method"].isin([*methods, tap])]
    verdicts, parts, dropped, open_parts = [], [], [], []
    for model, method, d in found:
        # a student that did not learn the task (the paper's collapsed PNEU VGG-16 RRR, F1 0.49)
        # shows nothing about the tag, nor does a comparison with a TAP student that did not
        cell = both[both["model"] == model]
        unlearned = unlearned_students(cell[cell["method"].isin([method, tap])], experiment)
        if unlearned:
            dropped.append(f"{label(model)} {label(method)}: left out ({'; '.join(unlearned)})")
            continue
        (verdict, words), = above_other(cell, experiment, [(model, method, d)], tap)
        if or_worse and verdict != REPRODUCED:
            perm = cell[cell["split"] == "permuted"].set_index("method")
            if {method, tap} <= set(perm.index):
                g = score_difference(perm.loc[tap], perm.loc[method], experiment)
                worse = keeps_verdict(g.lo, g.hi, 0.0)
                verdict = REPRODUCED if worse == REPRODUCED else verdict
                words += f", or {label(tap)}'s permuted score better by {g.text()}"
        verdicts.append(verdict)
        parts.append(f"{words} — {verdict}")
        open_parts += [f"{label(model)} {label(method)} {verdict}"] if verdict != REPRODUCED else []
    why = setting_gates(summary, experiment, (CLAIM_TAU,), quality, (MASKS,))
    if not verdicts:
        why += dropped
    parts += dropped
    verdict = combined(verdicts) if verdicts else INCONCLUSIVE
    gone = [label(m) for m in methods if m not in {m for _, m, _ in found}]
    c = _medical_verdict(claim, WHERE,
                         f"{RELIANCE} — " + "; ".join(parts)
                         + (f" ({', '.join(gone)}: not run here)" if gone else ""), meta,
                         lambda: verdict == REPRODUCED, why, verdict, read=summary[read])
    if c.verdict == INCONCLUSIVE:
        c = replace(c, reason="; ".join(open_parts))
    return needs_all(c, gone)  # "RRR and RBR ... do not prevent": each needed

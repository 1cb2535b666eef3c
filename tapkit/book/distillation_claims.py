"""The paper's distillation claims on PNEU and KNEE (App. Tables kd_pneu and kd_knee: KD, AT and
JT students beside TAP with teacher masks), judged on the medical distillation chapter's summary
(``medical_kd``: per data set, architecture, teacher and method, each split's mean, std and
count over seeds) as :mod:`.teacher_claims` judges Setting 2's: only where every student it reads
learned the task and No XS took the tag, where TAP's teacher masks mark the tags better than
random ones (TAP is the one student trained on masks; KD, AT and JT learn from the teacher's
outputs and maps), and with several seeds; on the digits stand-in labelled so. Differences of
two students are unpaired (:func:`.teacher_claims.score_difference`): the summary keeps no
seeds. JT's cost is judged on the MNIST distillation chapter's timed steps (``mnist_kd_cost``: one
training step of each student in interleaved rounds, and its peak memory), the chapter where the
quick profile trains JT."""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from ..experiments.cells import Annotation
from ..methods import proposed_method
from ..paired import ratio_interval
from .claims import (INCONCLUSIVE, NOT_REPRODUCED, NOT_RUN, NOT_TESTABLE, REPRODUCED, Claim,
                     combined, keeps_verdict, needs_all, within_verdict)
from .labels import in_prose, label
from .medical_claims import RELIANCE, _in_some_cell
from .summary_reliance import above_other, reliances
from .teacher_claims import (CLAIM_TAU, _medical_verdict, score_difference, unlearned_students,
                             untaken_tag, weak_teachers)
from .thresholds import MARGIN

TEACHER = Annotation.TEACHER_10  # the teacher of the claims about the 10% teacher's students
# the teachers of the claims made of "both teachers" (AT against TAP; TAP best or tied)
TEACHERS = (Annotation.TEACHER_10, Annotation.TEACHER_1)
WHERE = "App. Tables kd_pneu/kd_knee"


def _students(summary: pd.DataFrame, experiment: str | None, methods: Sequence[str],
              teachers: Sequence[Annotation] = (TEACHER,)) -> pd.Series:
    """The rows of ``methods``' students of ``teachers`` (the 10% teacher by default; on
    ``experiment``; None: every data set)."""
    at = summary["experiment"] == experiment if experiment else summary["experiment"].notna()
    return (at & summary["method"].isin(methods)
            & summary["teacher"].astype(str).isin([t.value for t in teachers]))


def _gates(summary: pd.DataFrame, read: pd.Series, quality: pd.DataFrame | None,
           masked: bool) -> list[str]:
    """Why the students ``read`` cannot judge: one that did not learn the task, a No XS that did
    not take the tag, and, where TAP's students are among them (``masked``), a 10% teacher
    whose masks mark the tags no better than random ones."""
    experiments = list(dict.fromkeys(summary.loc[read, "experiment"]))
    if masked and quality is None:  # the medical teachers chapter did not run: not measured
        weak = ["the 10% teacher's masks were not measured against random ones (the medical "
                "teachers chapter writes medical_annotation_quality)"]
    else:  # the masks of every teacher whose students are read
        read_teachers = set(summary.loc[read, "teacher"].astype(str))
        teachers = quality[quality["annotator"].isin(read_teachers)] if masked else None
        weak = [w for w in weak_teachers(teachers, CLAIM_TAU)
                if any(w.startswith(e.upper()) for e in experiments)]
    return weak + [w for e in experiments for w in unlearned_students(summary[read], e)
                   + untaken_tag(summary, e)]


def _absent(methods: Sequence[str], found: set[str]) -> str:
    gone = [label(m) for m in methods if m not in found]
    return f" ({', '.join(gone)}: not run here)" if gone else ""


def distillation_on_tag_claim(summary: pd.DataFrame, meta: Mapping, experiment: str,
                              *methods: str, quality: pd.DataFrame | None = None,
                              somewhere: Sequence[str] = ()) -> Claim:
    """KD and JT (``methods``) "do not mitigate contamination sensitivity well" on
    ``experiment`` (the test: "contaminated − permuted F1 ≫ TAP's (JT all archs; KD clearly
    only ResNet-18)"): per architecture, each student of the 10% teacher whose reliance interval
    lies wholly above :data:`.thresholds.MARGIN`, and above the TAP student's with the 10%
    teacher's masks by more than it (:func:`.summary_reliance.relies_more_verdict`), holds; either
    wholly below fails; else inconclusive. A method's cells combined, on every architecture, or
    in some architecture for the methods ``somewhere`` (KD: "clearly only ResNet-18"); the
    methods combined. A method this build did not train is named; none trained: *not run*."""
    named = " and ".join(label(m) for m in methods)
    tap = proposed_method()
    claim = f"{named} leave the students on the tag, more than {label(tap)}'s ({experiment.upper()})"
    read = _students(summary, experiment, methods)
    found = reliances(summary[read], experiment, "method")
    if not found:
        return Claim(claim, WHERE, f"no {named} student on {experiment.upper()}", "—",
                     experiment.upper(), NOT_RUN, reason=f"this build trained no {named} student")
    compared = _students(summary, experiment, (*methods, tap))
    judged = above_other(summary[compared], experiment, found, tap)
    by_method: dict[str, list[str]] = {}
    for (_, method, _), (v, _) in zip(found, judged):
        by_method.setdefault(method, []).append(v)
    verdict = combined([(_in_some_cell(v) or [INCONCLUSIVE])[0] if m in somewhere
                        else combined(v) for m, v in by_method.items()])
    evidence = (f"{RELIANCE} — " + "; ".join(words for _, words in judged)
        + "".join(f"; {label(m)}: needed on some architecture, not on every one (the claim's "
                  "test)" for m in somewhere if m in by_method)
        + _absent(methods, {c for _, c, _ in found}))
    c = _medical_verdict(claim, WHERE, evidence, meta, lambda: verdict == REPRODUCED,
                         _gates(summary, compared, quality, masked=True), verdict,
                         read=summary[read])
    return needs_all(c, [label(m) for m in methods if m not in {m for _, m, _ in found}])


def behind_claim(summary: pd.DataFrame, meta: Mapping, experiment: str, behind: Sequence[str],
                 method: str, other: str, quality: pd.DataFrame | None = None) -> Claim:
    """AT (``method``) scores like TAP (``other``, with the same teacher's masks) on the permuted
    split of ``experiment``, except on the architectures ``behind``, where it falls behind: per
    teacher (the 10% and the 1%, each that taught both: the claims table's "both teachers") and
    architecture, the difference ``other − method`` (in the metric's good direction) within
    ±:data:`.thresholds.MARGIN` (:func:`.claims.within_verdict`), or, on ``behind``, above
    MARGIN (:func:`.claims.keeps_verdict`); the cells combined."""
    claim = (f"{label(method)} scores like {label(other)} on the permuted {experiment.upper()} "
             f"split, behind it on {', '.join(label(m) for m in behind)}")
    read = _students(summary, experiment, (method, other), TEACHERS)
    rows = summary[read & (summary["split"] == "permuted")].assign(
        teacher=lambda f: f["teacher"].astype(str)).set_index(["teacher", "model", "method"])
    parts, verdicts, judged = [], [], set()
    for teacher, model in dict.fromkeys(zip(rows.index.get_level_values("teacher"),
                                            rows.index.get_level_values("model"))):
        if (teacher, model, method) not in rows.index or (teacher, model, other) not in rows.index:
            continue
        judged.add(model)
        d = score_difference(rows.loc[(teacher, model, other)], rows.loc[(teacher, model, method)],
                             experiment)
        verdict = (keeps_verdict(d.lo, d.hi, MARGIN) if model in behind
                   else within_verdict(d.lo, d.hi, MARGIN))
        verdicts.append(verdict)
        parts.append(f"{label(model)}, {in_prose(teacher)}: {label(other)} − {label(method)} "
                     f"{d.text()}"
                     f"{' (expected above ' + format(MARGIN, 'g') + ')' if model in behind else ''}"
                     f" — {verdict}")
    if not parts:
        return Claim(claim, WHERE, f"no architecture with both {label(method)} and "
                     f"{label(other)} students", "—", experiment.upper(), NOT_RUN,
                     reason=f"this build trained no {label(method)} and {label(other)} students "
                     f"of one architecture on {experiment.upper()}")
    verdict = combined(verdicts)
    c = _medical_verdict(claim, WHERE, "permuted score — " + "; ".join(parts), meta,
                         lambda: verdict == REPRODUCED,
                         _gates(summary, read, quality, masked=True), verdict,
                         read=summary[read])
    return needs_all(c, [f"{label(m)} students" for m in behind if m not in judged])


def best_or_tied_claim(summary: pd.DataFrame, meta: Mapping, method: str, *others: str,
                       quality: pd.DataFrame | None = None) -> Claim:
    """TAP (``method``) transfers insensitivity best: in most (data set, architecture) cells its
    permuted score is the best of the students or tied with the best (within
    :data:`.thresholds.MARGIN`; the paper: TAP best in 8 of 12 medical cells). A cell holds where
    every difference ``method − other`` lies above −MARGIN, fails where one lies wholly below it;
    the claim holds in a majority of cells, fails in half or more."""
    claim = (f"{label(method)} scores best or tied among {', '.join(label(o) for o in others)} "
             "and itself on the permuted split in most cells")
    read = _students(summary, None, (method, *others), TEACHERS)
    rows = summary[read & (summary["split"] == "permuted")]
    parts, verdicts = [], []
    for (exp, model, teacher), g in rows.groupby(
            ["experiment", "model", rows["teacher"].astype(str)], sort=False):
        by = g.set_index("method")
        if method not in by.index or not set(others) & set(by.index):
            continue
        ds = {o: score_difference(by.loc[method], by.loc[o], exp) for o in others if o in by.index}
        cell = combined([keeps_verdict(d.lo, d.hi, -MARGIN) for d in ds.values()])
        verdicts.append(cell)
        parts.append(f"{exp.upper()} {label(model)}, {in_prose(teacher)}: " + ", ".join(
            f"{label(method)} − {label(o)} {d.text()}" for o, d in ds.items()) + f" — {cell}")
    if not parts:
        return Claim(claim, WHERE, f"no cell with {label(method)} and another student", "—",
                     "PNEU/KNEE", NOT_RUN, reason="this build trained no distillation student "
                     f"beside {label(method)}")
    held, failed = verdicts.count(REPRODUCED), verdicts.count(NOT_REPRODUCED)
    verdict = (REPRODUCED if 2 * held > len(verdicts) else
               NOT_REPRODUCED if 2 * failed >= len(verdicts) else INCONCLUSIVE)
    evidence = (f"permuted score, best or within {MARGIN:g} of the best — " + "; ".join(parts)
                + f" (holds in {held} of {len(verdicts)} cells)"
                + _absent(others, set(rows["method"])))
    return _medical_verdict(claim, WHERE, evidence, meta, lambda: verdict == REPRODUCED,
                            _gates(summary, read, quality, masked=True), verdict,
                            read=summary[read])


def second_order_cost_claim(cost: pd.DataFrame | None, meta: Mapping, method: str,
                            *others: str) -> Claim:
    """JT (``method``) needs second-order derivatives, so its "training times and memory usage
    suffer"; both halves are needed, against each of ``others`` (KD, AT). ``cost``: the
    distillation chapter's ``mnist_kd_cost`` (:func:`.mnist_setting2.kd_cost_table`: one
    training step of each student in interleaved rounds, and its peak memory). Time: the
    geometric mean of ``method``'s step over ``other``'s, paired by round, with its 95% interval
    over the rounds (:func:`tapkit.paired.ratio_interval`): wholly above 1 holds, wholly below
    fails, else inconclusive. Memory: the step's peak (exact on a CPU, the same each pass, so no
    interval) above ``other``'s. Every comparison combined."""
    claim = (f"{label(method)}'s runs train slower and use more memory than "
             f"{' and '.join(map(label, others))}'s")
    where, data = "App. distillation", str(meta.get("data", "MNIST"))
    timed = {} if cost is None else {m: g.sort_values("round")["seconds"].tolist()
                                     for m, g in cost.groupby("method")}
    missing = [m for m in (method, *others) if not timed.get(m)]
    if missing:
        return Claim(claim, where, "no training step of " + ", ".join(map(label, missing))
                     + " timed", "—", data, NOT_RUN,
                     reason="this build timed no step of " + ", ".join(map(label, missing)))
    peaks = cost.groupby("method")["peak_mem_mb"].first()
    parts, verdicts, n = [], [], []
    for other in others:
        r = ratio_interval(timed[method], timed[other])
        n.append(r.n)
        verdicts.append(keeps_verdict(r.lo, r.hi, 1.0))
        heavier = peaks[method] / peaks[other]
        verdicts.append(REPRODUCED if heavier > 1 else NOT_REPRODUCED)
        parts.append(f"{label(method)} ÷ {label(other)}: time ×{r.mean:.2f}"
                     + (f" [{r.lo:.2f}, {r.hi:.2f}]" if r.n >= 2 else " (one round)")
                     + f", memory ×{heavier:.2f}")
    evidence = ("one training step, paired by round (geometric mean), and its peak memory — "
                + "; ".join(parts) + f"; {meta.get('label', 'this build')}")
    rounds = f"{min(n)} interleaved round{'s' if min(n) != 1 else ''}"
    if min(n) < 2:
        return Claim(claim, where, evidence, rounds, data, NOT_TESTABLE,
                     reason="one round: no interval")
    return Claim(claim, where, evidence, rounds, data, combined(verdicts))

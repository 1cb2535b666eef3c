"""The MNIST claims of Setting 2 and of the distillation appendix (Tables kd_mnist and
ts_mnist), judged on the summary tables those chapters write (``mnist_teacher``, ``mnist_kd``:
one row per case and split, with the mean, std and count over seeds).

A comparison of two cases is their difference of means with a Welch-style 95% interval from the
two stds (:func:`.claims.summary_difference`, unpaired: the summaries keep no seeds), kept
inside [−1, 1]. A case trained on fewer than two seeds gives no interval, and the claim is *not
testable here (one seed)* with its numbers shown; a case this build never trained makes it *not
run*. Thresholds: :data:`.thresholds.MARGIN`, as the report's other MNIST claims. A part that
compares TAP trained on a teacher's masks is judged only where those masks mark the decoy better
than random ones (``weak``: the teachers whose masks do not, with the reason; issue 36's
precondition for Setting 2): else it is shown, not judged.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping

import pandas as pd

from ..experiments.cells import Annotation
from ..methods import is_xs, no_xs, proposed_method
from .claims import (INCONCLUSIVE, NOT_REPRODUCED, NOT_RUN, NOT_TESTABLE, Claim, combined,
                     keeps_verdict, summary_difference, within_verdict)
from .labels import label
from .thresholds import LEARNED, MARGIN

Case = tuple[str, str]  # (annotation or teacher, method)


def _row(summary: pd.DataFrame, case: Case, split: str = "permuted") -> pd.Series | None:
    """The summary row of ``case`` on ``split`` (None when this build has no such run)."""
    source, method = case
    column = "annotation" if "annotation" in summary else "teacher"
    rows = summary[(summary[column].astype(str) == str(source))
                   & (summary["method"] == method) & (summary["split"] == split)]
    return None if rows.empty else rows.iloc[0]


def _name(case: Case) -> str:
    source, method = case
    if method == no_xs():
        return label(no_xs())
    return f"{label(method)} ({label(source)})"


Rule = Callable[[float, float], str]  # an interval's verdict


def _unjudged(pair: tuple[Case, Case], weak: Mapping[str, str]) -> list[str]:
    """Why a pair is not judged: the reasons of its cases that are XS trained on masks of a
    teacher in ``weak`` (empty: it is judged)."""
    return [weak[str(source)] for source, method in pair if is_xs(method) and str(source) in weak]


def _judge(claim: str, where: str, data: str, summary: pd.DataFrame,
           pairs: list[tuple[Case, Case, Rule]], split: str | tuple[str, str] = "permuted",
           every: bool = False, weak: Mapping[str, str] | None = None) -> Claim:
    """Each pair ``(a, b, rule)``: ``split`` accuracy ``a − b`` judged by ``rule(lo, hi)`` (two
    splits: ``a`` on the first minus ``b`` on the second, e.g. one case's loss when the decoys
    are permuted); the
    verdicts joined by :func:`.claims.combined`. A missing case: *not run*, or, as the report's
    other claims, named beside a verdict on the pairs that ran; with ``every`` (a claim whose
    parts say different things, each needed) a missing part leaves it *not run* unless a part
    that ran already fails it. A pair without an interval (one seed): *not testable here*; so is
    one with a case trained on the masks of a teacher in ``weak`` (shown, with the reason), and
    a claim left without a judged pair, or, with ``every``, without one of its parts."""
    parts, verdicts, missing, counts, skipped = [], [], [], [], []
    split_a, split_b = (split, split) if isinstance(split, str) else split
    for a, b, verdict in pairs:
        ra, rb = _row(summary, a, split_a), _row(summary, b, split_b)
        gone = [_name(c) for c, r in ((a, ra), (b, rb)) if r is None]
        if gone:
            missing += gone
            continue
        d = summary_difference(ra, rb)
        counts.append(d.n)
        why = _unjudged((a, b), weak or {})
        what = (f"{split_a} accuracy, {_name(a)} − {_name(b)}" if split_a == split_b else
                f"{_name(a)}, {split_a} − {split_b} accuracy")
        parts.append(f"{what}: {d.text()}" + (" (not judged)" if why else ""))
        if why:
            skipped += why
        elif d.n >= 2:
            verdicts.append(verdict(d.lo, d.hi))
        elif every:  # a needed part on one seed: no interval, so it cannot be judged
            skipped.append(f"{_name(a)} − {_name(b)}: one seed, no interval")
    evidence = "; ".join(parts) + (" (unpaired)" if verdicts else "")
    skipped = list(dict.fromkeys(skipped))
    not_trained = "; ".join(f"no {n} run" for n in dict.fromkeys(missing))
    seeds = f"{min(counts)} seed{'s' if min(counts) != 1 else ''}" if counts else "—"
    if not parts:
        return Claim(claim, where, not_trained, "—", data, NOT_RUN,
                     reason=f"this build did not train it ({not_trained})")
    if not verdicts:
        why = skipped or ["one seed: no interval"]
        return Claim(claim, where, evidence, seeds, data, NOT_TESTABLE,
                     reason="; ".join(why + ([not_trained] if missing else [])))
    aside = f" (not judged: {not_trained})" if missing else ""
    aside += f" (not judged: {'; '.join(skipped)})" if skipped else ""
    verdict = combined(verdicts)
    if every and skipped and verdict != NOT_REPRODUCED:
        return Claim(claim, where, evidence + aside, seeds, data, NOT_TESTABLE,
                     reason="; ".join(skipped))
    if every and missing and verdict != NOT_REPRODUCED:
        return Claim(claim, where, evidence + aside, seeds, data, NOT_RUN,
                     reason=f"part of it did not run in this build ({not_trained})")
    return Claim(claim, where, evidence + aside, seeds, data, verdict)


def annotation_robust_claim(summary: pd.DataFrame, data: str, method: str | None = None,
                            weak: Mapping[str, str] | None = None) -> Claim:
    """TAP's permuted accuracy "does not appear to depend on the quality of annotations": with
    the 10% and the 1% teacher's masks and with random masks, ``method`` (None: the paper's own)
    scores within :data:`MARGIN` of itself with the ground truth (table ``mnist_teacher``).
    Every part is needed (``every``): where a teacher's masks are no better than random ones
    (``weak``), the random masks' part alone can fail the claim but not reproduce it, nor leave
    it *inconclusive*; the claim is then *not testable here*."""
    method = method or proposed_method()
    claim = (f"{label(method)}'s permuted accuracy is within {MARGIN:g} with teacher, random and "
             "ground-truth masks")
    truth = (Annotation.GROUND_TRUTH, method)
    pairs = [((a, method), truth, _within) for a in (Annotation.TEACHER_10, Annotation.TEACHER_1,
                                                     Annotation.RANDOM)]
    return _judge(claim, "Setting 2, Table ts_mnist", data, summary, pairs, every=True,
                  weak=weak)


def fail_to_protect_claim(summary: pd.DataFrame, data: str, *methods: str) -> Claim:
    """AT and JT (``methods``) "are not successful at protecting the model from learning
    spurious correlations" (l.972; the claims table's test: "Δ-accuracy strongly < 0, close to
    No XS (−0.176)"): every student, of each teacher that taught them (the 10% one at least),
    loses more than :data:`.thresholds.LEARNED` accuracy when the decoys are permuted
    (contaminated − permuted, unpaired; the paper's 0.144-0.176), decided by its interval; No
    XS's loss is shown beside them, and where its mean is not above LEARNED (a decoy too weak
    for any student to lose more) a verdict short of reproduced is *not testable here*. Every
    part is needed ("both AT and JT"): one not trained leaves the claim *not run* unless
    another fails it."""
    claim = (f"{' and '.join(map(label, methods))} do not protect the two-layer CNN from the decoy "
             f"(each loses more than {LEARNED:g} accuracy when it is permuted)")
    teachers = [t for t in (Annotation.TEACHER_10, Annotation.TEACHER_1)
                if t == Annotation.TEACHER_10
                or any(_row(summary, (t, m)) is not None for m in methods)]
    pairs = [((t, m), (t, m), _strongly) for t in teachers for m in methods]
    c = _judge(claim, "App. Table kd_mnist", data, summary, pairs, every=True,
               split=("contaminated", "permuted"))
    none = ("no teacher", no_xs())
    rc, rp = _row(summary, none, "contaminated"), _row(summary, none)
    if rc is None or rp is None:
        return c
    d = summary_difference(rc, rp)
    c = replace(c, evidence=c.evidence + f"; No XS, contaminated − permuted accuracy: {d.text()}")
    if d.mean > LEARNED or c.verdict not in (NOT_REPRODUCED, INCONCLUSIVE):
        return c
    # the students are held to a loss No XS itself does not reach: the decoy was too weak here
    return replace(c, verdict=NOT_TESTABLE, reason=f"No XS loses only {d.mean:.3f} accuracy when "
                   f"the decoys are permuted, not more than {LEARNED:g}: the decoy is too weak "
                   "for a student to lose more")


def kd_matches_claim(summary: pd.DataFrame, data: str, method: str,
                     other: str | None = None, weak: Mapping[str, str] | None = None) -> Claim:
    """KD (``method``) with the 10% teacher "closely matches" TAP (``other``; None: the paper's
    own) with the same teacher's masks: their permuted accuracies within :data:`MARGIN`."""
    other = other or proposed_method()
    claim = f"{label(method)} with the 10% teacher matches {label(other)} (within {MARGIN:g})"
    pairs = [((Annotation.TEACHER_10, method), (Annotation.TEACHER_10, other), _within)]
    return _judge(claim, "App. Table kd_mnist", data, summary, pairs, weak=weak)


def kd_drops_claim(summary: pd.DataFrame, data: str, method: str,
                   other: str | None = None, weak: Mapping[str, str] | None = None) -> Claim:
    """KD (``method``) "reduces slightly" from the 10% to the 1% teacher while TAP (``other``)
    "consistently performs well": KD's permuted accuracy falls (10% − 1% above 0), TAP's stays
    within :data:`MARGIN`, and with the 1% teacher TAP scores above KD (the test the claim's
    row names: "TAP(1%) > KD(1%)", the paper's 0.965 against 0.929)."""
    other = other or proposed_method()
    claim = (f"{label(method)} loses accuracy with the 1% teacher; {label(other)} stays within "
             f"{MARGIN:g} and beats it there")
    pairs = [((Annotation.TEACHER_10, method), (Annotation.TEACHER_1, method), _above),
             ((Annotation.TEACHER_10, other), (Annotation.TEACHER_1, other), _within),
             ((Annotation.TEACHER_1, other), (Annotation.TEACHER_1, method), _above)]
    return _judge(claim, "App. Table kd_mnist", data, summary, pairs, every=True, weak=weak)


def _within(lo: float, hi: float) -> str:
    """About zero: within ±:data:`MARGIN`."""
    return within_verdict(lo, hi, MARGIN)


def _strongly(lo: float, hi: float) -> str:
    """A large loss: above :data:`.thresholds.LEARNED`."""
    return keeps_verdict(lo, hi, LEARNED)


def _above(lo: float, hi: float) -> str:
    """A drop: above 0."""
    return keeps_verdict(lo, hi, 0.0)

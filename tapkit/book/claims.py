"""The reproduction report's claim table (ReScience C style): one row per claim of the paper, the
evidence this build measured for it, and a :class:`Verdict`.

A verdict rests on more than one seed: a mean over seeds carries its 95% Student-t interval kept
inside the metric's range, a comparison between two methods is a paired difference over the
seeds both trained (:mod:`tapkit.seedstats`), and only the seeds where the claim's preconditions
hold count (:mod:`.preconditions`: every run learned the task, and No XS took the shortcut).
The interval decides: wholly on the claim's side of its threshold, *reproduced*; wholly on the
other side, *not reproduced*; across it, *inconclusive*. Cells that ran but cannot decide (one
seed, every seed dropped, the stand-in for a claim about the real data) are *not testable here*
with the reason; *not run* is kept for claims no cell of the build measured. The deep-CNN
Setting-1 claims are judged on the stand-in's seeds and labelled as the stand-in's
(:mod:`.medical_claims`). Each ``*_claim`` function is pure (tables in, :class:`Claim` out);
their thresholds are :mod:`.thresholds`. This module holds the MNIST and Table-1 claims,
:mod:`.medical_claims` and :mod:`.teacher_claims` those on PNEU and KNEE, and :mod:`.claim_table` reads the tables a build
wrote into the report's table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Collection, Iterable, Mapping, Sequence

import pandas as pd

from ..experiments.cells import Annotation, tau_text
from ..experiments.table1 import architectures
from ..metrics import TASK_METRICS
from ..seedstats import Estimate, from_summary, mean_ci, paired_difference
from ..methods import comparators, no_xs, proposed_method
from .labels import interval_text, label
from .labels import label as _label  # where a judge's argument is called ``label``
from .preconditions import judged_seeds
# claims.KEEPS: the chapters read it here
from .thresholds import (ANNOTATION_LIFT, DECOY_TAKEN, KEEPS, MARGIN,  # noqa: F401
                         MEMORY_SHARE, TIME_SHARE)


class Verdict(str, Enum):
    """A claim's verdict (issue 36). *Reproduced* / *not reproduced* only when the evidence
    decides (an interval wholly on one side of the claim's threshold); *inconclusive* when the
    interval spans it; *not testable here* when the cells ran but a precondition failed (one
    seed, a collapsed model, a No XS that never took the shortcut, the stand-in for a claim about
    the real data), with the reason; *not run* only where no cell that measures it ran."""

    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not reproduced"
    INCONCLUSIVE = "inconclusive"
    NOT_TESTABLE = "not testable here"
    NOT_RUN = "not run"

    __str__ = str.__str__
    __format__ = str.__format__


REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_TESTABLE, NOT_RUN = Verdict
ACCURACY = TASK_METRICS["accuracy"]


@dataclass(frozen=True)
class Claim:
    """One row of the claim table (:data:`COLUMNS`): ``reason`` says why a claim is not
    testable or not run, and ``standin`` whether its evidence is on a stand-in for the paper's
    data (:class:`.origin.DataOrigin`): a verdict on it is the stand-in's, and says so
    (:mod:`.medical_claims`); ``brief`` is the reason as a page's opening gives it."""

    claim: str
    where: str        # the paper's section or table
    evidence: str
    seeds: str
    data: str
    verdict: Verdict
    standin: bool = False
    reason: str = ""
    brief: str = ""   # the reason as a page's opening gives it, where shorter (the report: whole)


COLUMNS = ("claim", "where", "evidence", "seeds", "data", "verdict", "reason")  # the table's

# every verdict a claim can get, in the order an opening names them
VERDICTS = tuple(Verdict)


def verdict_text(verdict: str, reason: str = "") -> str:
    """``"not testable here (one seed)"``: a verdict as the report's column shows it."""
    return f"{verdict} ({reason})" if reason else str(verdict)


def shorten(text: object, most: int) -> str:
    """``text`` cut at a word to at most ``most`` characters, with "…" where it was cut."""
    text = str(text)
    return text if len(text) <= most else text[:most].rsplit(" ", 1)[0].rstrip(";,:") + " …"


def verdicts(claims: Iterable[Claim], most: int = 240, reasons: int = 3) -> str:
    """One sentence: the reproduction report's verdicts on ``claims``, those not judged with why
    (one seed, the stand-in, a chapter that did not run): each reason once, though several
    claims fail on it, cut to ``most`` characters, and at most ``reasons`` of them per verdict,
    the rest counted (the report has them whole): an opening says what decided, not every
    cell's story."""
    claims = list(claims)
    by = {v: [c for c in claims if c.verdict == v] for v in VERDICTS}
    quiet = (NOT_TESTABLE, NOT_RUN)
    every = len({c.claim for c in claims})
    parts = [f"*{v}* for {_names(cs, every)}" for v, cs in by.items() if cs and v not in quiet]
    for v in quiet:
        if by[v]:
            found = list(dict.fromkeys(shorten(part, most) for c in by[v]
                                       for part in (c.brief or c.reason
                                                    or c.evidence).split("; ")))
            why = "; ".join(found[:reasons]) + (
                f"; {len(found) - reasons} more in the reproduction report"
                if len(found) > reasons else "")
            parts.append(f"*{v}* for {_names(by[v], every)} ({why})" if parts or v != quiet[0]
                         else f"not judged here ({why})")
    return "The reproduction report's verdict: " + "; ".join(parts) + "."


def _names(claims: list[Claim], every: int) -> str:
    """The claims' titles, each once (the paper makes some claims twice, e.g. in the results and
    in an appendix); for more than two, how many of the ``every`` claims the sentence covers
    ("all 3 claims", or "3 claims" when others carry another verdict)."""
    names = list(dict.fromkeys(
        f"“{c.claim}”" + (" (on the stand-in)" if c.standin and c.verdict not in
                          (NOT_TESTABLE, NOT_RUN) else "")
        for c in claims))
    if len(names) <= 2:
        return " and ".join(names)
    n = len({c.claim for c in claims})  # a title shown twice (stand-in or not) counts once
    return f"all {n} claims" if n == every else f"{n} claims"


def per_seed(runs: pd.DataFrame, case: str, value: pd.Series) -> dict[int, float]:
    """``{seed: value}`` of the converged runs of ``case`` (``value`` is indexed as ``runs``): the
    pairs a paired difference over seeds reads, for MNIST's claims and the medical ones."""
    ok = (runs["case"] == case) & (runs["status"] == "ok")
    return dict(zip(runs.loc[ok, "seed"].astype(int), value[ok].astype(float)))


def on_seeds(values: dict[int, float], seeds: Iterable[int]) -> dict[int, float]:
    """``values`` on ``seeds`` only: the seeds where a claim's preconditions hold."""
    keep = set(seeds)
    return {s: v for s, v in values.items() if s in keep}


def _delta(frame: pd.DataFrame) -> pd.Series:
    return frame["permuted"] - frame["contaminated"]


def _permuted(frame: pd.DataFrame) -> pd.Series:
    return frame["permuted"]


def _seeds(e: Estimate) -> str:
    return f"{e.n} seed{'s' if e.n != 1 else ''}"


def untestable(claim: str, where: str, evidence: str, seeds: str, data: str, reason: str,
               standin: bool = False) -> Claim:
    """A claim whose cells ran but cannot decide it, with ``reason``."""
    return Claim(claim, where, evidence, seeds, data, NOT_TESTABLE, standin, reason)


def decoy_claim(runs: pd.DataFrame, data: str) -> Claim:
    """No XS learns the decoy: its accuracy falls when the decoy is permuted (Δ < 0 over the
    seeds where No XS learned the task; inconclusive when the interval reaches 0)."""
    claim, where = "No XS learns the decoy on MNIST", "Results, Fig. MNIST; App. Table gt_mnist"
    seeds = judged_seeds(runs, -_delta(runs), [no_xs()], ACCURACY, shortcut=False)
    every = per_seed(runs, no_xs(), _delta(runs))
    if not every:  # none ran (not run), or every one that ran failed (not testable)
        gone = _absence(runs, [no_xs()])
        return Claim(claim, where, gone or "no converged No XS run", "0 seeds", data,
                     NOT_RUN if gone.endswith("not run") else NOT_TESTABLE,
                     reason=gone or "no No XS run converged")
    d = mean_ci((on_seeds(every, seeds.kept) or every).values(), bounds=ACCURACY.range(1))
    evidence = f"No XS Δ-accuracy (permuted − contaminated) {d.text()}" + seeds.note("No XS")
    if len(seeds.kept) < 2:
        return untestable(claim, where, evidence, _seeds(d), data, _few_reason(seeds))
    return Claim(claim, where, evidence, _seeds(d), data,
                 keeps_verdict(d.lo, d.hi, 0.0, higher_is_better=False))


def _mnist_comparison(runs: pd.DataFrame, methods: list[str]):
    """The seeds an MNIST comparison of ``methods`` with No XS is judged on: every run learned
    the task and No XS took the decoy (:data:`.thresholds.DECOY_TAKEN`)."""
    return judged_seeds(runs, -_delta(runs), methods, ACCURACY, shortcut=True, took=DECOY_TAKEN)


def removes_claim(runs: pd.DataFrame, data: str, method: str | None = None) -> Claim:
    """An XS method (None: the paper's own, :func:`tapkit.methods.proposed_method`) protects the
    model: its permuted-decoy accuracy beats No XS's (paired, on the seeds where both learned the
    task and No XS took the decoy)."""
    method = method or proposed_method()
    name = label(method)
    claim = f"{name} protects the two-layer CNN from the decoy (beats No XS on permuted digits)"
    if (gone := _absence(runs, [method, no_xs()])):
        kind = NOT_RUN if "not run" in gone else NOT_TESTABLE
        return Claim(claim, "Results, Fig. MNIST", gone, "0 seeds", data, kind, reason=gone)
    seeds = _mnist_comparison(runs, [method, no_xs()])
    permuted = _permuted(runs)
    a, b = per_seed(runs, method, permuted), per_seed(runs, no_xs(), permuted)
    kept = on_seeds(a, seeds.kept)
    diff = paired_difference(kept or a, b, bounds=ACCURACY.range(1))
    evidence = (f"permuted accuracy, {name} − No XS (paired): {diff.text()}"
                + seeds.note("MNIST"))
    if len(seeds.kept) < 2:
        return untestable(claim, "Results, Fig. MNIST", evidence, _seeds(diff), data,
                          _few_reason(seeds))
    return Claim(claim, "Results, Fig. MNIST", evidence, _seeds(diff), data,
                 keeps_verdict(diff.lo, diff.hi, 0.0))


def _absence(runs: pd.DataFrame, cases: list[str]) -> str:
    """Why ``cases`` cannot be compared, in words that keep apart a case that never ran ("RBR
    not run") and one whose runs all failed ("no converged RBR run"); "" when all converged."""
    ok, ran = set(runs.loc[runs["status"] == "ok", "case"]), set(runs["case"])
    return "; ".join(f"{label(c)} not run" if c not in ran else f"no converged {label(c)} run"
                     for c in cases if c not in ok)


def _few_reason(seeds) -> str:
    """Why fewer than two seeds could judge: one seed trained, or the preconditions dropped the
    others."""
    if not seeds.dropped:
        return "fewer than two seeds trained"
    return "fewer than two seeds where the preconditions hold: " + "; ".join(
        sorted(set(seeds.dropped.values())))


def matches_claim(runs: pd.DataFrame, data: str, other: str | None = None,
                  method: str | None = None) -> Claim:
    """TAP (``method``; None: the paper's own) matches RRR/RBR (``other``; None: the first
    comparator, :func:`tapkit.methods.comparators`) on MNIST: its permuted accuracy is not worse
    than ``other``'s by more than :data:`MARGIN` (the paired difference's interval lies above
    −MARGIN; wholly below it: not reproduced; across it: inconclusive), on the seeds where every
    run learned the task and No XS took the decoy."""
    method, other = method or proposed_method(), other or comparators()[0]
    claim = f"{label(method)} matches {label(other)} on MNIST (within {MARGIN:g} accuracy)"
    return _paired_claim(runs, data, claim, "App. gt_mnist: \"TAP ... still matches RRR and RBR "
                         "very closely\"", method, (other,), "permuted",
                         lambda lo, hi: keeps_verdict(lo, hi, -MARGIN))


def close_claim(runs: pd.DataFrame, data: str, method: str | None = None,
                *others: str) -> Claim:
    """On MNIST's contaminated digits the XS losses score alike (the paper: "at first glance,
    the different losses result in very similar performances", RRR 0.987, RBR 0.992, TAP
    0.983): ``method``'s contaminated accuracy (None: the paper's own) lies within
    :data:`MARGIN` of each of ``others`` (None: the comparators), as a paired difference over
    the seeds where every run learned the task and No XS took the decoy
    (:func:`within_verdict`). A comparator trained on fewer than two such seeds is shown and
    judges nothing."""
    method = method or proposed_method()
    others = others or tuple(comparators())
    claim = (f"{' and '.join(map(label, (method, *others)))} score alike on contaminated digits "
             f"(within {MARGIN:g} accuracy)")
    return _paired_claim(runs, data, claim, "Results, Fig. MNIST; App. gt_mnist", method, others,
                         "contaminated", lambda lo, hi: within_verdict(lo, hi, MARGIN), every=True)


def slightly_below_claim(runs: pd.DataFrame, data: str, method: str | None = None,
                         *others: str) -> Claim:
    """The paper's concession on MNIST: RRR and RBR (``others``) slightly outperform TAP
    (``method``) on permuted digits, yet match it very closely (permuted 0.987 and 0.982
    against 0.979). Reproduced when each paired difference ``other − method`` lies within
    [0, :data:`MARGIN`]; not reproduced when it lies wholly outside (TAP clearly better, or
    clearly worse than "very closely"); a comparator on fewer than two judged seeds is shown
    and judges nothing."""
    method = method or proposed_method()
    others = others or tuple(comparators())
    claim = (f"{' and '.join(map(label, others))} slightly outperform {label(method)} on "
             f"permuted digits (by 0 to {MARGIN:g} accuracy)")

    def verdict(lo: float, hi: float) -> str:  # other − method in [0, MARGIN]
        return within_verdict(lo - MARGIN / 2, hi - MARGIN / 2, MARGIN / 2)
    return _paired_claim(runs, data, claim, "App. gt_mnist: \"TAP is slightly outperformed by "
                         "RRR and RBR\"", method, others, "permuted", verdict, reverse=True,
                         every=True)


def _paired_claim(runs: pd.DataFrame, data: str, claim: str, where: str, method: str,
                  others: tuple[str, ...], split: str, verdict, reverse: bool = False,
                  every: bool = False) -> Claim:
    """One paired difference of ``split``'s accuracy per comparator in ``others`` (``method −
    other``; ``other − method`` with ``reverse``), each on the seeds where its runs learned the
    task and No XS took the decoy; ``verdict(lo, hi)`` judges each comparator with two or more
    such seeds, and :func:`_combined` joins them. ``every``: a claim about all of ``others``
    together ("RRR and RBR slightly outperform TAP"), whose comparators are each needed: one
    not judged leaves it *not run* (it never ran) or *not testable here* (it ran and could not
    be judged), unless a judged one already fails it."""
    parts, verdicts, notes, counts, shown = [], [], [], [], []
    for other in others:
        if (gone := _absence(runs, [method, other, no_xs()])):
            notes.append(gone)
            continue
        seeds = _mnist_comparison(runs, [method, other, no_xs()])
        a = per_seed(runs, method, runs[split])
        b = per_seed(runs, other, runs[split])
        trained = len(b)
        a = on_seeds(a, seeds.kept) or a
        first, second = (b, a) if reverse else (a, b)
        names = (other, method) if reverse else (method, other)
        diff = paired_difference(first, second, bounds=ACCURACY.range(1))
        parts.append(f"{split} accuracy, {label(names[0])} − {label(names[1])} (paired): "
                     f"{diff.text()}" + (seeds.note("MNIST") if trained > 1 else ""))
        shown.append(diff.n)
        if trained < 2:
            notes.append(f"{label(other)} trained {trained} seed")
        elif len(seeds.kept) < 2:
            notes.append(f"{label(other)}: {_few_reason(seeds)}")
        else:
            verdicts.append(verdict(diff.lo, diff.hi))
            counts.append(diff.n)
    evidence = "; ".join(parts) or "no comparator ran"
    counts = counts or shown  # the judged comparators' seeds; else those shown
    n = ("—" if not counts else f"{min(counts)} seed{'s' if min(counts) != 1 else ''}"
         if min(counts) == max(counts) else f"{min(counts)}–{max(counts)} seeds")
    if not verdicts:
        kind = NOT_RUN if not parts and all(note.endswith("not run") for note in notes) \
            else NOT_TESTABLE
        return Claim(claim, where, evidence, n, data, kind, reason="; ".join(notes))
    aside = f" (not judged: {'; '.join(notes)})" if notes else ""
    combined = _combined(verdicts)
    if every and notes and combined != NOT_REPRODUCED:
        kind = NOT_RUN if all(note.endswith("not run") for note in notes) else NOT_TESTABLE
        return Claim(claim, where, evidence + aside, n, data, kind, reason="; ".join(notes))
    return Claim(claim, where, evidence + aside, n, data, combined)


def within_verdict(lo: float, hi: float, margin: float) -> str:
    """The verdict of "the difference is about zero": reproduced when [lo, hi] lies within
    [−margin, margin], not reproduced when it lies wholly outside, inconclusive when it crosses
    an end (or is missing: one seed)."""
    if lo >= -margin and hi <= margin:
        return REPRODUCED
    if hi < -margin or lo > margin:
        return NOT_REPRODUCED
    return INCONCLUSIVE


def keeps_verdict(lo: float, hi: float, threshold: float, higher_is_better: bool = True) -> str:
    """The verdict of a ratio's interval [lo, hi] against ``threshold``: reproduced when the
    whole interval is on the good side (``lo >= threshold`` when higher is better), not
    reproduced when the whole interval is on the bad side (``hi < threshold``), and
    :data:`INCONCLUSIVE` when it straddles the threshold or is missing (NaN): the machine's noise
    is then larger than the distance to the threshold, and more rounds or a quieter machine
    decide."""
    if not higher_is_better:
        return keeps_verdict(-hi, -lo, -threshold)
    if lo >= threshold:
        return REPRODUCED
    if hi < threshold:
        return NOT_REPRODUCED
    return INCONCLUSIVE


def _combined(verdicts: list[str]) -> str:
    """All parts reproduced: reproduced; any part not reproduced: not reproduced; else
    inconclusive."""
    if NOT_REPRODUCED in verdicts:
        return NOT_REPRODUCED
    return REPRODUCED if all(v == REPRODUCED for v in verdicts) else INCONCLUSIVE


def every_part(claim: str, parts: Sequence[Claim]) -> Claim:
    """One claim that needs each of ``parts`` (one per comparator or method: "TAP matches RRR
    and RBR"): a part that fails fails it; else a part this build did not run leaves it *not
    run* and one it could not judge *not testable here* (every unjudged part *not run*: not run;
    else not testable), each reason kept; else the parts' verdicts combined
    (:func:`_combined`). The evidence is every part's; seeds and data are the first's."""
    head = parts[0]
    verdicts = [p.verdict for p in parts]
    open_ = [p for p in parts if p.verdict in (NOT_RUN, NOT_TESTABLE)]
    evidence = "; ".join(dict.fromkeys(p.evidence for p in parts))
    if NOT_REPRODUCED in verdicts or not open_:
        return replace(head, claim=claim, evidence=evidence, verdict=_combined(verdicts),
                       reason="", brief="")
    kind = NOT_RUN if all(p.verdict == NOT_RUN for p in open_) else NOT_TESTABLE
    return replace(head, claim=claim, evidence=evidence, verdict=kind,
                   reason="; ".join(dict.fromkeys(p.reason for p in open_ if p.reason)),
                   brief="")


def needs_all(c: Claim, missing: Sequence[str]) -> Claim:
    """``c``, or, where a part the claim needs (``missing``: a method, teacher or architecture
    this build did not train) leaves it open, *not run* with what is missing: a verdict on the
    parts that ran can fail the claim, not reproduce it nor leave it inconclusive."""
    if not missing or c.verdict not in (REPRODUCED, INCONCLUSIVE):
        return c
    return replace(c, verdict=NOT_RUN, reason=f"{', '.join(missing)}: not run here")


def _bounds(row, key: str) -> tuple[float, float]:
    """The interval's ends, NaN where the table has none (an older table, one round)."""
    ends = (getattr(row, f"{key}_{end}", None) for end in ("lo", "hi"))
    lo, hi = (float("nan") if v is None else float(v) for v in ends)
    return lo, hi


SPEED_CLAIM = f"TAP keeps at least {KEEPS:g} of No XS's speed and memory"


def speed_claim(ratios: pd.DataFrame, label: str,
                judged: Collection[str] | None = None) -> Claim:
    """TAP keeps at least :data:`KEEPS` of No XS's training speed and uses at most 1/KEEPS of its
    peak memory, on every deep CNN of the paper's Table 1 (VGG-16, ResNet-18, DenseNet-121).
    ``judged``: the architectures the verdict is about (default: every bench profile's Table-1
    models, :func:`tapkit.experiments.table1.architectures`); a row of another model (the
    two-layer CNN measured beside them) is shown in the evidence as context and decides
    nothing. Each ratio carries its 95% interval over paired rounds (speed) or passes (memory)
    (:mod:`tapkit.paired`), judged by :func:`keeps_verdict`: noise widens an interval into
    "inconclusive" instead of flipping the verdict. A table without intervals (one round) is
    inconclusive; one with TAP timed on context models only is not testable."""
    claim = SPEED_CLAIM
    judged = architectures() if judged is None else frozenset(judged)
    tap = ratios[(ratios["method"] == proposed_method()) & ratios["speed_ratio"].notna()]
    if tap.empty:
        return Claim(claim, "Table 1", "no TAP benchmark in this build", "—", label, NOT_RUN,
                     reason="the speed chapter timed no TAP step")
    deep, context = tap[tap["model"].isin(judged)], tap[~tap["model"].isin(judged)]
    verdicts, parts = [], []
    for r in deep.itertuples():
        speed, mem = _bounds(r, "speed_ratio"), _bounds(r, "mem_ratio")
        verdicts += [keeps_verdict(*speed, KEEPS),
                     keeps_verdict(*mem, 1 / KEEPS, higher_is_better=False)]
        parts.append(_speed_part(r))
    aside = ("; context, not judged (not in Table 1): "
             + "; ".join(map(_speed_part, context.itertuples())) if len(context) else "")
    evidence = "; ".join(parts) + (" (95% intervals)" if parts else "") + aside
    if deep.empty:
        return Claim(claim, "Table 1", evidence.removeprefix("; "), "—", label, NOT_TESTABLE,
                     reason="TAP was timed on none of Table 1's deep CNNs")
    rounds = _counts(deep, "speed_rounds", "paired round")
    passes = _counts(deep, "mem_passes", "memory pass")
    return Claim(claim, "Table 1", evidence, f"{rounds}; {passes}", label, _combined(verdicts))


def _speed_part(r) -> str:
    """One architecture's TAP ratios with their intervals, for a claim's evidence."""
    speed, mem = _bounds(r, "speed_ratio"), _bounds(r, "mem_ratio")
    return (f"{_label(r.model)}: speed ×{r.speed_ratio:.2f} {_interval(*speed)}, memory "
            f"×{r.mem_ratio:.2f} {_interval(*mem)}")


def _interval(lo: float, hi: float) -> str:
    return interval_text(lo, hi, missing="[no interval]")


def _counts(frame: pd.DataFrame, column: str, unit: str) -> str:
    """``"20–30 paired rounds"``: the range of ``column`` over the architectures."""
    n = sorted({int(v) for v in frame[column].dropna()}) if column in frame else []
    span = "no" if not n else f"{n[0]}" if n[0] == n[-1] else f"{n[0]}–{n[-1]}"
    return f"{span} {unit}{'' if span == '1' else 'es' if unit.endswith('s') else 's'}"


def cost_claim(ratios: pd.DataFrame, label: str, method: str | None = None,
               others: Iterable[str] | None = None,
               judged: Collection[str] | None = None) -> Claim:
    """RRR and RBR (``others``; None: the comparators, :func:`tapkit.methods.comparators`), which
    take second derivatives, train slower than TAP (``method``; None: the paper's own) and use
    more memory ("trains faster and uses less memory"), on every deep CNN of Table 1
    (``judged``, as :func:`speed_claim`); another model timed beside them (the two-layer CNN) is
    shown as context and decides nothing. Each comparator is needed on each deep CNN: one not
    benchmarked there (out of memory) is named and leaves the claim *not testable here* unless a
    measured one already fails it. Memory is counted exactly, so its ratio decides without an
    interval, as in :func:`cost_share_claim`."""
    method = method or proposed_method()
    named = list(comparators() if others is None else others)
    claim = (f"{' and '.join(map(_label, named))} train slower than {_label(method)} and use "
             "more memory")
    judged = architectures() if judged is None else frozenset(judged)
    wide = ratios.pivot_table(index="model", columns="method", values="speed_ratio")
    memory = (ratios.pivot_table(index="model", columns="method", values="mem_ratio")
              if "mem_ratio" in ratios else pd.DataFrame(index=wide.index))  # an older table
    others = [m for m in named if m in wide]
    if method not in wide or not others:
        return Claim(claim, "Table 1", "not benchmarked here", "—", label, NOT_RUN,
                     reason=f"{'/'.join(map(_label, named))} or {_label(method)} not benchmarked")

    def part(model, row) -> str:
        return f"{_label(model)}: " + ", ".join(
            f"{_label(m)} ×{row[m]:.2f} speed" + (f", ×{memory.loc[model, m]:.2f} memory"
                                                  if m in memory and pd.notna(memory.loc[model, m])
                                                  else "")
            for m in [method, *others] if pd.notna(row[m]))

    deep, context = wide[wide.index.isin(judged)], wide[~wide.index.isin(judged)]
    aside = ("; context, not judged (not in Table 1): "
             + "; ".join(part(m, r) for m, r in context.iterrows()) if len(context) else "")
    evidence = "; ".join(part(m, r) for m, r in deep.iterrows()) + aside
    if deep.empty:
        return Claim(claim, "Table 1", evidence.removeprefix("; "), "—", label, NOT_TESTABLE,
                     reason="timed on none of Table 1's deep CNNs")
    mem = memory.reindex(index=deep.index, columns=[method, *others])
    # a comparator out of memory where TAP trains (the paper's RBR on DenseNet-121) is the
    # claim's own evidence: slower (it cannot train there) and heavier
    oom = ({(r.model, r.method) for r in ratios.itertuples() if r.status == "oom"}
           if "status" in ratios else set())
    gaps = [f"{_label(m)} on {_label(model)}" for model in deep.index for m in named
            if (model, m) not in oom and (m not in deep or pd.isna(deep.loc[model, m])
                                          or pd.isna(mem.loc[model, m]))]
    measured = [(model, m) for model in deep.index for m in others
                if pd.notna(deep.loc[model, m]) and pd.notna(mem.loc[model, m])]
    holds = all(deep.loc[model, m] < deep.loc[model, method]
                and mem.loc[model, m] > mem.loc[model, method] for model, m in measured)
    if not holds:
        return Claim(claim, "Table 1; Introduction", evidence, "—", label, NOT_REPRODUCED)
    absent = [m for m in named if m not in others]
    if absent:  # a comparator this build never benchmarked
        return Claim(claim, "Table 1; Introduction", evidence, "—", label, NOT_RUN,
                     reason=f"{' and '.join(map(_label, absent))} not benchmarked here")
    if gaps:
        return Claim(claim, "Table 1; Introduction", evidence, "—", label, NOT_TESTABLE,
                     reason="not measured here: " + ", ".join(gaps))
    return Claim(claim, "Table 1; Introduction", evidence, "—", label, REPRODUCED)


def cost_share_claim(ratios: pd.DataFrame, label: str, method: str | None = None,
                     *others: str, judged: Collection[str] | None = None) -> Claim:
    """Avoiding second derivatives gives TAP (``method``; None: the paper's own) "circa 25% of
    the training time and half the memory" of RRR and RBR (``others``; None: the comparators):
    per comparator, TAP's share of its step time (the ratio of their speeds) and of its peak
    memory, averaged over Table 1's deep CNNs (``judged``, as :func:`speed_claim`), at most
    :data:`.thresholds.TIME_SHARE` and :data:`.thresholds.MEMORY_SHARE`. Memory is counted
    exactly (the allocator's peak bytes of live tensors) and the speeds' ratios are far from
    the thresholds, so the shares decide without an interval; the two-layer CNN is context."""
    method = method or proposed_method()
    named = list(others or comparators())
    claim = (f"{_label(method)} takes at most {TIME_SHARE:.0%} of the step time and "
             f"{MEMORY_SHARE:.0%} of the memory of {' and '.join(map(_label, named))}")
    judged = architectures() if judged is None else frozenset(judged)
    deep = ratios[ratios["model"].isin(judged)]
    speed = deep.pivot_table(index="model", columns="method", values="speed_ratio")
    memory = deep.pivot_table(index="model", columns="method", values="mem_ratio")
    timed = [m for m in named if m in speed and method in speed]
    if not timed:
        return Claim(claim, "Introduction; Table 1", "not benchmarked here", "—", label, NOT_RUN,
                     reason="TAP, RRR or RBR not timed on Table 1's architectures")
    parts, verdicts = [], []
    for other in timed:
        time_share = (speed[other] / speed[method]).mean()   # TAP's time ÷ the other's
        mem_share = (memory[method] / memory[other]).mean()
        parts.append(f"{_label(method)} ÷ {_label(other)}: time {time_share:.2f}, memory "
                     f"{mem_share:.2f}")
        verdicts.append(REPRODUCED if time_share <= TIME_SHARE and mem_share <= MEMORY_SHARE
                        else NOT_REPRODUCED)
    models = ", ".join(map(_label, sorted(speed.index)))
    evidence = "; ".join(parts) + f" (means over {models})"
    # "of RRR and RBR": a comparator never timed leaves the claim not run (named)
    c = Claim(claim, "Introduction; Table 1", evidence, "—", label, _combined(verdicts))
    return needs_all(c, [f"{_label(m)} timing" for m in named if m not in timed])


PAPER_GPU_MB = 10 * 1024
"""The paper's GPU, an RTX 3080 of 10 GB (LaTeX line 352), where DenseNet-121's RBR step at
batch 16 of 224-px images ran out of memory (Table 1)."""


def oom_claim(meta: dict, label: str, method: str, model: str = "densenet121") -> Claim:
    """``method`` on ``model`` needs more than the paper's 10 GB GPU at the paper's batch of 16
    224-px images. Judged from Table 1's rows (the speed chapter's table metadata) only where
    that step was measured on a GPU at that batch and size: its peak memory above
    :data:`PAPER_GPU_MB` reproduces the OOM; elsewhere the measured peak is shown and the claim
    is not testable."""
    claim = (f"{_label(method)} on {_label(model)} needs more than a 10 GB GPU at batch 16 of "
             "224-px images")
    where = "Table 1 (OOM)"
    rows = [r for r in meta.get("rows", []) if r.get("model") == model
            and r.get("method") == method]
    if not rows or rows[0].get("peak_mem_mb") is None:
        return Claim(claim, where, f"no {_label(method)} step on {_label(model)} timed", "—",
                     label, NOT_RUN, reason="the speed chapter did not measure it")
    r = rows[0]
    peak, batch, size = float(r["peak_mem_mb"]), int(r["batch_size"]), int(r["image_size"])
    device = str(r.get("device", ""))
    evidence = (f"peak memory {peak:,.0f} MB at batch {batch} of {size} px on {device}")
    if not (device.startswith("cuda") and batch == 16 and size == 224):
        return untestable(claim, where, evidence, "—", label,
                          "a 10 GB GPU's limit at batch 16 of 224 px; this build measured "
                          "another batch and device (the paper profile on a GPU measures it)")
    return Claim(claim, where, evidence, "—", label,
                 REPRODUCED if peak > PAPER_GPU_MB else NOT_REPRODUCED)


def summary_difference(a: pd.Series, b: pd.Series) -> Estimate:
    """``a − b`` of two rows of a summary table (mean, std, count over seeds): unpaired, the
    stds combined as √(sa² + sb²), the interval on the smaller count and inside an accuracy
    difference's range (no interval when either ran one seed)."""
    sd = (float(a["std"]) ** 2 + float(b["std"]) ** 2) ** 0.5
    return from_summary(float(a["mean"]) - float(b["mean"]), sd, int(min(a["count"], b["count"])),
                        bounds=ACCURACY.range(1))


def teacher_claim(summary: pd.DataFrame, data: str, method: str | None = None,
                  weak: str | None = None) -> Claim:
    """TAP (``method``; None: the paper's own) with masks from a teacher trained on 1% of clean
    data beats No XS on permuted digits. Judged only where those masks mark the decoy better than
    random ones (``weak``: why they do not, Setting 2's precondition, from
    :func:`.claim_judges.weak_mnist_teachers`): else the claim, that the small teacher's annotations
    are useful, cannot be told from one about random masks."""
    method = method or proposed_method()
    name = _label(method)
    claim = f"{name} works with masks from a teacher trained on 1% of clean data"
    rows = summary[summary["split"] == "permuted"]
    tap = rows[(rows["annotation"] == Annotation.TEACHER_1) & (rows["method"] == method)]
    none = rows[rows["annotation"] == Annotation.NONE]
    if tap.empty or none.empty:
        return Claim(claim, "Setting 2, Fig. ts", f"no 1%-teacher {name} run in this build", "—",
                     data, NOT_RUN)
    t, n = tap.iloc[0], none.iloc[0]
    count = int(min(t["count"], n["count"]))
    evidence = (f"MNIST permuted accuracy: {name} with 1%-teacher masks (τ {tau_text(t['tau'])}) "
                f"{t['mean']:.3f}, No XS {n['mean']:.3f}")
    if count < 2:
        return untestable(claim, "Setting 2, Fig. ts", evidence, f"{count} seed", data,
                          "one seed: no interval (the paper's finding is on PNEU/KNEE)")
    e = summary_difference(t, n)
    evidence += f"; difference {e.text()} (unpaired)"
    if weak:
        return untestable(claim, "Setting 2, Fig. ts", evidence, f"{count} seeds", data,
                          f"{weak}, so useful annotations cannot be told from random ones here")
    return Claim(claim, "Setting 2, Fig. ts", evidence,
                 f"{count} seeds", data, keeps_verdict(e.lo, e.hi, 0.0))

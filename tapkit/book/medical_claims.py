"""The claims of the paper about deep CNNs on PNEU and KNEE, judged by :mod:`.claims`' rules, as
:mod:`.mnist_claims` judges the MNIST ones. Setting 1's claims (TAP keeps deep CNNs off the tag;
RRR/RBR let it re-emerge on some architectures; TAP matches RRR and RBR at a fraction of their
cost) read the per-run tables ``<experiment>_gt_runs`` and judge paired differences over seeds;
they are judged on the digits stand-in too when it trained several seeds, labelled as the
stand-in's; the overlap chapter's claims, read the same way, are in :mod:`.overlap_claims`,
Setting 2's in :mod:`.teacher_claims`. Whether a table is on the paper's data is its
provenance's typed ``origin`` (:class:`.origin.DataOrigin`); each method's evidence is its
reliance on the tag (:func:`tapkit.metrics.tag_reliance`: what the metric worsens by when the
tag is swapped, positive when the model uses it), judged against :mod:`.thresholds`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Mapping, Sequence

import pandas as pd

from ..experiments.setting1 import BASE
from ..methods import comparators, no_xs, proposed_method
from ..metrics import tag_reliance, task_metric
from ..seedstats import Estimate, mean_ci, paired_difference
from .claims import (INCONCLUSIVE, NOT_REPRODUCED, NOT_RUN, NOT_TESTABLE, REPRODUCED, Claim,
                     combined, few_reason, keeps_verdict, on_seeds, per_seed)
from .preconditions import judged_seeds, learned_task
from .labels import count, label
from .origin import DataOrigin
from .thresholds import LEARNED, MARGIN, MATCHES_BASE, clearly_less

RELIANCE = "reliance on the tag (metric lost when the tag is swapped, > 0 uses it)"


def cells(runs: Mapping[str, pd.DataFrame]) -> Iterator[tuple[str, str, pd.DataFrame, pd.Series]]:
    """``(experiment, model, rows, reliance per row)`` of per-run tables (``<experiment>_gt_runs``:
    model, case, seed, status and the three splits), in their order."""
    for exp, frame in runs.items():
        rel = tag_reliance(frame["contaminated"], frame["permuted"], task_metric(exp))
        for model, rows in frame.groupby("model", sort=False):
            yield exp, model, rows, rel[rows.index]


def _name(exp: str, model: str) -> str:
    return f"{exp.upper()} {label(model)}"


def _cell_seeds(rows: pd.DataFrame, rel: pd.Series, exp: str, methods: list[str]):
    """The seeds of one cell where every run of ``methods`` learned the task and No XS took the
    tag (:func:`.preconditions.judged_seeds`)."""
    return judged_seeds(rows, rel, methods, task_metric(exp))


@dataclass(frozen=True)
class Gap:
    """How much worse one case scores than another in one cell (> 0 worse, in the metric's own
    direction), :func:`score_gap`'s answer: ``paired`` seeds when both ran two or more of the
    same seeds (then over those), else 0 and the other's mean ``reference`` over its
    ``reference_seeds`` (its own spread over seeds is then not in the interval)."""

    estimate: Estimate
    paired: int
    own_seeds: int
    reference: float
    reference_seeds: int


def score_gap(own: Mapping[int, float], other: Mapping[int, float], exp: str) -> Gap:
    """How much worse ``own`` ({seed: score}) scores than ``other`` on ``exp``'s task metric
    (> 0 worse: other − own for F1, own − other for MAE). Paired seed by seed over the seeds both
    ran, where there are two or more (a seed's data split is shared by its runs, so its
    difficulty cancels); else against the other's mean, with own's interval."""
    metric = task_metric(exp)
    sign = -1.0 if metric.higher_is_better else 1.0
    both = sorted(set(own) & set(other))
    ref = sum(other.values()) / len(other)
    if len(both) > 1:
        d = paired_difference(own, other, bounds=metric.range(1))
    else:
        e = mean_ci(list(own.values()), bounds=metric.range())
        d = Estimate(e.mean - ref, e.lo - ref, e.hi - ref, e.n)
    lo, hi = sorted((sign * d.lo, sign * d.hi))
    return Gap(Estimate(sign * d.mean, lo, hi, d.n), len(both) if len(both) > 1 else 0,
               len(own), ref, len(other))


def within_tolerance(gap: Estimate, exp: str) -> str:
    """A gap (> 0: worse) no larger than :data:`.thresholds.MATCHES_BASE` on ``exp``'s metric,
    decided by its interval: "matches Base", "looks best", "looks as well" and "best among the XS
    losses" all read a score up to that tolerance; inconclusive on one seed."""
    if gap.n < 2:
        return INCONCLUSIVE
    return keeps_verdict(gap.lo, gap.hi, MATCHES_BASE[exp], higher_is_better=False)


def base_gap(rows: pd.DataFrame, rel: pd.Series, exp: str,
             method: str) -> tuple[Estimate, str] | None:
    """How much worse than Base ``method`` scores on clean test images in one cell (one model's
    per-run rows; > 0 worse), for "matches the Base model" (:data:`.thresholds.MATCHES_BASE`),
    with the words that say what it was compared with; None without a Base run that learned the
    task or a converged run of ``method``.

    The clean split, not the permuted one: Base never saw a tag, and on the stand-in the tags it
    meets on permuted images cost it up to 0.13 F1 (DenseNet-121 on PNEU: 0.908 clean, 0.782
    permuted), where the paper's Base loses nothing (0.949 against 0.943); its clean score is
    what learning the true signal gives (issue 36's target for TAP reads it too). Read on the
    seeds where No XS learned the task and took the tag (the stand-in's conditions held,
    :mod:`.preconditions`). A run of ``method`` that did not learn the task counts: its failure
    is what "matches the Base model" is about, so it is never dropped into a success. Base pairs
    seed by seed over the seeds both ran, where there are two or more (the quick profile trains
    ResNet-18's Base on three KNEE seeds); else Base's mean over the seeds it ran is the
    reference, and its own spread over seeds is not in the interval (:func:`score_gap`)."""
    metric = task_metric(exp)
    seeds = judged_seeds(rows, rel, [no_xs()], metric).kept
    own = on_seeds(per_seed(rows, method, rows["clean"]), seeds)
    learned = learned_task(rows, metric)
    base = per_seed(rows[learned], BASE, rows.loc[learned, "clean"])
    if not own or not base:
        return None
    g = score_gap(own, base, exp)
    if not g.paired:
        ref = (f"against Base's {g.reference:.3f} ({count(g.reference_seeds, 'seed')}; its "
               "spread over seeds is not in the interval)")
    elif g.paired == g.own_seeds:
        ref = "paired with Base on the same seeds"
    else:
        ref = (f"paired with Base on the {g.paired} seeds both ran ({label(method)}'s other "
               f"{g.own_seeds - g.paired} unpaired)")
    return g.estimate, ref


def _looks_best_part(rows: pd.DataFrame, exp: str, seeds: Sequence[int]) -> tuple[str, str]:
    """The "No XS looks best on contaminated data" part of one cell (Results: "the left panel
    initially suggests that the No XS model is best"): on contaminated test images No XS scores
    no worse than any other case of the cell by more than :data:`.thresholds.MATCHES_BASE` (the
    paper's No XS ties DenseNet-121's RRR at 0.994 F1, so "best" is read up to that tolerance),
    each gap decided by its interval (:func:`score_gap`; inconclusive on one seed). Read on
    ``seeds``, where No XS learned the task, against the other cases' runs that learned it too:
    a collapsed RRR run is no rival to look best against, and its scatter (F1 0.167 beside 0.98,
    DenseNet-121 on the PNEU stand-in) would leave every comparison undecided.
    Returns the part's verdict and the evidence's words."""
    own = on_seeds(per_seed(rows, no_xs(), rows["contaminated"]), seeds)
    tol, metric = MATCHES_BASE[exp], task_metric(exp)
    learned = rows[learned_task(rows, metric)]
    verdicts, words = [], []
    for case in dict.fromkeys(rows["case"]):
        other = per_seed(learned, case, learned["contaminated"])
        if case == no_xs() or not other or not own:
            continue
        g = score_gap(own, other, exp)
        verdicts.append(within_tolerance(g.estimate, exp))
        how = ("paired" if g.paired else
               f"against its {g.reference:.3f} over {count(g.reference_seeds, 'seed')}")
        words.append(f"{label(case)}'s by {g.estimate.text()} {how}")
    if not verdicts:
        return INCONCLUSIVE, "; no other case to compare on contaminated images"
    verdict = combined(verdicts)
    return verdict, (f"; No XS's contaminated {metric.label} worse than "
                     f"{', than '.join(words)} — best within {tol:g}: {verdict}")


def _matches_part(rows: pd.DataFrame, rel: pd.Series, exp: str,
                  method: str) -> tuple[str, str, int]:
    """The "matches the Base model" part of one cell: its verdict (:func:`base_gap` against
    :data:`.thresholds.MATCHES_BASE`, decided by the interval; inconclusive on one seed or
    without Base), the evidence's words, and the seeds it read."""
    gap = base_gap(rows, rel, exp, method)
    if gap is None:
        return INCONCLUSIVE, "; no Base run that learned the task to match", 0
    g, ref = gap
    tol, verdict = MATCHES_BASE[exp], within_tolerance(g, exp)
    return verdict, (f"; {label(method)}'s clean {task_metric(exp).label} worse than Base's by "
                     f"{g.text()}, {ref} — matches Base within {tol:g}: {verdict}"), g.n


def keeps_off_claim(runs: Mapping[str, pd.DataFrame], data: Mapping[str, str],
                    origins: Mapping[str, DataOrigin | None], method: str | None = None,
                    matches_base: bool = False, best_among: Sequence[str] = ()) -> Claim:
    """TAP (``method``; None: the paper's own) keeps deep CNNs off the tag (Results, Figs.
    PNEU/KNEE). Judged per data set and architecture on the seeds where No XS took the tag and
    both No XS and TAP learned the task (:mod:`.preconditions`): TAP is clearly less reliant than
    No XS (the paired difference No XS − TAP against :data:`.thresholds.MARGIN`) and its own
    reliance stays below :data:`.thresholds.LEARNED`, each decided by its interval
    (:func:`.claims.keeps_verdict`). With ``matches_base`` (the claim says TAP "matches the Base
    model") TAP's clean score is also no worse than Base's by more than
    :data:`.thresholds.MATCHES_BASE` (:func:`base_gap`), on every seed where No XS took the tag,
    TAP's unlearned ones included: a cell whose TAP runs did not learn the task cannot judge the
    tag, but its failure to match Base counts, not reproduced or, where its interval spans the
    tolerance, inconclusive (a collapse is never left out of a claim's verdict). With
    ``best_among`` (the other XS losses: "TAP best among the XS losses" on permuted images),
    TAP's permuted score is no worse than each one's that ran in the cell (:func:`_no_worse_part`);
    a cell without them says so and is judged on the rest. A cell with fewer than two seeds for
    the tag is otherwise shown with why, not judged."""
    method = method or proposed_method()
    own = label(method)
    claim = f"{own} keeps deep CNNs off the tag" + (" and matches Base" if matches_base else "")
    parts, results, n_min, why, open_parts = [], [], None, [], []
    for exp, model, rows, rel in cells(runs):
        if not {no_xs(), method} <= set(rows["case"]):
            continue
        metric = task_metric(exp)
        seeds = _cell_seeds(rows, rel, exp, [no_xs(), method])
        none = on_seeds(per_seed(rows, no_xs(), rel), seeds.kept)
        tap = on_seeds(per_seed(rows, method, rel), seeds.kept)
        name = _name(exp, model)
        match, versus, n_match = (_matches_part(rows, rel, exp, method) if matches_base
                                  else (REPRODUCED, "", 0))
        if len(seeds.kept) < 2:
            # no two seeds to judge the tag on (TAP learned the task in fewer), but "matches
            # Base" was judged on its seeds and did not hold: the cell counts, never dropped
            if match != REPRODUCED and n_match > 1:
                results.append(match)
                open_parts.append((f"matches Base {match}", name))
                n_min = n_match if n_min is None else min(n_min, n_match)
                parts.append(f"{name}: the tag not judged ({few_reason(seeds)}){versus} — "
                             f"{match}{seeds.note(name)}")
            else:
                parts.append(f"{name}: not testable{versus}{seeds.note(name)}")
                why.append(f"{name}: {few_reason(seeds)}")
            continue
        n_e, t_e = (mean_ci(list(v.values()), bounds=metric.range(1)) for v in (none, tap))
        d = paired_difference(none, tap, bounds=metric.range(2))
        n_min = d.n if n_min is None else min(n_min, d.n)
        off = combined([keeps_verdict(d.lo, d.hi, MARGIN),
                        keeps_verdict(t_e.lo, t_e.hi, LEARNED, higher_is_better=False)])
        rivals = [r for r in best_among if r in set(rows["case"])]
        best = [(f"best beside {label(r)}",
                 *_no_worse_part(rows, exp, method, seeds.kept, r, "permuted", "best"))
                for r in rivals]
        missing = [label(r) for r in best_among if r not in rivals]
        absent = [f"; best among the XS losses: no {', '.join(missing)} run here to compare"
                  ] if missing else []
        verdict = combined([off, match, *(v for _, v, _ in best)])
        results.append(verdict)
        several = matches_base or bool(best)
        if several:  # the parts that kept the cell from being reproduced
            open_parts += [(f"{part} {v}", name) for part, v in
                           [("off the tag", off), *([("matches Base", match)] * matches_base),
                            *((p_, v) for p_, v, _ in best)] if v != REPRODUCED]
        more = versus + "".join(w for _, _, w in best) + "".join(absent)
        both = f" — off the tag: {off}{more}; together: " if several else f"{more} — "
        parts.append(f"{name}: No XS {n_e.text()}, {own} {t_e.text()}, paired No XS − {own} "
                     f"{d.text()}{both}{verdict}{seeds.note(name)}")
    evidence = f"{RELIANCE} — " + ("; ".join(parts) or f"no architecture with No XS and {own}")
    return _judged_runs(claim, "Results, Figs. PNEU/KNEE", evidence, data, origins,
                        n_min or 0, results, why, _grouped(open_parts))


def partly_reduces_claim(runs: Mapping[str, pd.DataFrame], data: Mapping[str, str],
                         origins: Mapping[str, DataOrigin | None], method: str) -> Claim:
    """``method`` (RBR on EfficientNet-B0, App. architectures, l.807: it "matches Base model
    performance but incompletely reduces contamination sensitivity"). Per data set and
    architecture, on the seeds where No XS took the tag and both learned the task, every part
    decided by its interval: it matches Base (:func:`_matches_part`), its reliance on the tag
    lies below No XS's by more than :data:`.thresholds.MARGIN` (paired: "reduces") and above
    MARGIN itself ("incompletely"). The cells combined; a cell with fewer than two seeds is
    shown with why, not judged."""
    own = label(method)
    claim = f"{own} matches Base and reduces the reliance on the tag, but not to nothing"
    parts, results, n_min, why, open_parts = [], [], None, [], []
    for exp, model, rows, rel in cells(runs):
        if not {no_xs(), method} <= set(rows["case"]):
            continue
        metric, name = task_metric(exp), _name(exp, model)
        seeds = _cell_seeds(rows, rel, exp, [no_xs(), method])
        if len(seeds.kept) < 2:
            parts.append(f"{name}: not testable{seeds.note(name)}")
            why.append(f"{name}: {few_reason(seeds)}")
            continue
        none = on_seeds(per_seed(rows, no_xs(), rel), seeds.kept)
        mine = on_seeds(per_seed(rows, method, rel), seeds.kept)
        e = mean_ci(list(mine.values()), bounds=metric.range(1))
        d = paired_difference(none, mine, bounds=metric.range(2))
        n_min = d.n if n_min is None else min(n_min, d.n)
        match, versus, _ = _matches_part(rows, rel, exp, method)
        found = [("reduces", keeps_verdict(d.lo, d.hi, MARGIN)),
                 ("not to nothing", keeps_verdict(e.lo, e.hi, MARGIN)), ("matches Base", match)]
        verdict = combined([v for _, v in found])
        results.append(verdict)
        open_parts += [(f"{p} {v}", name) for p, v in found if v != REPRODUCED]
        parts.append(f"{name}: {own} {e.text()}, paired No XS − {own} {d.text()}{versus} — "
                     f"{verdict}{seeds.note(name)}")
    evidence = f"{RELIANCE} — " + ("; ".join(parts) or f"no architecture with No XS and {own}")
    return _judged_runs(claim, "App. architectures (Fig. rebut)", evidence, data, origins,
                        n_min or 0, results, why, _grouped(open_parts))


def _grouped(pairs: Sequence[tuple[str, str]]) -> str:
    """``[("matches Base inconclusive", "PNEU VGG-16"), ...]`` as one reason, each part once:
    ``"matches Base inconclusive on PNEU VGG-16, PNEU ResNet-18"``."""
    return "; ".join(f"{part} on {', '.join(n for p, n in pairs if p == part)}"
                     for part in dict.fromkeys(p for p, _ in pairs))


PAPER_REEMERGENCE = "the paper's cases: PNEU DenseNet-121 RRR F1 0.994 → 0.429, VGG-16 RBR 0.974 → 0.825"


def no_xs_relies_claim(runs: Mapping[str, pd.DataFrame], data: Mapping[str, str],
                       origins: Mapping[str, DataOrigin | None], looks_best: bool = False) -> Claim:
    """No XS relies on the tag (Results: its score "plummets" when the tags are swapped), per
    data set and architecture, on the seeds where No XS learned the task: its reliance interval
    wholly above :data:`.thresholds.LEARNED` holds, wholly below it fails, across it is
    inconclusive; the cells' verdicts combined. With ``looks_best`` (the claim says No XS "looks
    best" or "appears best-performing" on contaminated data first) each cell's No XS must also
    score best there, up to a tolerance (:func:`_looks_best_part`)."""
    return _no_xs_claim("No XS looks best on contaminated data but relies on the tag"
                        if looks_best else "No XS relies on the tag",
                        "Results, Figs. PNEU/KNEE", runs, data, origins, relies=True,
                        looks_best=looks_best)


def little_reliance_claim(runs: Mapping[str, pd.DataFrame], data: Mapping[str, str],
                          origins: Mapping[str, DataOrigin | None]) -> Claim:
    """No XS barely relies on the tag (the appendix architectures on PNEU, "notably less
    vulnerable"): :func:`no_xs_relies_claim` with the verdict turned round, its reliance
    interval wholly below :data:`.thresholds.LEARNED` holds."""
    return _no_xs_claim("No XS shows little reliance on the tag", "App. architectures", runs,
                        data, origins, relies=False)


def _no_xs_claim(claim: str, where: str, runs: Mapping[str, pd.DataFrame],
                 data: Mapping[str, str], origins: Mapping[str, DataOrigin | None],
                 relies: bool, looks_best: bool = False) -> Claim:
    """No XS's reliance per data set and architecture, on the seeds where it learned the task,
    against :data:`.thresholds.LEARNED` (above it holds where ``relies``, below it otherwise);
    with ``looks_best``, also :func:`_looks_best_part` on the same seeds."""
    parts, results, n_min, why, open_parts = [], [], None, [], []
    for exp, model, rows, rel in cells(runs):
        if no_xs() not in set(rows["case"]):
            continue
        name = _name(exp, model)
        seeds = judged_seeds(rows, rel, [no_xs()], task_metric(exp), shortcut=False)
        if len(seeds.kept) < 2:
            parts.append(f"{name}: not testable{seeds.note(name)}")
            why.append(f"{name}: {few_reason(seeds)}")
            continue
        e = mean_ci(list(on_seeds(per_seed(rows, no_xs(), rel), seeds.kept).values()),
                    bounds=task_metric(exp).range(1))
        n_min = e.n if n_min is None else min(n_min, e.n)
        verdict = keeps_verdict(e.lo, e.hi, LEARNED, higher_is_better=relies)
        if looks_best:  # the parts that kept the cell from being reproduced are its reason
            best, words = _looks_best_part(rows, exp, seeds.kept)
            open_parts += [(f"{part} {v}", name) for part, v in (("relies on the tag", verdict),
                                                                ("looks best", best))
                           if v != REPRODUCED]
            words = f" — relies on the tag: {verdict}{words}; together: "
            verdict = combined([verdict, best])
        else:
            words = " — "
        results.append(verdict)
        parts.append(f"{name}: No XS {e.text()}{words}{verdict}{seeds.note(name)}")
    evidence = f"{RELIANCE} — " + ("; ".join(parts) or "no No XS run")
    return _judged_runs(claim, where, evidence, data, origins, n_min or 0, results, why,
                        _grouped(open_parts))


def _in_some_cell(results: Sequence[str]) -> list[str]:
    """The verdict of "in some cell" from the cells' verdicts: reproduced when some cell is, not
    reproduced when every judged cell is not, else inconclusive; none when no cell was judged."""
    if not results:
        return []
    if REPRODUCED in results:
        return [REPRODUCED]
    return [NOT_REPRODUCED] if all(v == NOT_REPRODUCED for v in results) else [INCONCLUSIVE]


def reemerge_claim(runs: Mapping[str, pd.DataFrame], data: Mapping[str, str],
                   origins: Mapping[str, DataOrigin | None],
                   methods: Sequence[str] | None = None, looks_well: Sequence[str] = (),
                   relies_more: Sequence[str] = ()) -> Claim:
    """RRR/RBR (``methods``; None: the comparators, :func:`tapkit.methods.comparators`) let the
    tag re-emerge on some architectures (Results: the paper's DenseNet-121 RRR). Per data set,
    architecture and method, on the seeds where No XS took the tag and both learned the task:
    the method's reliance interval wholly above :data:`.thresholds.LEARNED` re-emerges (the
    claims' tests: "strongly < 0 ... like No XS", whose reliance is judged against it too;
    above :data:`.thresholds.MARGIN` only, a model "barely used" the tag), wholly below it does
    not, across it is inconclusive. Where the claim says the method "seems to
    perform well" or gives "ostensibly strong performance" (l.372, 393), its contaminated score
    is also no worse than each case of ``looks_well`` (Base, TAP) by more than
    :data:`.thresholds.MATCHES_BASE` (:func:`_no_worse_part`); where it says the sensitivity
    is larger than theirs, its reliance exceeds each of ``relies_more``'s by
    :data:`.thresholds.MARGIN` (:func:`_relies_more_part`). Reproduced when some cell holds every
    part, not reproduced when every judged cell fails one, else inconclusive. Architectures
    without RRR/RBR runs are named."""
    methods = list(comparators() if methods is None else methods)
    named = "/".join(label(m) for m in methods)
    claim = named + " let the tag re-emerge on some architectures"
    parts, results, n_min, without, why, open_parts = [], [], None, [], [], []
    for exp, model, rows, rel in cells(runs):
        found = False
        for method in methods:
            if method not in set(rows["case"]):
                continue
            found, name = True, f"{_name(exp, model)} {label(method)}"
            seeds = _cell_seeds(rows, rel, exp, [no_xs(), method])
            if len(seeds.kept) < 2:
                parts.append(f"{name}: not testable{seeds.note(name)}")
                why.append(f"{name}: {few_reason(seeds)}")
                continue
            own = on_seeds(per_seed(rows, method, rel), seeds.kept)
            e = mean_ci(list(own.values()), bounds=task_metric(exp).range(1))
            n_min = e.n if n_min is None else min(n_min, e.n)
            relies = keeps_verdict(e.lo, e.hi, LEARNED)  # "strongly", "like No XS"
            more = ([(f"looks as well as {label(other)}",
                      *_no_worse_part(rows, exp, method, seeds.kept, other))
                     for other in looks_well]
                    + [(f"relies more than {label(other)}",
                        *_relies_more_part(rows, rel, exp, own, other))
                       for other in relies_more])
            verdict = combined([relies, *(v for _, v, _ in more)])
            results.append(verdict)
            if more:  # a claim of several parts: the ones that held the cell back
                open_parts += [(f"{part} {v}", name) for part, v in
                               [("relies on the tag", relies), *((p_, v) for p_, v, _ in more)]
                               if v != REPRODUCED]
            parts.append(f"{name} {e.text()}" + (" — relies on the tag" if relies == REPRODUCED
                                                  else "")
                         + "".join(words for _, _, words in more)
                         + (f"; together: {verdict}" if more else "") + seeds.note(name))
        if not found:
            without.append(_name(exp, model))
    evidence = f"{RELIANCE} — " + ("; ".join(parts) or f"no {named} run")
    if without:
        evidence += f"; no {named} run: {', '.join(without)}"
    if "pneu" in runs:  # the paper's own cases are on PNEU; on KNEE they would mislead
        evidence += f" ({PAPER_REEMERGENCE})"
    some = _in_some_cell(results)
    return _judged_runs(claim, "Results, Figs. PNEU/KNEE (DenseNet-121 RRR)", evidence, data,
                        origins, n_min or 0, some, why, _grouped(open_parts))


def _no_worse_part(rows: pd.DataFrame, exp: str, method: str, seeds: Sequence[int],
                   other: str, split: str = "contaminated",
                   what: str = "looks as well") -> tuple[str, str]:
    """``method``'s score on the ``split`` test images, on ``seeds``, no worse than ``other``'s
    (its runs that learned the task) by more than :data:`.thresholds.MATCHES_BASE`, decided by
    the interval of :func:`score_gap` (inconclusive on one seed or without ``other``): the
    claims' "seems to perform well (left panel) compared to TAP and even Base" (l.393;
    "ostensibly strong performance", l.372; ``split`` contaminated) and "TAP best among the XS
    losses" (``split`` permuted). Base's score is its clean one, as in :func:`base_gap`: Base
    never saw a tag, and on the stand-in the tags can throw it (DenseNet-121 on PNEU: clean F1
    0.908, contaminated 0.667, a constant's), where the paper's Base scores alike on every split
    (VGG-16: 0.916 and 0.914). The verdict and the evidence's words (``what``: the part's
    name)."""
    metric, tol = task_metric(exp), MATCHES_BASE[exp]
    theirs_split = "clean" if other == BASE else split
    learned = rows[learned_task(rows, metric)]
    own = on_seeds(per_seed(rows, method, rows[split]), seeds)
    theirs = per_seed(learned, other, learned[theirs_split])
    if not theirs:
        return INCONCLUSIVE, f"; no {label(other)} run that learned the task to compare with"
    g = score_gap(own, theirs, exp)
    verdict = within_tolerance(g.estimate, exp)
    how = "paired" if g.paired else f"against its {g.reference:.3f}"
    return verdict, (f"; {split} {metric.label} worse than {label(other)}'s {theirs_split} by "
                     f"{g.estimate.text()} {how} — {what} within {tol:g}: {verdict}")


def _relies_more_part(rows: pd.DataFrame, rel: pd.Series, exp: str, own: Mapping[int, float],
                      other: str) -> tuple[str, str]:
    """"Significant contamination sensitivity", larger than ``other``'s (l.393: the paper's
    RRR/RBR MAE rises 0.05-1.05 where TAP's and Base's barely move): the reliance ``own``
    ({seed: reliance}) minus ``other``'s (its runs that learned the task), paired over the seeds
    both ran where there are two, else against its mean, above :data:`.thresholds.MARGIN`,
    decided by the interval. The verdict and the evidence's words."""
    metric = task_metric(exp)
    learned = learned_task(rows, metric)
    theirs = per_seed(rows[learned], other, rel[learned])
    if not theirs:
        return INCONCLUSIVE, f"; no {label(other)} run that learned the task to rely more than"
    both = sorted(set(own) & set(theirs))
    if len(both) > 1:
        d, how = paired_difference(own, theirs, bounds=metric.range(2)), "paired"
    else:
        e = mean_ci(list(own.values()), bounds=metric.range(1))
        ref = sum(theirs.values()) / len(theirs)
        d, how = Estimate(e.mean - ref, e.lo - ref, e.hi - ref, e.n), f"against its {ref:.3f}"
    verdict = keeps_verdict(d.lo, d.hi, MARGIN)
    return verdict, (f"; reliance above {label(other)}'s by {d.text()} {how} — relies more: "
                     f"{verdict}")


def matches_at_cost_claim(runs: Mapping[str, pd.DataFrame], ratios: pd.DataFrame | None,
                          data: Mapping[str, str], origins: Mapping[str, DataOrigin | None],
                          method: str | None = None, other: str | None = None) -> Claim:
    """TAP (``method``; None: the paper's own) matches RRR (``other``; None: the first
    comparator, :func:`tapkit.methods.comparators`) at a fraction of its cost (Results; Table 1),
    on every data set and architecture that trained both, on the seeds where No XS took the tag
    and No XS, TAP and RRR learned the task: the paired difference TAP − RRR of the permuted-tag
    test score (higher is better; MAE negated) against −:data:`.thresholds.MARGIN` (as "matches"
    on MNIST), and the same build's speed table (``ratios``) has RRR clearly slower than TAP on
    that architecture (RRR's interval below TAP's) and RRR's peak memory clearly above TAP's
    ("while needing less training time and memory"). The cost is TAP's step time and memory as
    shares of RRR's. RBR beside RRR: :func:`tapkit.book.claim_judges.matches_at_cost`."""
    method, other = method or proposed_method(), other or comparators()[0]
    own, theirs = label(method), label(other)
    claim, parts, results, n_min, why = (f"{own} matches {theirs} at a fraction of its cost", [],
                                         [], None, [])
    speed = ({} if ratios is None else
             {(r.model, r.method): r for r in ratios.itertuples()})
    for exp, model, rows, rel in cells(runs):
        if not {method, other} <= set(rows["case"]):
            continue
        metric, name = task_metric(exp), _name(exp, model)
        sign = 1.0 if metric.higher_is_better else -1.0
        score = rows["permuted"] * sign
        seeds = _cell_seeds(rows, rel, exp, [no_xs(), method, other])
        if len(seeds.kept) < 2:
            parts.append(f"{name}: not testable{seeds.note(name)}")
            why.append(f"{name}: {few_reason(seeds)}")
            continue
        d = paired_difference(on_seeds(per_seed(rows, method, score), seeds.kept),
                              per_seed(rows, other, score), bounds=metric.range(1))
        n_min = d.n if n_min is None else min(n_min, d.n)
        t, r = speed.get((model, method)), speed.get((model, other))
        if t is None or r is None:
            parts.append(f"{name}: permuted score, {own} − {theirs} (paired) {d.text()}; no speed "
                         "measured for this architecture in this build")
            results.append(INCONCLUSIVE)
            continue
        cheaper = keeps_verdict(t.speed_ratio_lo - r.speed_ratio_hi,
                                t.speed_ratio_hi - r.speed_ratio_lo, 0.0)
        (t_lo, t_hi), (r_lo, r_hi) = _memory_ends(t), _memory_ends(r)
        lighter = keeps_verdict(r_lo - t_hi, r_hi - t_lo, 0.0)
        verdict = combined([keeps_verdict(d.lo, d.hi, -MARGIN), cheaper, lighter])
        results.append(verdict)
        parts.append(f"{name}: permuted score, {own} − {theirs} (paired) {d.text()}; {_a(own)} step "
                     f"costs {r.speed_ratio / t.speed_ratio:.2f} of {_a(theirs)} step's time and "
                     f"{t.mem_ratio / r.mem_ratio:.2f} of its memory (vs No XS: {own} "
                     f"×{t.speed_ratio:.2f} speed, ×{t.mem_ratio:.2f} memory; {theirs} "
                     f"×{r.speed_ratio:.2f}, ×{r.mem_ratio:.2f}) — {verdict}"
                     + _comparator_note(rows, rel, seeds.kept, other) + seeds.note(name))
    evidence = "; ".join(parts) or f"no architecture with {own} and {theirs}"
    if ratios is None and parts:
        results, why = [], ["the speed chapter did not run in this build: no cost to compare"]
    return _judged_runs(claim, "Results; Table 1", evidence, data, origins, n_min or 0,
                        results, why)


def _memory_ends(row) -> tuple[float, float]:
    """A memory ratio's interval over its passes, or the ratio itself at both ends where it was
    measured in one pass (RRR's and RBR's: a step's peak memory is the same each pass, unlike
    its time; the speed table's TAP rows show lo = hi over two)."""
    lo, hi = getattr(row, "mem_ratio_lo", float("nan")), getattr(row, "mem_ratio_hi", float("nan"))
    if pd.isna(lo) or pd.isna(hi):
        return float(row.mem_ratio), float(row.mem_ratio)
    return float(lo), float(hi)


def _comparator_note(rows: pd.DataFrame, rel: pd.Series, kept: Sequence[int],
                     other: str) -> str:
    """What a "TAP beats RRR" verdict rests on, said where it matters: the comparator's mean
    reliance on the tag beside No XS's over the judged seeds, and, where the comparator's is not
    clearly less than No XS's (:func:`.thresholds.clearly_less`), that at its chosen λ it did not
    keep the network off the tag (a win over a comparator that changed little)."""
    theirs = on_seeds(per_seed(rows, other, rel), kept)
    none = on_seeds(per_seed(rows, no_xs(), rel), kept)
    if not theirs or not none:
        return ""
    a, b = sum(theirs.values()) / len(theirs), sum(none.values()) / len(none)
    text = f"; reliance on the tag {label(other)} {a:+.3f}, No XS {b:+.3f}"
    if b > MARGIN and not clearly_less(a, b):
        text += (f": at its chosen λ {label(other)} kept the network on the tag as No XS did, "
                 "so this win is over a comparator that changed little")
    return text


def _a(name: str) -> str:
    """``"an RRR"``, ``"a TAP"``: the article as the abbreviation is read out (R as "ar")."""
    return f"{'an' if name[:1] in 'AEFHILMNORSX' else 'a'} {name}"


def _judged_runs(claim: str, where: str, evidence: str, data: Mapping[str, str],
                 origins: Mapping[str, DataOrigin | None], seeds: int,
                 results: Sequence[str], why: Sequence[str] = (), open_parts: str = "") -> Claim:
    """A claim on per-run tables: the cells' verdicts combined (:func:`.claims.combined`: any
    not reproduced, not reproduced; all reproduced, reproduced; else inconclusive); *not
    testable here* when no cell could be judged (``why``: each cell's reason) or the table does
    not record whether its data are the paper's; *not run* when no cell measured it. Judged on
    the digits stand-in too and labelled so (``standin``): a verdict on the stand-in says what
    these networks did on it, not what they do on PNEU/KNEE. ``open_parts``: where a claim has
    several parts, the ones that kept it from being reproduced, its reason."""
    data_text = "; ".join(f"{k.upper()}: {v}" for k, v in data.items()) or "unknown"
    standin = DataOrigin.STANDIN in origins.values()
    seeds_text = f"{seeds} seed{'s' if seeds != 1 else ''}"
    prefix = "On the digits stand-in, not PNEU/KNEE: " if standin else ""
    if None in origins.values():
        return Claim(claim, where, evidence, seeds_text, data_text, NOT_TESTABLE, standin,
                     "its table does not record whether its data are the paper's (rebuild it)")
    if results:  # open_parts: for a claim of several parts, the ones that did not reproduce
        verdict = combined(list(results))
        return Claim(claim, where, prefix + evidence, seeds_text, data_text, verdict,
                     standin=standin, reason=open_parts if verdict != REPRODUCED else "")
    if why:
        return Claim(claim, where, prefix + evidence, seeds_text, data_text, NOT_TESTABLE,
                     standin, "; ".join(why))
    return Claim(claim, where, evidence, seeds_text, data_text, NOT_RUN, standin,
                 "no cell of this build trained what it compares")

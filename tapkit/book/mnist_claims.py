"""The Decoy-MNIST claims (the paper's Setting 1 and its κ): No XS learns the decoy, an XS
method protects the two-layer CNN from it, each model is insensitive to it, TAP matches RRR and RBR.

Each compares methods as a paired difference over the seeds where every run learned the task and
No XS took the decoy (:data:`.thresholds.DECOY_TAKEN`); the verdict rules are :mod:`.claims`'.
"""

from __future__ import annotations

import pandas as pd

from ..methods import comparators, get_method, no_xs, proposed_method
from ..seedstats import Estimate, mean_ci, paired_difference
from .claims import (ACCURACY, NOT_REPRODUCED, NOT_RUN, NOT_TESTABLE, Claim, combined, every_part,
                     few_reason, keeps_verdict, on_seeds, per_seed, untestable, within_verdict)
from .labels import label
from .preconditions import judged_seeds
from .thresholds import DECOY_TAKEN, MARGIN


def _delta(frame: pd.DataFrame) -> pd.Series:
    return frame["permuted"] - frame["contaminated"]


def _permuted(frame: pd.DataFrame) -> pd.Series:
    return frame["permuted"]


def _seeds(e: Estimate) -> str:
    return f"{e.n} seed{'s' if e.n != 1 else ''}"


def decoy_claim(runs: pd.DataFrame, data: str) -> Claim:
    """No XS learns the decoy: its accuracy falls when the decoy is permuted (Δ < 0 over the
    seeds where No XS learned the task; inconclusive when the interval reaches 0)."""
    claim, where = "No XS learns the decoy on MNIST", "Results, Fig. MNIST; App. Table gt_mnist"
    if (gone := _absence(runs, [no_xs()])):  # none ran (not run), or every one failed
        return Claim(claim, where, gone, "0 seeds", data,
                     NOT_RUN if gone.endswith("not run") else NOT_TESTABLE, reason=gone)
    seeds = judged_seeds(runs, -_delta(runs), [no_xs()], ACCURACY, shortcut=False)
    d = _delta_on(runs, no_xs(), seeds)
    evidence = f"No XS Δ-accuracy (permuted − contaminated) {d.text()}" + seeds.note("No XS")
    if len(seeds.kept) < 2:
        return untestable(claim, where, evidence, _seeds(d), data, few_reason(seeds))
    return Claim(claim, where, evidence, _seeds(d), data,
                 keeps_verdict(d.lo, d.hi, 0.0, higher_is_better=False))


def _delta_on(runs: pd.DataFrame, case: str, seeds) -> Estimate:
    """``case``'s Δ-accuracy (permuted − contaminated) over the seeds a claim kept (``seeds``:
    :func:`.preconditions.judged_seeds`), or over every converged one where it kept none, for
    the evidence of a claim then left unjudged."""
    every = per_seed(runs, case, _delta(runs))
    return mean_ci((on_seeds(every, seeds.kept) or every).values(), bounds=ACCURACY.range(1))


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
    if (absent := _absent_claim(runs, method, claim, data)):
        return absent
    seeds = _mnist_comparison(runs, [method, no_xs()])
    permuted = _permuted(runs)
    a, b = per_seed(runs, method, permuted), per_seed(runs, no_xs(), permuted)
    kept = on_seeds(a, seeds.kept)
    diff = paired_difference(kept or a, b, bounds=ACCURACY.range(1))
    evidence = (f"permuted accuracy, {name} − No XS (paired): {diff.text()}"
                + seeds.note("MNIST"))
    if len(seeds.kept) < 2:
        return untestable(claim, "Results, Fig. MNIST", evidence, _seeds(diff), data,
                          few_reason(seeds))
    return Claim(claim, "Results, Fig. MNIST", evidence, _seeds(diff), data,
                 keeps_verdict(diff.lo, diff.hi, 0.0))


def insensitive_claim(runs: pd.DataFrame, data: str, case: str) -> Claim:
    """``case`` (Base, or an XS method) is insensitive to the decoy (Results: "the Base model and
    the models trained with XS losses are insensitive to the spurious signals"; the paper's
    Δ-accuracy −0.001 to −0.010, No XS's −0.176): its accuracy falls by at most
    :data:`.thresholds.MARGIN` when the decoys are permuted, the Δ's interval wholly above
    −MARGIN (wholly below: not reproduced), on the seeds where it learned the task and No XS
    took the decoy. Beating No XS on permuted digits (:func:`removes_claim`) is not enough: a
    method that halves No XS's loss beats it and is still sensitive."""
    name = label(case)
    claim = f"{name} is insensitive to the decoy"
    if (absent := _absent_claim(runs, case, claim, data)):
        return absent
    seeds = _mnist_comparison(runs, [case, no_xs()])
    d = _delta_on(runs, case, seeds)
    evidence = (f"{name} Δ-accuracy (permuted − contaminated) {d.text()}, within {MARGIN:g}"
                + seeds.note("MNIST"))
    if len(seeds.kept) < 2:
        return untestable(claim, "Results, Fig. MNIST", evidence, _seeds(d), data,
                          f"{name}: {few_reason(seeds)}")
    return Claim(claim, "Results, Fig. MNIST", evidence, _seeds(d), data,
                 keeps_verdict(d.lo, d.hi, -MARGIN))


def _absent_claim(runs: pd.DataFrame, case: str, claim: str, data: str) -> Claim | None:
    """``claim`` about ``case`` against No XS, *not run* where one of them never ran and *not
    testable here* where its runs all failed (:func:`_absence`); None where both converged."""
    if not (gone := _absence(runs, [case, no_xs()])):
        return None
    kind = NOT_RUN if "not run" in gone else NOT_TESTABLE
    return Claim(claim, "Results, Fig. MNIST", gone, "0 seeds", data, kind, reason=gone)


def _absence(runs: pd.DataFrame, cases: list[str]) -> str:
    """Why ``cases`` cannot be compared, in words that keep apart a case that never ran ("RBR
    not run") and one whose runs all failed ("no converged RBR run"); "" when all converged."""
    ok, ran = set(runs.loc[runs["status"] == "ok", "case"]), set(runs["case"])
    return "; ".join(f"{label(c)} not run" if c not in ran else f"no converged {label(c)} run"
                     for c in cases if c not in ok)


def matches_claim(runs: pd.DataFrame, data: str, other: str | None = None,
                  method: str | None = None) -> Claim:
    """TAP (``method``; None: the paper's own) matches RRR/RBR (``other``; None: the first
    comparator, :func:`tapkit.methods.comparators`) on MNIST: its permuted accuracy, and its
    Δ-accuracy (permuted − contaminated: the claims table's test names both), is each not worse
    than ``other``'s by more than :data:`MARGIN` (the paired difference's interval lies above
    −MARGIN; wholly below it: not reproduced; across it: inconclusive), on the seeds where every
    run learned the task and No XS took the decoy (:func:`.claims.every_part`)."""
    method, other = method or proposed_method(), other or comparators()[0]
    claim = f"{label(method)} matches {label(other)} on MNIST (within {MARGIN:g} accuracy)"
    where = "App. gt_mnist: \"TAP ... still matches RRR and RBR very closely\""
    # the claims table's test: permuted accuracy and Δ-accuracy, each within MARGIN of other's
    parts = [_paired_claim(frame, data, f"{split} accuracy within {MARGIN:g}", where, method,
                           (other,), split, lambda lo, hi: keeps_verdict(lo, hi, -MARGIN))
             for frame, split in ((runs, "permuted"), (runs.assign(**{"Δ": _delta(runs)}), "Δ"))]
    return every_part(claim, parts)


def close_claim(runs: pd.DataFrame, data: str, method: str | None = None,
                *others: str) -> Claim:
    """On MNIST's contaminated digits the XS losses score alike (the paper: "at first glance,
    the different losses result in very similar performances", RRR 0.987, RBR 0.992, TAP
    0.983): ``method``'s contaminated accuracy (None: the paper's own) lies within
    :data:`MARGIN` of each of ``others`` (None: the comparators), as a paired difference over
    the seeds where every run learned the task and No XS took the decoy
    (:func:`within_verdict`), and each comparator of each other ("the spread among the three").
    A comparator trained on fewer than two such seeds is shown and judges nothing."""
    method = method or proposed_method()
    others = others or tuple(comparators())
    claim = (f"{' and '.join(map(label, (method, *others)))} score alike on contaminated digits "
             f"(within {MARGIN:g} accuracy)")
    where, alike = "Results, Fig. MNIST; App. gt_mnist", lambda lo, hi: within_verdict(lo, hi, MARGIN)
    first = _paired_claim(runs, data, f"{label(method)} alike with the others", where, method,
                          others, "contaminated", alike, every=True)
    # "the different losses": the comparators with each other too (the test's "spread among
    # the three")
    rest = [_paired_claim(runs, data, f"{label(a)} alike with {label(b)}", where, a, (b,),
                          "contaminated", alike, every=True)
            for i, a in enumerate(others) for b in others[i + 1:]]
    return every_part(claim, [first, *rest])


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
    such seeds, and :func:`combined` joins them. ``every``: a claim about all of ``others``
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
            notes.append(f"{label(other)}: {few_reason(seeds)}")
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
    joined = combined(verdicts)
    if every and notes and joined != NOT_REPRODUCED:
        kind = NOT_RUN if all(note.endswith("not run") for note in notes) else NOT_TESTABLE
        return Claim(claim, where, evidence + aside, n, data, kind, reason="; ".join(notes))
    return Claim(claim, where, evidence + aside, n, data, joined)


def kappa_case(kernel_size: float) -> str:
    """The name a κ-ablation run is compared under: ``"κ = 3"``."""
    return f"κ = {int(kernel_size)}"


def kappa_claim(runs: pd.DataFrame, data: str, method: str | None = None) -> Claim:
    """The method section's κ (l.209: "a choice of κ = 3 ... a good balance between capturing
    the influence of targeted pixels and preventing over-regularisation"; the paper reports no
    ablation). Too small a κ leaves the pixels next to the patch unpenalised, through which the
    tag still reaches the activations; too large a one penalises the digit as well: either
    lowers the accuracy on permuted digits. Reproduced when ``method``'s (None: the paper's own)
    permuted accuracy and Δ-accuracy (the claims table's test names both) with the paper's κ
    (its options' default) are each not worse than with each other κ of the ablation by more
    than :data:`MARGIN` (each paired difference's interval above
    −MARGIN, :func:`keeps_verdict`); not reproduced when one lies wholly below; each difference
    on the seeds where both κ's runs learned the task and No XS took the decoy, as every MNIST
    paired claim (:func:`_paired_claim`; each κ is needed). ``runs``: the κ ablation's per-run
    table (``case``, ``kernel_size``, ``seed``, ``status`` and the splits;
    :func:`tapkit.experiments.plans.kappa_configs`)."""
    method = method or proposed_method()
    paper = get_method(method).make_options(None).kernel_size
    own = kappa_case(paper)
    claim = (f"{own} serves {label(method)} at least as well as the other κ on permuted digits "
             f"(within {MARGIN:g} accuracy)")
    where = "Method, Eq. 7 (l.209)"
    keyed = runs.assign(case=[kappa_case(k) if c == method else c
                              for c, k in zip(runs["case"], runs["kernel_size"])])
    others = tuple(kappa_case(k) for k in sorted({int(k) for k in runs.loc[
        runs["case"] == method, "kernel_size"]}) if k != paper)
    if not others:
        gone = "no κ beside the paper's ran"
        return Claim(claim, where, gone, "0 seeds", data, NOT_RUN, reason=gone)
    # the claims table's test: the permuted metric and Δ, κ = 3 no worse on either
    return every_part(claim, [
        _paired_claim(frame, data, f"{split} accuracy within {MARGIN:g}", where, own, others,
                      split, lambda lo, hi: keeps_verdict(lo, hi, -MARGIN), every=True)
        for frame, split in ((keyed, "permuted"), (keyed.assign(**{"Δ": _delta(keyed)}), "Δ"))])

"""The claims of the paper about deep CNNs on PNEU and KNEE, judged as :mod:`.claims` judges the
MNIST ones. Setting 1's claims (TAP keeps deep CNNs off the tag; RRR/RBR let it re-emerge on some
architectures; TAP matches RRR at a fraction of its cost) read the per-run tables
``<experiment>_gt_runs`` and judge paired differences over seeds; they are judged on the digits
stand-in too when it trained several seeds, labelled as the stand-in's. Setting 2's (teacher
annotations and students) read summary tables (each split's mean and std over seeds) and need the
paper's data. Whether a table is on the paper's data is its provenance's typed ``origin``
(:class:`.origin.DataOrigin`); each method's evidence is its reliance on the tag
(:func:`tapkit.metrics.tag_reliance`: what the metric worsens by when the tag is swapped, positive
when the model uses it), judged against :mod:`.thresholds`."""

from __future__ import annotations

from typing import Callable, Iterator, Mapping, Sequence

import pandas as pd

from ..experiments.cells import Annotation
from ..metrics import tag_reliance, task_metric
from ..experiments.plans import LEARNED_SHARE, learned_share
from ..seedstats import Estimate, from_summary, mean_ci, paired_difference
from .claims import NOT_REPRODUCED, NOT_RUN, REPRODUCED, Claim, per_seed
from .medical_notes import ARCH_LABELS
from .origin import DataOrigin
from .thresholds import MARGIN, keeps_off, relies

RELIANCE = "reliance on the tag (metric lost when the tag is swapped, > 0 uses it)"


def _reliances(frame: pd.DataFrame, experiment: str,
               row: str = "case") -> list[tuple[str, str, Estimate]]:
    """``(model, row, reliance)`` of a medical summary table, in its order, per model and its
    ``row`` column (Setting 1's ``case``, Setting 2's ``annotation``): the reliance of
    :func:`tapkit.metrics.tag_reliance` from the means of the contaminated and swapped splits,
    with its std taken as √(σ_permuted² + σ_contaminated²), which ignores their covariance over
    seeds (wider than the paired interval when, as usual, the two splits rise and fall
    together)."""
    metric = task_metric(experiment)
    out = []
    for (model, case), grp in frame.groupby(["model", row], sort=False):
        rows = grp.set_index("split")
        if {"contaminated", "permuted"} <= set(rows.index):
            r = tag_reliance(rows.loc["contaminated", "mean"], rows.loc["permuted", "mean"], metric)
            sd = (rows.loc["permuted", "std"] ** 2 + rows.loc["contaminated", "std"] ** 2) ** 0.5
            out.append((model, case, from_summary(r, sd, int(rows["count"].min()))))
    return out


def cells(runs: Mapping[str, pd.DataFrame]) -> Iterator[tuple[str, str, pd.DataFrame, pd.Series]]:
    """``(experiment, model, rows, reliance per row)`` of per-run tables (``<experiment>_gt_runs``:
    model, case, seed, status and the three splits), in their order."""
    for exp, frame in runs.items():
        rel = tag_reliance(frame["contaminated"], frame["permuted"], task_metric(exp))
        for model, rows in frame.groupby("model", sort=False):
            yield exp, model, rows, rel[rows.index]


def _name(exp: str, model: str) -> str:
    return f"{exp.upper()} {ARCH_LABELS.get(model, model)}"


def keeps_off_claim(runs: Mapping[str, pd.DataFrame], data: Mapping[str, str],
                    origins: Mapping[str, DataOrigin | None]) -> Claim:
    """TAP keeps deep CNNs off the tag (Results, Figs. PNEU/KNEE). Judged on each data set and
    architecture where No XS relies on the tag over its seeds (:func:`.thresholds.relies`): TAP
    may ignore it (:func:`.thresholds.keeps_off`), is clearly less reliant than No XS in the
    paired difference over seeds (its interval above :data:`.thresholds.MARGIN`), and still
    learned the task (its mean clean score at least :data:`~tapkit.experiments.plans.LEARNED_SHARE`
    of the way from a constant prediction's to perfect). Where No XS did not rely on the tag
    there is nothing to keep off: such cells are shown, not judged."""
    claim, parts, results, n_min = "TAP keeps deep CNNs off the tag", [], [], None
    for exp, model, rows, rel in cells(runs):
        none, tap = per_seed(rows, "none", rel), per_seed(rows, "tap", rel)
        if len(set(none) & set(tap)) < 2:
            continue
        n_e, t_e, d = mean_ci(list(none.values())), mean_ci(list(tap.values())), \
            paired_difference(none, tap)
        n_min = d.n if n_min is None else min(n_min, d.n)
        tap_rows = rows[(rows["case"] == "tap") & (rows["status"] == "ok")]
        share = learned_share(tap_rows.assign(val_clean=tap_rows["clean"],
                                              metric=task_metric(exp).name)).mean()
        text = (f"{_name(exp, model)}: No XS {n_e.text()}, TAP {t_e.text()}, paired No XS − TAP "
                f"{d.text()}, TAP clean {tap_rows['clean'].mean():.3f}")
        if not relies(n_e):
            parts.append(text + " (No XS did not rely on the tag: not judged)")
            continue
        ok = keeps_off(t_e) and d.lo > MARGIN and share >= LEARNED_SHARE
        results.append(ok)
        parts.append(text + ("" if ok else " — not kept off" if share >= LEARNED_SHARE
                             else " — TAP did not learn the task"))
    evidence = f"{RELIANCE} — " + ("; ".join(parts) or "no architecture with No XS and TAP on "
                                   "two or more seeds in this build")
    if parts and not results:
        evidence += " (no architecture where No XS relied on the tag: nothing to judge)"
    return _judged_runs(claim, "Results, Figs. PNEU/KNEE", evidence, data, origins,
                        n_min or 0, results)


def reemerge_claim(runs: Mapping[str, pd.DataFrame], data: Mapping[str, str],
                   origins: Mapping[str, DataOrigin | None]) -> Claim:
    """RRR/RBR let the tag re-emerge on some architectures (Results: the paper's DenseNet-121
    RRR): reproduced when on some data set and architecture an RRR or RBR model relies on the
    tag over its seeds (:func:`.thresholds.relies`), not reproduced when every one trained may
    ignore it. Architectures without RRR/RBR runs are named."""
    claim, parts, results, n_min, without = ("RRR/RBR let the tag re-emerge on some "
                                             "architectures"), [], [], None, []
    for exp, model, rows, rel in cells(runs):
        found = False
        for method in ("rrr", "rbr"):
            by_seed = per_seed(rows, method, rel)
            if len(by_seed) < 2:
                continue
            found, e = True, mean_ci(list(by_seed.values()))
            n_min = e.n if n_min is None else min(n_min, e.n)
            results.append(relies(e))
            parts.append(f"{_name(exp, model)} {method.upper()} {e.text()}"
                         + (" — relies on the tag" if relies(e) else ""))
        if not found:
            without.append(_name(exp, model))
    evidence = f"{RELIANCE} — " + ("; ".join(parts) or "no RRR/RBR run on two or more seeds")
    if without:
        evidence += f"; no RRR/RBR on two or more seeds: {', '.join(without)}"
    return _judged_runs(claim, "Results, Figs. PNEU/KNEE (DenseNet-121 RRR)", evidence, data,
                        origins, n_min or 0, [any(results)] if results else [])


def matches_rrr_claim(runs: Mapping[str, pd.DataFrame], ratios: pd.DataFrame | None,
                      data: Mapping[str, str], origins: Mapping[str, DataOrigin | None]) -> Claim:
    """TAP matches RRR at a fraction of its cost (Results; Table 1), on every data set and
    architecture that trained both on two or more seeds: the paired difference TAP − RRR of the
    permuted-tag test score (higher is better; MAE negated) lies above −:data:`.thresholds.MARGIN`
    (as "matches" on MNIST), and the same build's speed table (``ratios``: each method's
    training speed over No XS's, with intervals) has RRR clearly slower than TAP on that
    architecture (RRR's interval below TAP's). The cost is TAP's step time as a share of
    RRR's."""
    claim, parts, results, n_min = "TAP matches RRR at a fraction of its cost", [], [], None
    speed = ({} if ratios is None else
             {(r.model, r.method): r for r in ratios.itertuples()})
    for exp, model, rows, _ in cells(runs):
        sign = 1.0 if task_metric(exp).higher_is_better else -1.0
        score = rows["permuted"] * sign
        tap, rrr = per_seed(rows, "tap", score), per_seed(rows, "rrr", score)
        if len(set(tap) & set(rrr)) < 2:
            continue
        d = paired_difference(tap, rrr)
        n_min = d.n if n_min is None else min(n_min, d.n)
        t, r = speed.get((model, "tap")), speed.get((model, "rrr"))
        if t is None or r is None:
            parts.append(f"{_name(exp, model)}: permuted score, TAP − RRR (paired) {d.text()}; "
                         "no speed measured for this architecture in this build")
            results.append(False)
            continue
        cheaper = r.speed_ratio_hi < t.speed_ratio_lo
        ok = d.lo > -MARGIN and cheaper
        results.append(ok)
        parts.append(f"{_name(exp, model)}: permuted score, TAP − RRR (paired) {d.text()}; a TAP "
                     f"step costs {r.speed_ratio / t.speed_ratio:.2f} of an RRR step (speed vs "
                     f"No XS: TAP ×{t.speed_ratio:.2f}, RRR ×{r.speed_ratio:.2f})"
                     + ("" if ok else f" — not matched (the interval reaches below −{MARGIN:g})"
                        if not d.lo > -MARGIN else
                        " — not clearly cheaper"))
    evidence = "; ".join(parts) or "no architecture with TAP and RRR on two or more seeds"
    if ratios is None:
        evidence += " (the speed chapter did not run in this build)"
    return _judged_runs(claim, "Results; Table 1", evidence, data, origins, n_min or 0,
                        results if ratios is not None else [])


def _judged_runs(claim: str, where: str, evidence: str, data: Mapping[str, str],
                 origins: Mapping[str, DataOrigin | None], seeds: int,
                 results: Sequence[bool]) -> Claim:
    """A claim on per-run tables: reproduced when every judged cell holds (``results``), not
    reproduced when one does not; ``not run here`` with no judged cell, fewer than two seeds,
    or a table that does not record whether its data are the paper's. Judged on the digits
    stand-in too, with three or more seeds as its chapters train, and labelled so
    (``standin``): a verdict on the stand-in says what these networks did on it, not what they
    do on PNEU/KNEE."""
    data_text = "; ".join(f"{k.upper()}: {v}" for k, v in data.items()) or "unknown"
    standin = DataOrigin.STANDIN in origins.values()
    seeds_text = f"{seeds} seed{'s' if seeds != 1 else ''}"
    if None in origins.values():
        why = "its table does not record whether its data are the paper's (rebuild it)"
    elif seeds < 2:
        why = "fewer than two seeds"
    elif not results:
        why = "nothing to judge"
    else:
        prefix = "On the digits stand-in, not PNEU/KNEE: " if standin else ""
        return Claim(claim, where, prefix + evidence, seeds_text, data_text,
                     REPRODUCED if all(results) else NOT_REPRODUCED, standin=standin)
    return Claim(claim, where, evidence + f" (not judged: {why})", seeds_text, data_text,
                 NOT_RUN)  # why it was not judged is ``why``, never the stand-in


def annotation_claim(quality: pd.DataFrame, meta: Mapping) -> Claim:
    """Teacher annotations find the tags better than random masks on PNEU/KNEE: every teacher's
    pixel precision at every τ above the tags' coverage (what any random mask scores). Judged on
    the paper's data with several seeds only."""
    claim = "Teacher annotations mark the tags better than random masks (PNEU/KNEE)"
    lift = quality["precision"] / quality["tag_coverage"]
    parts = [f"{e.upper()}: precision {g.precision.min():.1%}–{g.precision.max():.1%} vs random "
             f"{g.tag_coverage.iloc[0]:.1%}" for e, g in quality.groupby("experiment", sort=False)]
    evidence = "; ".join(parts) + f" (lift {lift.min():.2f}–{lift.max():.2f}× random)"
    return _medical_verdict(claim, "Setting 2, Fig. overlap", evidence, meta,
                            lambda: lift.min() > 1)


def medical_teacher_claim(summary: pd.DataFrame, meta: Mapping) -> Claim:
    """On PNEU, TAP with either teacher's masks keeps the student off the tag: at τ = 0.01 each
    teacher student keeps off the tag while No XS relies on it (:mod:`.thresholds`). Judged on
    the paper's data with several seeds only; KNEE's numbers are shown. ``summary``'s τ column
    holds numbers, NaN for the runs that take no τ (No XS)."""
    claim = "TAP with 10%- or 1%-teacher masks keeps deep CNNs off the tag on PNEU"
    parts, ok = [], True
    for exp in dict.fromkeys(summary["experiment"]):
        frame = summary[(summary["experiment"] == exp) & (summary["method"].isin(["tap", "none"]))
                        & _at_tau(summary["tau"], CLAIM_TAU)]
        cells = []
        for model, case, d in _reliances(frame, exp, "annotation"):  # one per (model, annotation)
            if case in (Annotation.TEACHER_10, Annotation.TEACHER_1, Annotation.NONE):
                cells.append(f"{model} {Annotation(case).value.replace('_', ' ')} {d.mean:+.3f}")
                if exp == "pneu":
                    ok = ok and (keeps_off(d) if case != Annotation.NONE else relies(d))
        parts.append(f"{exp.upper()}: " + ", ".join(cells))
    evidence = f"{RELIANCE} — " + "; ".join(parts)
    return _medical_verdict(claim, "Setting 2, Fig. ts", evidence, meta, lambda: ok)


CLAIM_TAU = 0.01   # the τ of the paper's teacher-student figure the claim reads


def _at_tau(tau: pd.Series, value: float) -> pd.Series:
    """Rows whose τ is ``value`` (compared as a number, so that ``0.010`` and ``1e-2`` match) or
    missing (a run that takes no τ: NaN, or a legacy table's ``"any"``)."""
    numbers = pd.to_numeric(tau, errors="coerce")
    return (numbers == value) | numbers.isna()


def _medical_verdict(claim: str, where: str, evidence: str, meta: Mapping,
                     holds: Callable[[], bool]) -> Claim:
    """:func:`_judged` with the data, origin and seeds a Setting-2 table's provenance records."""
    return _judged(claim, where, evidence, meta.get("data", {}), [DataOrigin.read(meta)],
                   len(meta.get("settings", {}).get("seeds", [])), holds)


def _judged(claim: str, where: str, evidence: str, data: Mapping[str, str],
            origins: Sequence[DataOrigin | None], seeds: int, holds: Callable[[], bool]) -> Claim:
    """A medical claim's row: ``not run here`` when a table is on the digits stand-in or does
    not record its data's origin, or with fewer than two seeds (saying why), else reproduced
    when ``holds()``. ``data`` names the data per experiment, for the row only."""
    data_text = "; ".join(f"{k.upper()}: {v}" for k, v in data.items()) or "unknown"
    why = (["the digits stand-in is not PNEU/KNEE"] if DataOrigin.STANDIN in origins else [])
    why += (["its table does not record whether its data are the paper's (rebuild it)"]
            if None in origins else [])
    why += ["one seed"] if seeds < 2 else []
    seeds_text = f"{seeds} seed{'s' if seeds != 1 else ''}"
    if why:
        return Claim(claim, where, evidence + f" (not judged: {', '.join(why)}; needs the paper "
                     "profile on the real data)", seeds_text, data_text, NOT_RUN,
                     standin=DataOrigin.STANDIN in origins)
    return Claim(claim, where, evidence, seeds_text, data_text,
                 REPRODUCED if holds() else NOT_REPRODUCED)

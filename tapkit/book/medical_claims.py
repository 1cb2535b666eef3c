"""The claims of the paper about deep CNNs on PNEU and KNEE, judged as :mod:`.claims` judges the
MNIST ones. Setting 1's claims (TAP keeps deep CNNs off the tag; RRR/RBR let it re-emerge on some
architectures; TAP matches RRR at a fraction of its cost) read the per-run tables
``<experiment>_gt_runs`` and judge paired differences over seeds; they are judged on the digits
stand-in too when it trained several seeds, labelled as the stand-in's. Setting 2's (teacher
annotations and students) read summary tables (each split's mean and std over seeds) and are
judged, on either data, only where the teachers' masks mark the tags better than random ones and
the students learned the task (:func:`weak_teachers`, :func:`unlearned_students`; issue 36).
Whether a table is on the paper's data is its provenance's typed ``origin``
(:class:`.origin.DataOrigin`); each method's evidence is its reliance on the tag
(:func:`tapkit.metrics.tag_reliance`: what the metric worsens by when the tag is swapped, positive
when the model uses it), judged against :mod:`.thresholds`."""

from __future__ import annotations

from typing import Callable, Iterator, Mapping, Sequence

import pandas as pd

from ..experiment_specs import get_experiment
from ..experiments.cells import Annotation
from ..methods import comparators, proposed_method
from ..metrics import tag_reliance, task_metric
from ..seedstats import Estimate, from_summary, mean_ci, paired_difference
from .claims import (INCONCLUSIVE, NOT_REPRODUCED, NOT_RUN, NOT_TESTABLE, REPRODUCED, Claim,
                     Verdict, _combined, _few_reason, keeps_verdict, on_seeds, per_seed,
                     within_verdict)
from .preconditions import judged_seeds, learned_share
from .labels import in_prose, label
from .medical_notes import constant_score
from .origin import DataOrigin
from .thresholds import (ALMOST_AS_GOOD, ANNOTATION_LIFT, CHANCE_RECALL, LEARNED,
                         LEARNED_SHARE, MARGIN, RECALL_MARGIN, THEOREM1_OVERLAP, clearly_less,
                         keeps_off, relies)

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
            out.append((model, case, from_summary(r, sd, int(rows["count"].min()),
                                                  bounds=metric.range(1))))
    return out


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


def keeps_off_claim(runs: Mapping[str, pd.DataFrame], data: Mapping[str, str],
                    origins: Mapping[str, DataOrigin | None], method: str | None = None) -> Claim:
    """TAP (``method``; None: the paper's own) keeps deep CNNs off the tag (Results, Figs.
    PNEU/KNEE). Judged per data set and architecture on the seeds where No XS took the tag and
    both No XS and TAP learned the task (:mod:`.preconditions`): TAP is clearly less reliant than
    No XS (the paired difference No XS − TAP against :data:`.thresholds.MARGIN`) and its own
    reliance stays below :data:`.thresholds.LEARNED`, each decided by its interval
    (:func:`.claims.keeps_verdict`). A cell with fewer than two such seeds is shown with why, not
    judged."""
    method = method or proposed_method()
    own = label(method)
    claim, parts, results, n_min, why = f"{own} keeps deep CNNs off the tag", [], [], None, []
    for exp, model, rows, rel in cells(runs):
        if not {"none", method} <= set(rows["case"]):
            continue
        metric = task_metric(exp)
        seeds = _cell_seeds(rows, rel, exp, ["none", method])
        none = on_seeds(per_seed(rows, "none", rel), seeds.kept)
        tap = on_seeds(per_seed(rows, method, rel), seeds.kept)
        name = _name(exp, model)
        if len(seeds.kept) < 2:
            parts.append(f"{name}: not testable{seeds.note(name)}")
            why.append(f"{name}: {_few_reason(seeds)}")
            continue
        n_e, t_e = (mean_ci(list(v.values()), bounds=metric.range(1)) for v in (none, tap))
        d = paired_difference(none, tap, bounds=metric.range(2))
        n_min = d.n if n_min is None else min(n_min, d.n)
        verdict = _combined([keeps_verdict(d.lo, d.hi, MARGIN),
                             keeps_verdict(t_e.lo, t_e.hi, LEARNED, higher_is_better=False)])
        results.append(verdict)
        parts.append(f"{name}: No XS {n_e.text()}, {own} {t_e.text()}, paired No XS − {own} "
                     f"{d.text()} — {verdict}{seeds.note(name)}")
    evidence = f"{RELIANCE} — " + ("; ".join(parts) or f"no architecture with No XS and {own}")
    return _judged_runs(claim, "Results, Figs. PNEU/KNEE", evidence, data, origins,
                        n_min or 0, results, why)


PAPER_REEMERGENCE = "the paper's cases: PNEU DenseNet-121 RRR F1 0.994 → 0.429, VGG-16 RBR 0.974 → 0.825"


def no_xs_relies_claim(runs: Mapping[str, pd.DataFrame], data: Mapping[str, str],
                       origins: Mapping[str, DataOrigin | None]) -> Claim:
    """No XS relies on the tag (Results: its score "plummets" when the tags are swapped), per
    data set and architecture, on the seeds where No XS learned the task: its reliance interval
    wholly above :data:`.thresholds.LEARNED` holds, wholly below it fails, across it is
    inconclusive; the cells' verdicts combined."""
    claim, parts, results, n_min, why = "No XS relies on the tag", [], [], None, []
    for exp, model, rows, rel in cells(runs):
        if "none" not in set(rows["case"]):
            continue
        name = _name(exp, model)
        seeds = judged_seeds(rows, rel, ["none"], task_metric(exp), shortcut=False)
        if len(seeds.kept) < 2:
            parts.append(f"{name}: not testable{seeds.note(name)}")
            why.append(f"{name}: {_few_reason(seeds)}")
            continue
        e = mean_ci(list(on_seeds(per_seed(rows, "none", rel), seeds.kept).values()),
                    bounds=task_metric(exp).range(1))
        n_min = e.n if n_min is None else min(n_min, e.n)
        verdict = keeps_verdict(e.lo, e.hi, LEARNED)
        results.append(verdict)
        parts.append(f"{name}: No XS {e.text()} — {verdict}{seeds.note(name)}")
    evidence = f"{RELIANCE} — " + ("; ".join(parts) or "no No XS run")
    return _judged_runs(claim, "Results, Figs. PNEU/KNEE", evidence, data, origins,
                        n_min or 0, results, why)


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
                   methods: Sequence[str] | None = None) -> Claim:
    """RRR/RBR (``methods``; None: the comparators, :func:`tapkit.methods.comparators`) let the
    tag re-emerge on some architectures (Results: the paper's DenseNet-121 RRR). Per data set,
    architecture and method, on the seeds where No XS took the tag and both learned the task:
    the method's reliance interval wholly above :data:`.thresholds.MARGIN` re-emerges, wholly
    below it does not, across it is inconclusive. Reproduced when some cell re-emerges, not
    reproduced when every judged cell does not, else inconclusive. Architectures without RRR/RBR
    runs are named."""
    methods = list(comparators() if methods is None else methods)
    named = "/".join(label(m) for m in methods)
    claim = named + " let the tag re-emerge on some architectures"
    parts, results, n_min, without, why = [], [], None, [], []
    for exp, model, rows, rel in cells(runs):
        found = False
        for method in methods:
            if method not in set(rows["case"]):
                continue
            found, name = True, f"{_name(exp, model)} {label(method)}"
            seeds = _cell_seeds(rows, rel, exp, ["none", method])
            if len(seeds.kept) < 2:
                parts.append(f"{name}: not testable{seeds.note(name)}")
                why.append(f"{name}: {_few_reason(seeds)}")
                continue
            e = mean_ci(list(on_seeds(per_seed(rows, method, rel), seeds.kept).values()),
                        bounds=task_metric(exp).range(1))
            n_min = e.n if n_min is None else min(n_min, e.n)
            verdict = keeps_verdict(e.lo, e.hi, MARGIN)
            results.append(verdict)
            parts.append(f"{name} {e.text()}" + (" — relies on the tag" if verdict == REPRODUCED
                                                  else "") + seeds.note(name))
        if not found:
            without.append(_name(exp, model))
    evidence = f"{RELIANCE} — " + ("; ".join(parts) or f"no {named} run")
    if without:
        evidence += f"; no {named} run: {', '.join(without)}"
    if "pneu" in runs:  # the paper's own cases are on PNEU; on KNEE they would mislead
        evidence += f" ({PAPER_REEMERGENCE})"
    some = _in_some_cell(results)
    return _judged_runs(claim, "Results, Figs. PNEU/KNEE (DenseNet-121 RRR)", evidence, data,
                        origins, n_min or 0, some, why)


def _recall_cells(overlap: pd.DataFrame, runs: Mapping[str, pd.DataFrame],
                  layers: Sequence[str], lower: str, higher: str, metric: str = "recall"):
    """``(name, seeds, per-seed recall of higher, of lower)`` per data set and architecture with
    both methods' maps: the mean top-quartile recall of the tags over ``layers`` (the overlap
    chapter's per-run table; ``metric`` "precision": its precision), on the seeds where No XS
    took the tag and both learned the task."""
    recall = overlap[(overlap["metric"] == metric) & overlap["layer"].isin(list(layers))]
    by_run = recall.groupby(["dataset", "model", "case", "seed"])["value"].mean()
    seeds_of: dict[tuple, dict[int, float]] = {}  # (dataset, model, case) -> {seed: recall}
    for (dataset, model, case, seed), value in by_run.items():
        seeds_of.setdefault((dataset, model, case), {})[int(seed)] = float(value)
    for exp, model, rows, rel in cells(runs):
        paper_name = get_experiment(exp).paper_name
        if not any(k[:2] == (paper_name, model) for k in seeds_of):
            continue
        seeds = _cell_seeds(rows, rel, exp, list(dict.fromkeys(["none", lower, higher])))
        per = [{seed: v for seed, v in seeds_of.get((paper_name, model, case), {}).items()
                if seed in seeds.kept}
               for case in (higher, lower)]
        if all(per):
            yield _name(exp, model), seeds, per[0], per[1]


def _recall_gap(overlap, runs, layers, lower: str, higher: str):
    """Each cell's evidence and verdict: the paired difference ``higher`` − ``lower`` of the
    recall over ``layers``, wholly above :data:`.thresholds.RECALL_MARGIN` reproduced, wholly
    below it not reproduced, across it inconclusive; ``(parts, verdicts, fewest seeds, why)``."""
    parts, results, n_min, why = [], [], None, []
    for name, seeds, high, low in _recall_cells(overlap, runs, layers, lower, higher):
        if min(len(high), len(low)) < 2:
            parts.append(f"{name}: not testable{seeds.note(name)}")
            why.append(f"{name}: {_few_reason(seeds)}")
            continue
        high_e, low_e = (mean_ci(list(v.values()), bounds=(0.0, 1.0)) for v in (high, low))
        d = paired_difference(high, low, bounds=(-1.0, 1.0))
        n_min = d.n if n_min is None else min(n_min, d.n)
        verdict = keeps_verdict(d.lo, d.hi, RECALL_MARGIN)
        results.append(verdict)
        parts.append(f"{name}: {label(higher)} {high_e.text(2)}, {label(lower)} {low_e.text(2)}, "
                     f"paired {label(higher)} − {label(lower)} {d.text(2)} — {verdict}"
                     f"{seeds.note(name)}")
    return parts, results, n_min, why


def _layers_text(layers: Sequence[str]) -> str:
    return ("input gradients" if list(layers) == ["ig"] else
            "penalised layers' activations" if len(layers) > 1 else
            f"last penalised layer's activations ({layers[0].replace('act', 'Act ')})")


def suppresses_claim(overlap: pd.DataFrame, runs: Mapping[str, pd.DataFrame],
                     data: Mapping[str, str], origins: Mapping[str, DataOrigin | None],
                     layers: Sequence[str], method: str | None = None) -> Claim:
    """TAP (``method``; None: the paper's own) suppresses the tags in the top quartiles of
    ``layers`` (the appendix's overlap tables: ``ig``, the input gradient, or ``act1``–``act4``,
    the penalised layers; their mean recall per run). ``overlap``: the overlap chapter's per-run
    table (dataset, model, case, seed, layer, metric, value). Per data set and architecture, on
    the seeds where No XS took the tag and both learned the task (the per-run tables ``runs``,
    :mod:`.preconditions`), the paired difference No XS − TAP of that recall against
    :data:`.thresholds.RECALL_MARGIN` (:func:`_recall_gap`); the cells combined."""
    method = method or proposed_method()
    own, shown = label(method), _layers_text(layers)
    parts, results, n_min, why = _recall_gap(overlap, runs, layers, method, "none")
    evidence = (f"top-quartile recall of the tags in the {shown} (chance {CHANCE_RECALL:g}) — "
                + ("; ".join(parts) or f"no architecture with No XS and {own} maps"))
    return _judged_runs(f"{own} suppresses the tags in the {shown}",
                        "App. overlap tables (l.591)", evidence, data, origins, n_min or 0,
                        results, why)


def ig_overlap_claim(overlap: pd.DataFrame, runs: Mapping[str, pd.DataFrame],
                     data: Mapping[str, str], origins: Mapping[str, DataOrigin | None],
                     method: str | None = None) -> Claim:
    """With TAP (``method``; None: the paper's own) less than
    :data:`.thresholds.THEOREM1_OVERLAP` of the top-quartile input gradients lie on the tags
    (the paper's sentence after Theorem 1; its overlap tables' IG precision 0.00-0.01): per data
    set and architecture, on the seeds where No XS took the tag and both learned the task, TAP's
    mean precision interval wholly below the bound reproduced, wholly above it not reproduced,
    across it inconclusive; No XS's beside it for contrast. The cells combined."""
    method = method or proposed_method()
    own = label(method)
    parts, results, n_min, why = [], [], None, []
    for name, seeds, none, tap in _recall_cells(overlap, runs, ("ig",), method, "none",
                                                "precision"):
        if len(tap) < 2:
            parts.append(f"{name}: not testable{seeds.note(name)}")
            why.append(f"{name}: {_few_reason(seeds)}")
            continue
        e = mean_ci(list(tap.values()), bounds=(0.0, 1.0))
        n_min = e.n if n_min is None else min(n_min, e.n)
        verdict = keeps_verdict(e.lo, e.hi, THEOREM1_OVERLAP, higher_is_better=False)
        results.append(verdict)
        parts.append(f"{name}: {own} {e.text(3)}, No XS "
                     f"{mean_ci(list(none.values()), bounds=(0.0, 1.0)).text(3)} — {verdict}"
                     + seeds.note(name))
    evidence = (f"share of the top-quartile input-gradient pixels on the tags (precision; the "
                f"paper's bound {THEOREM1_OVERLAP:g}) — "
                + ("; ".join(parts) or f"no architecture with No XS and {own} maps"))
    return _judged_runs(f"Under {own}, less than {THEOREM1_OVERLAP:.0%} of the top-quartile "
                        "input gradients lie on the tags", "after Theorem 1 (l.266)", evidence,
                        data, origins, n_min or 0, results, why)


def reemerges_in_layers_claim(overlap: pd.DataFrame, runs: Mapping[str, pd.DataFrame],
                              data: Mapping[str, str], origins: Mapping[str, DataOrigin | None],
                              methods: Sequence[str] | None = None,
                              layers: Sequence[str] = ("act4",)) -> Claim:
    """RRR/RBR (``methods``; None: the comparators) let the tags re-emerge in the deeper
    layers where TAP keeps them out (Fig. 1; the appendix's overlap tables: the paper's PNEU
    ResNet-18 Act 4 recall RRR 0.41, RBR 0.19, TAP 0.00): per data set, architecture and method,
    the paired difference method − TAP of the top-quartile recall of the tags in ``layers`` on
    the judged seeds (:func:`_recall_gap`). Reproduced when some cell re-emerges, not
    reproduced when every judged cell does not, else inconclusive."""
    methods = list(comparators() if methods is None else methods)
    own, named, shown = label(proposed_method()), "/".join(label(m) for m in methods), \
        _layers_text(layers)
    parts, results, n_min, why = [], [], None, []
    for method in methods:
        p, r, n, w = _recall_gap(overlap, runs, layers, proposed_method(), method)
        parts, results, why = parts + p, results + r, why + w
        n_min = n if n_min is None else (n_min if n is None else min(n_min, n))
    evidence = (f"top-quartile recall of the tags in the {shown} (chance {CHANCE_RECALL:g}) — "
                + ("; ".join(parts) or f"no architecture with {named} and {own} maps"))
    some = _in_some_cell(results)
    return _judged_runs(f"{named} let the tags re-emerge in the deeper layers where {own} does "
                        "not", "Fig. 1; App. overlap tables", evidence, data, origins,
                        n_min or 0, some, why)


def matches_at_cost_claim(runs: Mapping[str, pd.DataFrame], ratios: pd.DataFrame | None,
                          data: Mapping[str, str], origins: Mapping[str, DataOrigin | None],
                          method: str | None = None, other: str | None = None) -> Claim:
    """TAP (``method``; None: the paper's own) matches RRR (``other``; None: the first
    comparator, :func:`tapkit.methods.comparators`) at a fraction of its cost (Results; Table 1),
    on every data set and architecture that trained both, on the seeds where No XS took the tag
    and No XS, TAP and RRR learned the task: the paired difference TAP − RRR of the permuted-tag
    test score (higher is better; MAE negated) against −:data:`.thresholds.MARGIN` (as "matches"
    on MNIST), and the same build's speed table (``ratios``) has RRR clearly slower than TAP on
    that architecture (RRR's interval below TAP's). The cost is TAP's step time as a share of
    RRR's."""
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
        seeds = _cell_seeds(rows, rel, exp, ["none", method, other])
        if len(seeds.kept) < 2:
            parts.append(f"{name}: not testable{seeds.note(name)}")
            why.append(f"{name}: {_few_reason(seeds)}")
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
        verdict = _combined([keeps_verdict(d.lo, d.hi, -MARGIN), cheaper])
        results.append(verdict)
        parts.append(f"{name}: permuted score, {own} − {theirs} (paired) {d.text()}; {_a(own)} step "
                     f"costs {r.speed_ratio / t.speed_ratio:.2f} of {_a(theirs)} step (speed vs No "
                     f"XS: {own} ×{t.speed_ratio:.2f}, {theirs} ×{r.speed_ratio:.2f}) — {verdict}"
                     + _comparator_note(rows, rel, seeds.kept, other) + seeds.note(name))
    evidence = "; ".join(parts) or f"no architecture with {own} and {theirs}"
    if ratios is None and parts:
        results, why = [], ["the speed chapter did not run in this build: no cost to compare"]
    return _judged_runs(claim, "Results; Table 1", evidence, data, origins, n_min or 0,
                        results, why)


def _comparator_note(rows: pd.DataFrame, rel: pd.Series, kept: Sequence[int],
                     other: str) -> str:
    """What a "TAP beats RRR" verdict rests on, said where it matters: the comparator's mean
    reliance on the tag beside No XS's over the judged seeds, and, where the comparator's is not
    clearly less than No XS's (:func:`.thresholds.clearly_less`), that at its chosen λ it did not
    keep the network off the tag (a win over a comparator that changed little)."""
    theirs = on_seeds(per_seed(rows, other, rel), kept)
    none = on_seeds(per_seed(rows, "none", rel), kept)
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
                 results: Sequence[str], why: Sequence[str] = ()) -> Claim:
    """A claim on per-run tables: the cells' verdicts combined (:func:`.claims._combined`: any
    not reproduced, not reproduced; all reproduced, reproduced; else inconclusive); *not
    testable here* when no cell could be judged (``why``: each cell's reason) or the table does
    not record whether its data are the paper's; *not run* when no cell measured it. Judged on
    the digits stand-in too and labelled so (``standin``): a verdict on the stand-in says what
    these networks did on it, not what they do on PNEU/KNEE."""
    data_text = "; ".join(f"{k.upper()}: {v}" for k, v in data.items()) or "unknown"
    standin = DataOrigin.STANDIN in origins.values()
    seeds_text = f"{seeds} seed{'s' if seeds != 1 else ''}"
    prefix = "On the digits stand-in, not PNEU/KNEE: " if standin else ""
    if None in origins.values():
        return Claim(claim, where, evidence, seeds_text, data_text, NOT_TESTABLE, standin,
                     "its table does not record whether its data are the paper's (rebuild it)")
    if results:
        return Claim(claim, where, prefix + evidence, seeds_text, data_text,
                     _combined(list(results)), standin=standin)
    if why:
        return Claim(claim, where, prefix + evidence, seeds_text, data_text, NOT_TESTABLE,
                     standin, "; ".join(why))
    return Claim(claim, where, evidence, seeds_text, data_text, NOT_RUN, standin,
                 "no cell of this build trained what it compares")


def weak_teachers(quality: pd.DataFrame | None, tau: float) -> list[str]:
    """Setting 2's precondition (issue 36: teachers must mark the tag better than random before
    Setting 2 is judged): per data set, each teacher whose masks at the students' ``tau`` mark
    the tags less than :data:`.thresholds.ANNOTATION_LIFT` times as precisely as a random mask
    (whose precision is the tags' coverage), with why; ``[]`` when every teacher passes or
    ``quality`` (the teachers page's ``medical_annotation_quality``) was not measured. A student
    of such a teacher is penalised about as much off the tag as on it, so whether it keeps off
    the tag says nothing about teacher annotations."""
    if quality is None or quality.empty:
        return []
    at = quality[pd.to_numeric(quality["tau"], errors="coerce") == tau]
    out = []
    for e, part in at.groupby("experiment", sort=False):
        lifts = (part["precision"] / part["tag_coverage"]).groupby(part["annotator"],
                                                                   sort=False).max()
        weak = lifts[lifts < ANNOTATION_LIFT]
        if len(weak):
            names = " and ".join(f"the {label(a)}" for a in weak.index)
            out.append(f"{e.upper()}: the masks of {names} mark the tags no better than random "
                       "ones (precision "
                       + " and ".join(f"{v:.2f}×" for v in weak)
                       + f" a random mask's at τ {tau:g}, under {ANNOTATION_LIFT:g}×, "
                       "measured on the teachers page with why)")
    return out


def unlearned_students(summary: pd.DataFrame, experiment: str) -> list[str]:
    """The cells of a Setting-2 summary (``experiment``'s rows) whose mean score on the tagged
    test images they were trained for goes less than :data:`.thresholds.LEARNED_SHARE` of the way
    from a constant prediction's (:func:`.medical_notes.constant_score`) to perfect: a student
    that predicts about a constant loses nothing when the tags are swapped, which is no sign of
    keeping off them (issue 36's learned-task precondition)."""
    rows = summary[(summary["experiment"] == experiment) & (summary["split"] == "contaminated")]
    const, metric = constant_score(experiment), task_metric(experiment)
    out = []
    for _, r in rows.iterrows():
        share = learned_share(pd.Series([r["mean"]]), pd.Series([const]), metric).iloc[0]
        if not share >= LEARNED_SHARE:  # NaN (a DNC cell) fails too
            masks = next((str(r[k]) for k in ("annotation", "teacher") if k in r
                          and str(r[k]) not in ("none", "no teacher")), None)
            name = f"{label(r['model'])} {label(r['method'])}" + (
                f" ({in_prose(masks).removeprefix('the ')})" if masks else "")
            out.append(f"{experiment.upper()} {name} did not learn the task (contaminated "
                       f"{metric.name.upper()} {r['mean']:.3f}, a constant's {const:.3f})")
    return out


def annotation_claim(quality: pd.DataFrame, meta: Mapping) -> Claim:
    """Teacher annotations find the tags better than random masks on PNEU/KNEE: every teacher's
    pixel precision at every τ above the tags' coverage (what any random mask scores). Judged
    with several seeds only; on the digits stand-in too, labelled so."""
    claim = "Teacher annotations mark the tags better than random masks (PNEU/KNEE)"
    lift = quality["precision"] / quality["tag_coverage"]
    parts = [f"{e.upper()}: precision {g.precision.min():.1%}–{g.precision.max():.1%} vs random "
             f"{g.tag_coverage.iloc[0]:.1%}" for e, g in quality.groupby("experiment", sort=False)]
    evidence = "; ".join(parts) + f" (lift {lift.min():.2f}–{lift.max():.2f}× random)"
    return _medical_verdict(claim, "Setting 2, Fig. overlap", evidence, meta,
                            lambda: lift.min() > 1)


def medical_teacher_claim(summary: pd.DataFrame, meta: Mapping,
                          method: str | None = None, quality: pd.DataFrame | None = None) -> Claim:
    """On PNEU, TAP (``method``; None: the paper's own) with either teacher's masks keeps the
    student off the tag: at τ = 0.01 each teacher student keeps off the tag while No XS relies
    on it (:mod:`.thresholds`). KNEE's numbers are shown. Judged with several seeds only, where
    the teachers' masks mark the tags better than random ones (:func:`weak_teachers`, from
    ``quality``) and every PNEU student learned the task (:func:`unlearned_students`); on the
    digits stand-in too, labelled so. ``summary``'s τ column holds numbers, NaN for the runs
    that take no τ (No XS)."""
    method = method or proposed_method()
    read = (summary["method"].isin([method, "none"]) & _at_tau(summary["tau"], CLAIM_TAU)
            & summary["annotation"].isin([a.value for a in READS]))  # the cells it judges
    why = ([w for w in weak_teachers(quality, CLAIM_TAU) if w.startswith("PNEU")]
           + unlearned_students(summary[read], "pneu"))
    claim = f"{label(method)} with 10%- or 1%-teacher masks keeps deep CNNs off the tag on PNEU"
    parts, ok = [], True
    for exp in dict.fromkeys(summary["experiment"]):
        frame = summary[(summary["experiment"] == exp) & (summary["method"].isin([method, "none"]))
                        & _at_tau(summary["tau"], CLAIM_TAU)]
        cells = []
        for model, case, d in _reliances(frame, exp, "annotation"):  # one per (model, annotation)
            if case in READS:
                cells.append(f"{label(model)} {label(case)} {d.mean:+.3f}")
                if exp == "pneu":
                    ok = ok and (keeps_off(d) if case != Annotation.NONE else relies(d))
        parts.append(f"{exp.upper()}: " + ", ".join(cells))
    evidence = f"{RELIANCE} — " + "; ".join(parts)
    return _medical_verdict(claim, "Setting 2, Fig. ts", evidence, meta, lambda: ok, why)


def tau_trend_claim(quality: pd.DataFrame, meta: Mapping) -> Claim:
    """Raising τ raises the teachers' annotation recall and lowers their precision (Setting 2,
    Fig. overlap): per data set and teacher, over the measured τ in increasing order, recall
    never falls and precision never rises. Judged with several seeds where every teacher's masks
    at the smallest τ mark the tags better than random ones (:func:`weak_teachers`: where they do
    not, precision can only climb towards the tags' coverage as τ grows); on the digits stand-in
    too, labelled so."""
    claim = "Raising τ raises annotation recall and lowers annotation precision"
    parts, ok = [], True
    for (e, name), g in quality.assign(tau=pd.to_numeric(quality["tau"])).sort_values(
            "tau").groupby(["experiment", "annotator"], sort=False):
        ok = ok and g["recall"].is_monotonic_increasing and g["precision"].is_monotonic_decreasing
        parts.append(f"{e.upper()} {label(name)}: recall "
                     + " → ".join(f"{v:.2f}" for v in g["recall"]) + ", precision "
                     + " → ".join(f"{v:.1%}" for v in g["precision"]))
    taus = sorted(pd.to_numeric(quality["tau"]).unique())
    evidence = f"over τ {', '.join(f'{t:g}' for t in taus)} — " + "; ".join(parts)
    return _medical_verdict(claim, "Setting 2, Fig. overlap", evidence, meta, lambda: ok,
                            weak_teachers(quality, taus[0]) if taus else ())


def teachers_close_claim(quality: pd.DataFrame, meta: Mapping) -> Claim:
    """The 1% teacher's annotations are almost as good as the 10% teacher's (Setting 2, Fig.
    overlap): per data set and τ, the 1% teacher's pixel precision and recall of the tags each
    reach :data:`.thresholds.ALMOST_AS_GOOD` of the 10% teacher's. Judged with several seeds where
    the 10% teacher's masks at the smallest τ beat random ones (:func:`weak_teachers`: two sets of
    masks no better than random are alike without either being good); on the digits stand-in
    too, labelled so."""
    claim = "The 1% teacher's annotations are almost as good as the 10% teacher's"
    wide = quality.assign(tau=pd.to_numeric(quality["tau"])).pivot_table(
        index=["experiment", "tau"], columns="annotator", values=["precision", "recall"],
        sort=False, dropna=False)
    parts, ok = [], True
    for (e, tau), r in wide.iterrows():
        if ("precision", "teacher_10") not in r or ("precision", "teacher_1") not in r:
            continue
        shares = {m: r[(m, "teacher_1")] / r[(m, "teacher_10")] for m in ("precision", "recall")}
        ok = ok and all(v >= ALMOST_AS_GOOD for v in shares.values())
        parts.append(f"{e.upper()} τ {tau:g}: precision {r[('precision', 'teacher_1')]:.1%} "
                     f"against {r[('precision', 'teacher_10')]:.1%}, recall "
                     f"{r[('recall', 'teacher_1')]:.2f} against {r[('recall', 'teacher_10')]:.2f}")
    if not parts:
        return Claim(claim, "Setting 2, Fig. overlap", "no data set with both teachers", "—",
                     "PNEU/KNEE", NOT_RUN, reason="this build measured one teacher's masks")
    taus = sorted(pd.to_numeric(quality["tau"]).unique())
    weak = weak_teachers(quality[quality["annotator"] == Annotation.TEACHER_10.value], taus[0])
    return _medical_verdict(claim, "Setting 2, Fig. overlap", "1% teacher against 10% teacher — "
                            + "; ".join(parts), meta, lambda: ok, weak)


def random_masks_claim(summary: pd.DataFrame, meta: Mapping, method: str | None = None) -> Claim:
    """On PNEU, TAP (``method``; None: the paper's own) with random masks lets the tag through:
    at τ = 0.01 the random-mask students rely on the tag (:func:`.thresholds.relies`) on most
    architectures trained (the paper: two of three), where No XS does. Judged with several seeds
    where every student it reads learned the task (:func:`unlearned_students`); on the digits
    stand-in too, labelled so."""
    method = method or proposed_method()
    claim = f"{label(method)} with random masks lets the tag through on most architectures (PNEU)"
    read = ((summary["experiment"] == "pneu") & summary["method"].isin([method, "none"])
            & _at_tau(summary["tau"], CLAIM_TAU)
            & summary["annotation"].isin([Annotation.RANDOM.value, Annotation.NONE.value]))
    found = _reliances(summary[read], "pneu", "annotation")
    rand = [(m, d) for m, a, d in found if a == Annotation.RANDOM]
    none = {m: d for m, a, d in found if a == Annotation.NONE}
    if not rand:
        return Claim(claim, "Setting 2, Fig. ts", "no random-mask student on PNEU", "—", "PNEU",
                     NOT_RUN, reason="no TAP student with random masks in this build")
    parts = [f"{label(m)} random masks {d.mean:+.3f}" + (f", No XS {none[m].mean:+.3f}"
                                                          if m in none else "")
             for m, d in rand]
    through = sum(relies(d) for _, d in rand)
    holds = 2 * through > len(rand)
    evidence = (f"{RELIANCE} — PNEU: " + "; ".join(parts)
                + f" (on the tag: {through} of {len(rand)})")
    # No XS must have taken the tag, as the preconditions of Setting 1 ask (reliance > LEARNED)
    untaken = [f"PNEU {label(m)}: No XS did not take the tag (reliance {d.mean:+.3f})"
               for m, d in none.items() if not d.mean > LEARNED]
    return _medical_verdict(claim, "Setting 2, Fig. ts", evidence, meta, lambda: holds,
                            untaken + unlearned_students(summary[read], "pneu"))


def teachers_alike_claim(summary: pd.DataFrame, meta: Mapping, method: str | None = None,
                         quality: pd.DataFrame | None = None) -> Claim:
    """On PNEU, TAP's students (``method``; None: the paper's own) score alike with the 10% and
    the 1% teacher's masks: per architecture at τ = 0.01, the difference of their permuted
    F-scores (its std √(σ₁² + σ₂²), as :func:`_reliances`) within ±:data:`.thresholds.MARGIN`
    reproduced, wholly outside it not reproduced, else inconclusive (:func:`.claims.within_verdict`).
    Judged with several seeds where both teachers' masks beat random ones and every student
    learned the task; on the digits stand-in too, labelled so."""
    method = method or proposed_method()
    claim = f"{label(method)} students score alike with the 10% and the 1% teacher's masks (PNEU)"
    read = ((summary["experiment"] == "pneu") & (summary["method"] == method)
            & _at_tau(summary["tau"], CLAIM_TAU)
            & summary["annotation"].isin([a.value for a in READS[:2]]))
    # one seed has no std (NaN): unstack keeps it, where a pivot table would drop the column
    wide = summary[read & (summary["split"] == "permuted")].assign(
        annotation=lambda f: f["annotation"].astype(str)).set_index(
        ["model", "annotation"])[["mean", "std", "count"]].unstack("annotation")
    parts, verdicts = [], []
    for model, r in wide.iterrows():
        ten, one = Annotation.TEACHER_10.value, Annotation.TEACHER_1.value
        if ("mean", ten) not in r or ("mean", one) not in r or pd.isna(r[("mean", one)]):
            continue
        d = from_summary(r[("mean", ten)] - r[("mean", one)],
                         (r[("std", ten)] ** 2 + r[("std", one)] ** 2) ** 0.5,
                         int(min(r[("count", ten)], r[("count", one)])), bounds=(-1.0, 1.0))
        verdict = within_verdict(d.lo, d.hi, MARGIN)
        verdicts.append(verdict)
        parts.append(f"{label(model)}: 10% − 1% teacher {d.text()} — {verdict}")
    if not parts:
        return Claim(claim, "Setting 2, l.404", "no PNEU architecture with both teachers' "
                     "students", "—", "PNEU", NOT_RUN,
                     reason="this build trained no TAP students of both teachers")
    why = ([w for w in weak_teachers(quality, CLAIM_TAU) if w.startswith("PNEU")]
           + unlearned_students(summary[read], "pneu"))
    verdict = _combined(verdicts)
    return _medical_verdict(claim, "Setting 2, l.404", f"permuted F-score within ±{MARGIN:g} — "
                            + "; ".join(parts), meta, lambda: verdict == REPRODUCED, why, verdict)


def comparators_on_tag_claim(summary: pd.DataFrame, meta: Mapping, experiment: str,
                             *methods: str, quality: pd.DataFrame | None = None) -> Claim:
    """RRR and RBR (``methods``; none given: the comparators) with the 10% teacher's masks do not
    keep the students off the tag on ``experiment`` (App. RRR/RBR with teacher annotations): per
    architecture and method at τ = 0.01, a reliance interval wholly above
    :data:`.thresholds.MARGIN` holds, wholly below it fails, across it is inconclusive; the
    cells combined. Judged with several seeds where the 10% teacher's masks beat random ones
    and the students learned the task; *not run* where the profile trained no such student."""
    methods = list(methods or comparators())
    named = "/".join(label(m) for m in methods)
    claim = f"{named} with the 10% teacher's masks leave the students on the tag ({experiment.upper()})"
    read = ((summary["experiment"] == experiment) & summary["method"].isin(methods)
            & _at_tau(summary["tau"], CLAIM_TAU)
            & (summary["annotation"] == Annotation.TEACHER_10.value))
    found = [(m, c, d) for m, c, d in _reliances(summary[read], experiment, "method")]
    if not found:
        return Claim(claim, "App. RRR/RBR with teacher annotations", f"no {named} student with "
                     f"teacher masks on {experiment.upper()}", "—", experiment.upper(), NOT_RUN,
                     reason=f"this build trained no {named} student with teacher masks")
    verdicts = [REPRODUCED if relies(d) else NOT_REPRODUCED if d.hi < MARGIN else INCONCLUSIVE
                for _, _, d in found]
    parts = [f"{label(m)} {label(c)} {d.text()}" for m, c, d in found]
    why = ([w for w in weak_teachers(quality[quality["annotator"] == Annotation.TEACHER_10.value]
                                     if quality is not None else None, CLAIM_TAU)
            if w.startswith(experiment.upper())]
           + unlearned_students(summary[read], experiment))
    verdict = _combined(verdicts)
    return _medical_verdict(claim, "App. RRR/RBR with teacher annotations",
                            f"{RELIANCE} — " + "; ".join(parts), meta,
                            lambda: verdict == REPRODUCED, why, verdict)


def students_beat_teachers_claim(summary: pd.DataFrame, performance: pd.DataFrame,
                                 meta: Mapping, method: str | None = None,
                                 quality: pd.DataFrame | None = None) -> Claim:
    """On PNEU, TAP's students (``method``; None: the paper's own) at τ = 0.01 score a higher
    permuted F-score than the teacher whose masks they trained on (``performance``: the
    teachers' scores): reproduced where every student's 95% interval over seeds lies above its
    teacher's, not reproduced where one lies below, else inconclusive. Judged with several seeds
    where the teachers' masks beat random ones (:func:`weak_teachers`) and every student learned
    the task (:func:`unlearned_students`); on the digits stand-in too, labelled so."""
    method = method or proposed_method()
    claim = f"{label(method)}'s students beat their teachers on the permuted PNEU test split"
    teachers = performance[(performance["experiment"] == "pneu")
                           & (performance["split"] == "permuted")].set_index("teacher")
    read = ((summary["experiment"] == "pneu") & (summary["method"] == method)
            & _at_tau(summary["tau"], CLAIM_TAU)
            & summary["annotation"].isin([a.value for a in READS[:2]]))
    students = summary[read & (summary["split"] == "permuted")]
    parts, verdicts = [], []
    for r in students.itertuples():
        if r.annotation not in teachers.index:
            continue
        t = teachers.loc[r.annotation]
        ours = from_summary(r.mean, r.std, r.count, bounds=(0.0, 1.0))
        theirs = from_summary(t["mean"], t["std"], t["count"], bounds=(0.0, 1.0))
        parts.append(f"{label(r.model)} {label(r.annotation)}: student {ours.text()}, "
                     f"teacher {theirs.text()}")
        verdicts.append(REPRODUCED if ours.lo > theirs.hi else
                        NOT_REPRODUCED if ours.hi < theirs.lo else INCONCLUSIVE)
    why = ([w for w in weak_teachers(quality, CLAIM_TAU) if w.startswith("PNEU")]
           + unlearned_students(summary[read], "pneu"))
    if not parts:
        return Claim(claim, "Setting 2, l.404", "no PNEU student of a measured teacher", "—",
                     "PNEU", NOT_RUN, reason="no TAP student and teacher of this build to compare")
    verdict = _combined(verdicts)
    return _medical_verdict(claim, "Setting 2, l.404", "permuted F-score — " + "; ".join(parts),
                            meta, lambda: verdict == REPRODUCED, why, verdict)


CLAIM_TAU = 0.01   # the τ of the paper's teacher-student figure the claim reads
# the students :func:`medical_teacher_claim` reads: each teacher's, and No XS for its contrast
READS = (Annotation.TEACHER_10, Annotation.TEACHER_1, Annotation.NONE)


def _at_tau(tau: pd.Series, value: float) -> pd.Series:
    """Rows whose τ is ``value`` (compared as a number, so that ``0.010`` and ``1e-2`` match) or
    missing (a run that takes no τ: NaN, or a legacy table's ``"any"``)."""
    numbers = pd.to_numeric(tau, errors="coerce")
    return (numbers == value) | numbers.isna()


def _medical_verdict(claim: str, where: str, evidence: str, meta: Mapping,
                     holds: Callable[[], bool], why: Sequence[str] = (),
                     verdict: Verdict | None = None) -> Claim:
    """:func:`_judged` with the data, origin and seeds a Setting-2 table's provenance records;
    ``verdict``, where the evidence itself can be undecided, replaces ``holds``."""
    return _judged(claim, where, evidence, meta.get("data", {}), [DataOrigin.read(meta)],
                   len(meta.get("settings", {}).get("seeds", [])), holds, why, verdict)


def _judged(claim: str, where: str, evidence: str, data: Mapping[str, str],
            origins: Sequence[DataOrigin | None], seeds: int, holds: Callable[[], bool],
            why: Sequence[str] = (), verdict: Verdict | None = None) -> Claim:
    """A medical Setting-2 claim's row: *not testable here* when a precondition fails (``why``:
    the claim's own, e.g. :func:`weak_teachers`), its table does not record its data's origin,
    or it has one seed, with the reasons; else reproduced when ``holds()``. On the digits
    stand-in it is judged as Setting 1's claims are, and labelled so: a verdict on the stand-in
    says what these networks did on it, not what they do on PNEU/KNEE. ``data`` names the data
    per experiment, for the row only."""
    data_text = "; ".join(f"{k.upper()}: {v}" for k, v in data.items()) or "unknown"
    standin = DataOrigin.STANDIN in origins
    why = list(why)
    why += (["its table does not record whether its data are the paper's (rebuild it)"]
            if None in origins else [])
    why += ["one seed: no interval"] if seeds < 2 else []
    seeds_text = f"{seeds} seed{'s' if seeds != 1 else ''}"
    if why:
        return Claim(claim, where, evidence, seeds_text, data_text, NOT_TESTABLE, standin,
                     "; ".join(why))
    prefix = "On the digits stand-in, not PNEU/KNEE: " if standin else ""
    return Claim(claim, where, prefix + evidence, seeds_text, data_text,
                 verdict or (REPRODUCED if holds() else NOT_REPRODUCED), standin)

"""The appendix's overlap claims on PNEU and KNEE: where TAP, No XS, RRR and RBR put the tags in
the top quartile of their input gradients and of the penalised layers' activations (the overlap
chapter's per-run table ``overlap_runs``), judged as :mod:`.medical_claims` judges Setting 1's:
paired over the seeds where No XS took the tag and the runs compared learned the task, against
:mod:`.thresholds`. TAP suppresses the tags (:func:`suppresses_claim`), keeps its input
gradients off them as Theorem 1 says (:func:`ig_overlap_claim`); RRR and RBR let them re-emerge
in the deeper layers (:func:`reemerges_in_layers_claim`)."""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from ..experiment_specs import get_experiment
from ..methods import comparators, no_xs, proposed_method
from ..seedstats import mean_ci, paired_difference
from .claims import REPRODUCED, Claim, combined, few_reason, keeps_verdict
from .labels import label
from .medical_claims import _cell_seeds, _grouped, _in_some_cell, _judged_runs, _name, cells
from .origin import DataOrigin
from .thresholds import (CHANCE_RECALL, PAPER_TAG_SHARE, RECALL_MARGIN, THEOREM1_OVERLAP,
                         theorem1_bound)


def _recall_cells(overlap: pd.DataFrame, runs: Mapping[str, pd.DataFrame],
                  layers: Sequence[str], lower: str, higher: str, metric: str = "recall"):
    """``(paper's data-set name, architecture, name, seeds, per-seed recall of higher, of lower)``
    per data set and architecture with
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
        seeds = _cell_seeds(rows, rel, exp, list(dict.fromkeys([no_xs(), lower, higher])))
        per = [{seed: v for seed, v in seeds_of.get((paper_name, model, case), {}).items()
                if seed in seeds.kept}
               for case in (higher, lower)]
        if all(per):
            yield paper_name, model, _name(exp, model), seeds, per[0], per[1]


def _recall_gap(overlap, runs, layers, lower: str, higher: str, more=None):
    """Each cell's evidence and verdict: the paired difference ``higher`` − ``lower`` of the
    recall over ``layers``, wholly above :data:`.thresholds.RECALL_MARGIN` reproduced, wholly
    below it not reproduced, across it inconclusive; ``(parts, verdicts, fewest seeds, why)``.
    ``more(name, recall of higher per seed, verdict)``: a further part of each cell, its words
    and the cell's verdict with it."""
    parts, results, n_min, why = [], [], None, []
    for _, _, name, seeds, high, low in _recall_cells(overlap, runs, layers, lower, higher):
        if min(len(high), len(low)) < 2:
            parts.append(f"{name}: not testable{seeds.note(name)}")
            why.append(f"{name}: {few_reason(seeds)}")
            continue
        high_e, low_e = (mean_ci(list(v.values()), bounds=(0.0, 1.0)) for v in (high, low))
        d = paired_difference(high, low, bounds=(-1.0, 1.0))
        n_min = d.n if n_min is None else min(n_min, d.n)
        verdict = keeps_verdict(d.lo, d.hi, RECALL_MARGIN)
        words, verdict = more(name, high, verdict) if more else ("", verdict)
        results.append(verdict)
        parts.append(f"{name}: {label(higher)} {high_e.text(2)}, {label(lower)} {low_e.text(2)}, "
                     f"paired {label(higher)} − {label(lower)} {d.text(2)}{words} — {verdict}"
                     f"{seeds.note(name)}")
    return parts, results, n_min, why


def _noted(open_parts: list[tuple[str, str]], words: str):
    """A ``more`` for :func:`_recall_gap` that adds nothing to a cell's words and notes each
    cell not reproduced in ``open_parts``, as ``("<words> <verdict>", cell)``."""
    def more(name: str, _high, verdict: str) -> tuple[str, str]:
        if verdict != REPRODUCED:
            open_parts.append((f"{words} {verdict}", name))
        return "", verdict
    return more


def _layers_text(layers: Sequence[str]) -> str:
    return ("input gradients" if list(layers) == ["ig"] else
            "penalised layers' activations" if len(layers) > 1 else
            f"last penalised layer's activations ({layers[0].replace('act', 'Act ')})")


def suppresses_claim(overlap: pd.DataFrame, runs: Mapping[str, pd.DataFrame],
                     data: Mapping[str, str], origins: Mapping[str, DataOrigin | None],
                     layers: Sequence[str], method: str | None = None,
                     rivals: Sequence[str] = (), deepest: bool = False) -> Claim:
    """TAP (``method``; None: the paper's own) suppresses the tags in the top quartiles of
    ``layers`` (the appendix's overlap tables: ``ig``, the input gradient, or ``act1``–``act4``,
    the penalised layers; their mean recall per run). ``overlap``: the overlap chapter's per-run
    table (dataset, model, case, seed, layer, metric, value). Per data set and architecture, on
    the seeds where No XS took the tag and both learned the task (the per-run tables ``runs``,
    :mod:`.preconditions`), the paired difference No XS − TAP of that recall against
    :data:`.thresholds.RECALL_MARGIN` (:func:`_recall_gap`), and, for each of ``rivals`` (the
    other XS losses: "TAP lowest among the XS losses", the claims table's test) with maps in
    the cell, the rival − TAP the same way. With ``deepest`` (l.591: "either low throughout or
    decrease towards zero in the deeper layers"), TAP's recall at the last of ``layers`` is
    also low (:func:`_deepest_part`). The cells combined; the reason names the parts that kept
    a cell from being reproduced."""
    method = method or proposed_method()
    own, shown = label(method), _layers_text(layers)
    open_parts: list[tuple[str, str]] = []
    parts, results, n_min, why = _recall_gap(overlap, runs, layers, method, no_xs(),
                                             _noted(open_parts, "below No XS"))
    for rival in rivals:
        p, r, n, _ = _recall_gap(overlap, runs, layers, method, rival,
                                 _noted(open_parts, f"below {label(rival)}"))
        parts, results = parts + [x for x in p if ": not testable" not in x], results + r
        n_min = n if n_min is None else (n_min if n is None else min(n_min, n))
    if deepest:
        p, r, low = _deepest_part(overlap, runs, layers[-1], method)
        parts, results, open_parts = parts + p, results + r, open_parts + low
    lowest = (f", No XS's and the other XS losses' ({', '.join(map(label, rivals))}) against "
              f"{own}'s" if rivals else "")
    evidence = (f"top-quartile recall of the tags in the {shown} (chance {CHANCE_RECALL:g})"
                f"{lowest} — "
                + ("; ".join(parts) or f"no architecture with No XS and {own} maps"))
    return _judged_runs(f"{own} suppresses the tags in the {shown}"
                        + (", more than the other XS losses" if rivals else "")
                        + ((", and is low there (below chance)" if list(layers) == ["ig"]
                            else f", and is low at the deepest ({_act(layers[-1])})")
                           if deepest else ""),
                        "App. overlap tables (l.591)", evidence, data, origins, n_min or 0,
                        results, why, _grouped(open_parts))


def _act(layer: str) -> str:
    """A layer as the evidence names it: ``act4`` -> "Act 4", ``ig`` -> "the input gradients"."""
    return "the input gradients" if layer == "ig" else layer.replace("act", "Act ")


def _deepest_part(overlap: pd.DataFrame, runs: Mapping[str, pd.DataFrame], layer: str,
                  method: str) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """"Either low throughout or decrease towards zero in the deeper layers" (l.591): both
    halves end low at the deepest penalised layer, and a low deepest layer makes one of them
    true, so each cell's TAP recall at ``layer`` is judged: its interval over the judged seeds
    wholly below :data:`.thresholds.CHANCE_RECALL` (fewer of the tags' pixels than a top quartile
    placed at random holds) reproduced, wholly above not reproduced, across inconclusive. The
    paper's TAP scores 0.00–0.06 there. Precision is recall times a constant (the tags' and the
    quartile's sizes are fixed), so recall decides both. The map's size is shown: at the
    stand-ins' 64 px the deepest map is 2×2, each cell a quarter of the image, and the tags'
    cell holds the digit's corner too. ``layer`` "ig": the input gradients, whose claim says
    "TAP ≈ 0" there (the paper's 0.00-0.07), judged the same way. ``(parts, verdicts, open
    parts)``."""
    sizes = (overlap[overlap["layer"] == layer].groupby(["dataset", "model"])["map_size"].first()
             if "map_size" in overlap else pd.Series(dtype=object))
    parts, results, open_parts = [], [], []
    for dataset, model, name, _, _, tap in _recall_cells(overlap, runs, (layer,), method,
                                                         no_xs()):
        if len(tap) < 2:  # the comparison with No XS shows why
            continue
        e = mean_ci(list(tap.values()), bounds=(0.0, 1.0))
        verdict = keeps_verdict(e.lo, e.hi, CHANCE_RECALL, higher_is_better=False)
        results.append(verdict)
        if verdict != REPRODUCED:
            open_parts.append((f"low at {_act(layer)} {verdict}", name))
        size = f" (a {sizes[(dataset, model)]} map)" if (dataset, model) in sizes.index else ""
        parts.append(f"{name}: {label(method)} at {_act(layer)}{size} {e.text(2)} against "
                     f"chance {CHANCE_RECALL:g} — low there: {verdict}")
    return parts, results, open_parts


def ig_overlap_claim(overlap: pd.DataFrame, runs: Mapping[str, pd.DataFrame],
                     data: Mapping[str, str], origins: Mapping[str, DataOrigin | None],
                     method: str | None = None) -> Claim:
    """With TAP (``method``; None: the paper's own) less than
    :data:`.thresholds.THEOREM1_OVERLAP` of the top-quartile input gradients lie on the tags
    (the paper's sentence after Theorem 1; its overlap tables' IG precision 0.00-0.01): per data
    set and architecture, on the seeds where No XS took the tag and both learned the task, TAP's
    mean precision interval wholly below the bound reproduced, wholly above it not reproduced,
    across it inconclusive; No XS's beside it for contrast. The bound is the paper's 1% scaled
    by the share of the image the data set's tags cover (:func:`.thresholds.theorem1_bound`,
    from the table's ``chance``: a random top quartile's precision): 1% on the paper's data,
    more on the stand-ins, whose tags cover more of their small images. The cells combined."""
    method = method or proposed_method()
    own = label(method)
    share = (overlap[overlap["metric"] == "precision"].groupby("dataset")["chance"].mean()
             if "chance" in overlap else pd.Series(dtype=float))
    parts, results, n_min, why, bounds = [], [], None, [], {}
    for dataset, _, name, seeds, none, tap in _recall_cells(overlap, runs, ("ig",), method,
                                                         no_xs(), "precision"):
        if len(tap) < 2:
            parts.append(f"{name}: not testable{seeds.note(name)}")
            why.append(f"{name}: {few_reason(seeds)}")
            continue
        tags = float(share.get(dataset, PAPER_TAG_SHARE))
        bound = bounds.setdefault(dataset, (theorem1_bound(tags), tags))[0]
        e = mean_ci(list(tap.values()), bounds=(0.0, 1.0))
        n_min = e.n if n_min is None else min(n_min, e.n)
        verdict = keeps_verdict(e.lo, e.hi, bound, higher_is_better=False)
        results.append(verdict)
        parts.append(f"{name}: {own} {e.text(3)} against {bound:.3f}, No XS "
                     f"{mean_ci(list(none.values()), bounds=(0.0, 1.0)).text(3)} — {verdict}"
                     + seeds.note(name))
    scaled = "; ".join(f"{d}'s tags cover {s:.1%} of an image, so {b:.3f}"
                       for d, (b, s) in bounds.items() if abs(b - THEOREM1_OVERLAP) > 5e-4)
    evidence = (f"share of the top-quartile input-gradient pixels on the tags (precision; the "
                f"paper's bound {THEOREM1_OVERLAP:g} where the tags cover "
                f"{PAPER_TAG_SHARE:.1%} of an image, as the paper's do"
                + (f", scaled by the share: {scaled}" if scaled else "") + ") — "
                + ("; ".join(parts) or f"no architecture with No XS and {own} maps"))
    return _judged_runs(f"Under {own}, less than {THEOREM1_OVERLAP:.0%} of the top-quartile "
                        "input gradients lie on the tags", "after Theorem 1 (l.266)", evidence,
                        data, origins, n_min or 0, results, why)


def reemerges_in_layers_claim(overlap: pd.DataFrame, runs: Mapping[str, pd.DataFrame],
                              data: Mapping[str, str], origins: Mapping[str, DataOrigin | None],
                              methods: Sequence[str] | None = None,
                              layers: Sequence[str] = ("act4",),
                              tap_layers: Sequence[str] = ()) -> Claim:
    """RRR/RBR (``methods``; None: the comparators) let the tags re-emerge in the deeper
    layers where TAP keeps them out (Fig. 1; the appendix's overlap tables: the paper's PNEU
    ResNet-18 Act 4 recall RRR 0.41, RBR 0.19, TAP 0.00): per data set, architecture and method,
    on the judged seeds, the paired difference method − TAP of the top-quartile recall of the
    tags in ``layers`` above :data:`.thresholds.RECALL_MARGIN` (:func:`_recall_cells`), and,
    "re-emerge" (the appendix: "input gradients ostensibly suggest that spurious signals are
    suppressed"; the paper's input-gradient recall RRR 0.02, RBR 0.03), the method's recall in
    ``layers`` above its own at the input gradients by that margin, paired over the same seeds.
    Reproduced when some cell re-emerges, not reproduced when every judged cell does not, else
    inconclusive. ``tap_layers``: where the claim also says TAP "mitigates them" there (l.95:
    "in the input gradients and all four blocks"; the appendix, l.654: "suppresses the input
    gradients too"), TAP's recall in each of them below No XS's by the margin, paired
    (:func:`_recall_gap`), in every cell judged; a part of the claim only where some cell's
    re-emergence was judged."""
    methods = list(comparators() if methods is None else methods)
    tap = proposed_method()
    own, named, shown = label(tap), "/".join(label(m) for m in methods), _layers_text(layers)
    deeper = list(layers) != ["ig"]  # compared with the input gradients
    parts, results, n_min, why, open_parts = [], [], None, [], []
    for method in methods:
        ig = {name: high for _, _, name, _, high, _ in
              _recall_cells(overlap, runs, ("ig",), tap, method)} if deeper else {}

        def hidden_first(name: str, high: dict[int, float], above: str, method: str = method,
                         ig: dict = ig) -> tuple[str, str]:
            """The method's recall here above its own at the input, paired."""
            if len(set(ig.get(name, {})) & set(high)) < 2:
                return "", above
            g = paired_difference(high, ig[name], bounds=(-1.0, 1.0))
            hidden = keeps_verdict(g.lo, g.hi, RECALL_MARGIN)
            open_parts.extend((f"{part} {v}", f"{name} {label(method)}") for part, v in (
                (f"above {own}", above), ("hidden at the input", hidden)) if v != REPRODUCED)
            return (f" — above {own}: {above}; {label(method)} here − at its input gradients "
                    f"{g.text(2)} — hidden at the input: {hidden}; together",
                    combined([above, hidden]))

        p, r, n, w = _recall_gap(overlap, runs, layers, tap, method, hidden_first)
        parts, results, why = parts + p, results + r, why + w
        n_min = n if n_min is None else (n_min if n is None else min(n_min, n))
    evidence = (f"top-quartile recall of the tags in the {shown} (chance {CHANCE_RECALL:g}) — "
                + ("; ".join(parts) or f"no architecture with {named} and {own} maps"))
    some = _in_some_cell(results)
    if tap_layers and some:
        p, r, low = _mitigates(overlap, runs, tap_layers, tap)
        evidence += f"; {own} below No XS (paired), layer by layer — " + "; ".join(p)
        some, open_parts = some + ([combined(r)] if r else []), open_parts + low
    return _judged_runs(f"{named} let the tags re-emerge in the deeper layers where {own} does "
                        "not", "Fig. 1; App. overlap tables", evidence, data, origins,
                        n_min or 0, some, why, _grouped(open_parts))


def _mitigates(overlap: pd.DataFrame, runs: Mapping[str, pd.DataFrame], layers: Sequence[str],
               method: str) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """``method``'s recall of the tags below No XS's in each of ``layers``, one at a time, on
    each cell's judged seeds (:func:`_recall_gap`): ``(parts, verdicts, open parts)``."""
    parts, results, open_parts = [], [], []
    for layer in layers:
        p, r, _, _ = _recall_gap(overlap, runs, (layer,), method, no_xs(),
                                 _noted(open_parts, f"below No XS at {_act(layer)}"))
        parts += [f"{_act(layer)}, {x}" for x in p if ": not testable" not in x]
        results += r
    return parts, results, open_parts

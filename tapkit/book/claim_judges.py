"""How a registered claim reads the build's tables: the adapters between the claim registry
(:mod:`.claim_specs`) and the judges (:mod:`.mnist_claims`, :mod:`.cost_claims`,
:mod:`.medical_claims`, :mod:`.teacher_claims`, ...).

An ``on_*`` function wraps a judge for one kind of table (Setting 1's per-run tables, the
appendix architectures', the overlap maps', the MNIST summaries, the medical Setting-2 students')
and declares the tables it reads (``reads``), so that a page quotes the verdicts of the claims
its own tables decide (:func:`.claim_specs.page_claims`). The other functions are judges of
their own, called with the :class:`.evidence.Evidence` and the claim's methods.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable

import pandas as pd

from ..experiments.cells import Annotation
from ..experiments.setting1 import BASE, cases
from ..methods import comparators, proposed_method
from ..models import Role, models_where
from ..sources import MEDICAL_EXPERIMENTS
from .claims import NOT_RUN, Claim, every_part, needs_all
from .cost_claims import cost_claim, cost_share_claim, oom_claim
from .distillation_claims import second_order_cost_claim
from .evidence import Evidence, Judge, Methods
from .labels import in_prose, label
from .medical_claims import matches_at_cost_claim, reemerge_claim
from .medical_notes import LEFT_OUT_HEADING
from .mnist_claims import insensitive_claim, kappa_claim, matches_claim, removes_claim
from .origin import DataOrigin
from .overlap_claims import reemerges_in_layers_claim, suppresses_claim
from .teacher_claims import students_beat_teachers_claim
from .thresholds import ANNOTATION_LIFT, MARGIN

# where a page's opening sends the reader for why its cells were left out (the medical
# chapters list them under the table, :func:`.medical_notes.left_out_note`)
LEFT_OUT_BELOW = f"why: “{LEFT_OUT_HEADING}”, below"


def with_left_out_reason(claim: Claim | None, ev: Evidence, only: tuple[str, ...],
                         methods: Methods, model: str | None = None) -> Claim | None:
    """A claim *not run* says why: the profile's reasons for leaving its cells out
    (:meth:`Evidence.left_out`), where the chapter recorded them; a page's opening points to
    the page's own list of them instead (``brief``: one pointer for all its cells)."""
    if claim is None or claim.verdict != NOT_RUN:
        return claim
    why = ev.left_out(only, methods, model)
    if not why:
        return claim
    return replace(claim, reason=_left_out_text(why),
                   brief=f"left out by this profile; {LEFT_OUT_BELOW}")


def _left_out_text(why: dict[str, list[str]]) -> str:
    """The report's reason for cells a profile left out (:meth:`Evidence.left_out`)."""
    return "left out by this profile: " + "; ".join(
        f"{', '.join(names)}: {reason}" for reason, names in why.items())


SETTING1_RUNS = "{}_gt_runs"  # Setting 1's per-run tables (the tags'), by experiment
STRIPE_RUNS = "{}_stripe_runs"  # the stripe appendix's, by experiment


def on_medical(judge, only: tuple[str, ...] = MEDICAL_EXPERIMENTS,
               table: str = SETTING1_RUNS, base_from: str | None = None) -> Judge:
    """``judge(runs, data, origins, *methods)`` on the per-run tables ``table`` of ``only``
    (Setting 1's by default). A judged claim's evidence names each of the paper's architectures
    (:data:`tapkit.models.Role.MAIN`) this build did not train: the verdict is on those that
    ran, and says so. ``base_from``: the per-run tables whose Base runs stand for a table
    without its own (:func:`_borrowed_base`)."""
    def run(ev: Evidence, methods: Methods = ()):
        runs, data, origins = ev.medical_data(only, table)
        borrowed = False
        if base_from is not None and runs:
            runs, borrowed = _borrowed_base(runs, ev.medical_data(only, base_from)[0])
        claim = with_left_out_reason(judge(runs, data, origins, *methods) if runs else None,
                                     ev, only, methods)
        if claim is not None and borrowed and claim.verdict != NOT_RUN:
            claim = replace(claim, evidence=claim.evidence + f"; {BORROWED_BASE}")
        missing = _untrained(runs)
        if claim is None or claim.verdict == NOT_RUN or not missing:
            return claim
        return replace(claim, evidence=claim.evidence + "; " + ", ".join(
            f"{e.upper()} {label(m)}" for e in only for m in missing) + ": not run here")
    run.reads = tuple(t.format(e) for t in (table, base_from) if t for e in only)
    return run


BORROWED_BASE = ("Base: Setting 1's runs of the same architectures and seeds (Base trains on "
                 "clean images, which carry no artifact, so its runs serve both appendices)")


def _borrowed_base(runs: dict[str, pd.DataFrame],
                   lender: dict[str, pd.DataFrame]) -> tuple[dict[str, pd.DataFrame], bool]:
    """``runs`` (per-run tables by experiment) with ``lender``'s Base runs added for the
    architectures that have none of their own, and whether any were. The stripe appendix trains
    no Base: Base's training images are clean, the same digits and labels whatever artifact the
    contaminated split carries (one seed, one split), so Setting 1's Base is the run it would
    train, and its clean score is what "TAP ≈ Base" compares with."""
    out, any_added = {}, False
    for exp, frame in runs.items():
        other = lender.get(exp)
        if other is None:
            out[exp] = frame
            continue
        own = set(frame.loc[frame["case"] == BASE, "model"])
        add = other[(other["case"] == BASE) & other["model"].isin(set(frame["model"]) - own)]
        any_added |= len(add) > 0
        out[exp] = pd.concat([frame, add], ignore_index=True) if len(add) else frame
    return out, any_added


def except_for(judge, *models: str):
    """``judge(runs, data, origins, *methods)`` on every architecture but ``models``, which the
    claim itself names as its exception (the KNEE stripes: "save for an uptick in contamination
    sensitivity with DenseNet-121", the paper's TAP losing 0.315 MAE there): judged on them, a
    claim would fail on the paper's own numbers. The evidence says which were left out, and
    why."""
    def run(runs, data, origins, *methods):
        kept = {e: f[~f["model"].isin(models)] for e, f in runs.items()}
        left = [f"{e.upper()} {label(m)}" for e, f in runs.items() for m in models
                if (f["model"] == m).any()]
        claim = judge({e: f for e, f in kept.items() if len(f)}, data, origins, *methods)
        if claim is None or not left:
            return claim
        return replace(claim, evidence=f"{claim.evidence}; {', '.join(left)}: not judged, the "
                       "claim's own exception")
    return run


def on_stripes(judge, only: tuple[str, ...]) -> Judge:
    """:func:`on_medical` on the stripe appendix's per-run tables, with Setting 1's Base runs
    (:func:`_borrowed_base`): the same judges, which speak of the tag, read with the stripe as
    the artifact (the claim, its evidence and reasons)."""
    inner = on_medical(judge, only, STRIPE_RUNS, base_from=SETTING1_RUNS)

    def run(ev: Evidence, methods: Methods = ()):
        claim = inner(ev, methods)
        if claim is None:
            return None
        return replace(claim, **{f: _stripe_words(getattr(claim, f))
                                 for f in ("claim", "evidence", "reason", "brief")})
    run.reads = inner.reads
    return run


def _stripe_words(text: str) -> str:
    """``text`` about tags, about stripes (whole words: "stage" stays)."""
    return re.sub(r"\btag(s?)\b", r"stripe\1", text)


def _untrained(runs: dict[str, pd.DataFrame]) -> list[str]:
    """The paper's medical architectures (:data:`tapkit.models.Role.MAIN`) with no run in
    ``runs`` (Setting 1's per-run tables by experiment)."""
    trained = {m for frame in runs.values() for m in frame["model"]}
    return [m for m in models_where(Role.MAIN) if m not in trained]


def on_every_architecture(judge, only: tuple[str, ...]) -> Judge:
    """:func:`on_medical` for a claim made "for all three architectures": each of the paper's
    medical architectures (:data:`tapkit.models.Role.MAIN`) is needed; one the build did not
    train leaves the claim *not run* (:func:`.claims.needs_all`), with the profile's reason,
    unless the architectures that ran already fail it."""
    inner = on_medical(judge, only)

    def run(ev: Evidence, methods: Methods = ()):
        claim = inner(ev, methods)
        if claim is None:
            return None
        missing = _untrained(ev.medical_data(only)[0])
        out = needs_all(claim, [label(m) for m in missing])
        if out is claim:
            return claim
        why = {r: names for m in missing for r, names in ev.left_out(only, methods or cases(),
                                                                          m).items()}
        return replace(out, reason=_left_out_text(why) if why else out.reason,
                       brief=f"left out by this profile; {LEFT_OUT_BELOW}" if why else "")
    run.reads = inner.reads
    return run


EXTRA_RUNS = "extra_{}_runs"  # the appendix architectures' per-run tables, by experiment
KD_TABLE = "medical_kd"  # the medical distillation chapter's summary (KD/AT/JT beside TAP)


def on_extra(judge, only: tuple[str, ...] = MEDICAL_EXPERIMENTS,
             model: str | None = None) -> Judge:
    """``judge(runs, data, origins, *methods)`` on the appendix architectures' per-run tables
    of ``only`` (EfficientNet-B0 and MobileNet-v2; ``model``: one of them)."""
    def run(ev: Evidence, methods: Methods = ()):
        runs, data, origins = ev.medical_data(only, EXTRA_RUNS)
        if model is not None:
            runs = {e: t[t["model"] == model] for e, t in runs.items()}
            runs = {e: t for e, t in runs.items() if len(t)}
        return judge(runs, data, origins, *methods) if runs else None
    run.reads = tuple(EXTRA_RUNS.format(e) for e in only)
    return run


def on_cell(judge, exp: str, model: str) -> Judge:
    """``judge`` on one data set's one architecture (the paper's named cases)."""
    def run(ev: Evidence, methods: Methods = ()):
        runs, data, origins = ev.medical_data((exp,))
        if not runs:
            return None
        rows = runs[exp][runs[exp]["model"] == model]
        return with_left_out_reason(
            judge({exp: rows} if len(rows) else {}, data, origins, *methods), ev, (exp,),
            methods, model)
    run.reads = (f"{exp}_gt_runs",)
    return run


OVERLAP_TABLES = ("overlap_runs", *(f"{e}_gt_runs" for e in MEDICAL_EXPERIMENTS))


def on_overlap(judge, only: tuple[str, ...] = MEDICAL_EXPERIMENTS,
               model: str | None = None) -> Judge:
    """``judge(overlap, runs, data, origins, *methods)`` on the overlap chapter's per-run table
    (``overlap_runs``) of the data sets ``only`` (and architecture ``model``; None: all), its
    preconditions read from Setting 1's per-run tables."""
    def run(ev: Evidence, methods: Methods = ()):
        frame, meta = ev.table("overlap_runs")
        runs, data, _ = ev.medical_data(only)
        if frame is None or not runs:
            return None
        if model is not None:
            runs = {e: r[r["model"] == model] for e, r in runs.items()}
        origins = dict.fromkeys(runs, DataOrigin.read(meta))  # the maps' data, as recorded
        return judge(frame, runs, data, origins, *methods)
    run.reads = OVERLAP_TABLES
    return run


def suppresses_in(layers: tuple[str, ...], rivals: bool = False, deepest: bool = False):
    """:func:`.overlap_claims.suppresses_claim` in ``layers``, against No XS and, with
    ``rivals``, the comparators (the claim's "lowest among the XS losses"); with ``deepest``,
    low at the last of ``layers`` too ("low throughout or decrease towards zero")."""
    return lambda frame, runs, data, origins, *methods: suppresses_claim(
        frame, runs, data, origins, layers, *methods[:1],
        rivals=comparators() if rivals else (), deepest=deepest)


def reemerges_in_layers(tap_layers: tuple[str, ...]):
    """The claim's comparators (its methods but the paper's own) against TAP, and TAP below No
    XS in each of ``tap_layers`` (the claim's "TAP mitigates them" there)."""
    return lambda frame, runs, data, origins, *methods: reemerges_in_layers_claim(
        frame, runs, data, origins, [m for m in methods if m != proposed_method()] or None,
        tap_layers=tap_layers)


def on_mnist(judge: Callable[..., Claim | None]) -> Judge:
    """``judge(runs, data, *methods)`` on the MNIST per-run table; *not run* says why the
    profile left the cells out, where the chapter recorded it (:func:`with_left_out_reason`)."""
    def run(ev: Evidence, methods: Methods = ()):
        runs, meta = ev.table("mnist_gt_runs")
        if runs is None:
            return None
        return with_left_out_reason(judge(runs, meta.get("data", "MNIST"), *methods), ev,
                                    ("mnist",), methods)
    run.reads = ("mnist_gt_runs",)  # the tables a page's opening needs (claim_specs.page_claims)
    return run


def xs_protect(runs: pd.DataFrame, data: str, *methods: str) -> Claim | None:
    """"The Base model and the models trained with XS losses (``methods``) are insensitive to the
    spurious signals": Base and every XS method lose at most :data:`.thresholds.MARGIN` accuracy
    when the decoys are permuted (:func:`.mnist_claims.insensitive_claim`), and every XS method
    beats No XS on the permuted digits (:func:`.mnist_claims.removes_claim`); each is needed
    (:func:`.claims.every_part`: one this build did not train leaves the claim *not run*,
    named)."""
    if not set(methods) & set(runs["case"]):
        return None
    # the Δ-accuracies first: the numbers beside the paper's contaminated → permuted ones
    parts = ([insensitive_claim(runs, data, c) for c in (BASE, *methods)]
             + [removes_claim(runs, data, m) for m in methods])
    return every_part("Base and the XS losses are insensitive to the decoy (each loses at most "
                      f"{MARGIN:g} accuracy when it is permuted; each XS loss beats No XS there)",
                      parts)


def on_speed(judge) -> Judge:
    """``judge(ratios, label, ...)`` on the speed table (the claim's methods not passed: the
    speed judge names its own)."""
    return lambda ev, methods=(): (None if ev.ratios is None
                                   else judge(ev.ratios, ev.speed_label()))


def cost(ev: Evidence, methods: Methods = ()):
    """:func:`.cost_claims.cost_claim` of the claim's method (first) against the others."""
    if ev.ratios is None:
        return None
    return cost_claim(ev.ratios, ev.speed_label(), *methods[:1], methods[1:] or None)


def on_table(judge, name: str) -> Judge:
    """``judge(frame, meta, *methods)`` on the table ``name``."""
    def run(ev: Evidence, methods: Methods = ()):
        frame, meta = ev.table(name)
        return None if frame is None else judge(frame, meta, *methods)
    run.reads = (name,)
    return run


# the κ ablation's per-run table (the normalisation appendix's, tapkit.book.kappa_ablation)
KAPPA_TABLE = "kappa_ablation"
kappa_choice = on_table(lambda frame, meta, *methods: kappa_claim(
    frame, meta.get("data", "MNIST"), *methods), KAPPA_TABLE)


def second_order_cost(ev: Evidence, methods: Methods = ()):
    """:func:`.distillation_claims.second_order_cost_claim` on the distillation chapter's timed
    steps and their peak memory (``mnist_kd_cost``)."""
    cost, meta = ev.table("mnist_kd_cost")
    if cost is None:
        return None
    return second_order_cost_claim(cost, meta, *methods)


second_order_cost.reads = ("mnist_kd_cost",)


def cost_share(ev: Evidence, methods: Methods = ()):
    """:func:`.cost_claims.cost_share_claim` of the claim's method (first) against the others."""
    if ev.ratios is None:
        return None
    return cost_share_claim(ev.ratios, ev.speed_label(), *methods)


def oom(ev: Evidence, methods: Methods = ()):
    """:func:`.cost_claims.oom_claim` from the speed table's rows (its metadata)."""
    frame, meta = ev.table("speed_memory")
    return None if frame is None else oom_claim(meta, ev.speed_label(), *methods[:1])


def on_summary(judge, name: str, masks: bool = False) -> Judge:
    """``judge(summary, data, *methods)`` on the MNIST summary table ``name``; with ``masks``
    (a claim comparing TAP trained on teacher masks), the teachers whose masks mark the decoy no
    better than random (:func:`weak_mnist_teachers`) passed as ``weak``."""
    def run(ev: Evidence, methods: Methods = ()):
        frame, meta = ev.table(name)
        if frame is None:
            return None
        extra = {"weak": weak_mnist_teachers(ev)} if masks else {}
        return judge(frame, meta.get("data", "MNIST"), *methods, **extra)
    run.reads = (name, *(TEACHER_TABLES if masks else ()))
    return run


# the MNIST teachers page's tables that weak_mnist_teachers reads
TEACHER_TABLES = ("mnist_teacher", "annotation_quality")


def _lifts(ev: Evidence, annotation: Annotation) -> dict[float, float] | None:
    """A teacher's annotation lift per τ under the students' threshold rule (the teachers page's
    ``annotation_quality``: precision on the decoy in units of a random mask's), or None where
    the build did not measure it."""
    _, meta = ev.table("mnist_teacher")
    quality, _ = ev.table("annotation_quality")
    if quality is None or "threshold" not in (meta or {}):
        return None
    rows = quality[(quality["annotator"] == annotation.value)
                   & (quality["rule"] == meta["threshold"])]
    return {float(r.tau): float(r.lift) for r in rows.itertuples()}


def weak_mnist_teachers(ev: Evidence) -> dict[str, str]:
    """The teachers whose masks, at the students' τ, mark the decoy less than
    :data:`.thresholds.ANNOTATION_LIFT` times as precisely as random masks, with the reason a
    claim gives for not judging TAP trained on them (Setting 2's precondition, issue 36)."""
    frame, _ = ev.table("mnist_teacher")
    out = {}
    for annotation in (Annotation.TEACHER_10, Annotation.TEACHER_1):
        lifts = _lifts(ev, annotation) or {}
        taus = set() if frame is None else {
            float(t) for t in frame.loc[frame["annotation"] == annotation.value, "tau"].dropna()}
        measured = [lifts[t] for t in taus if t in lifts]
        if measured and max(measured) < ANNOTATION_LIFT:
            out[annotation.value] = (
                f"{in_prose(annotation)}'s masks mark the decoy no better than random ones "
                f"(precision {max(measured):.2f}× a random mask's, under "
                f"{ANNOTATION_LIFT:g}×; the teachers page measures why)")
    return out


def matches_at_cost(ev: Evidence, methods: Methods = ()):
    """TAP (the claim's first method) matches each of the others (RRR and RBR: "competitively
    with ... RRR and RBR while needing less training time and memory") at a fraction of its
    cost; each comparator is needed (:func:`.claims.every_part`)."""
    runs, data, origins = ev.medical_data()
    if not runs:
        return None
    method, *others = methods or (proposed_method(), *comparators())
    parts = [matches_at_cost_claim(runs, ev.ratios, data, origins, method, o) for o in others]
    named = " and ".join(label(o) for o in others)
    return with_left_out_reason(
        every_part(f"{label(method)} matches {named} at a fraction of their cost", parts), ev,
        MEDICAL_EXPERIMENTS, tuple(others))


def students_beat(ev: Evidence, methods: Methods = ()):
    """:func:`.teacher_claims.students_beat_teachers_claim` on the medical Setting-2 students and
    their teachers' scores, judged only where the teachers' masks beat random ones."""
    (frame, meta), performance = ev.table("medical_teacher"), ev.table(
        "medical_teacher_performance")[0]
    if frame is None or performance is None:
        return None
    return students_beat_teachers_claim(frame, performance, meta, *methods,
                                        quality=ev.table("medical_annotation_quality")[0])


students_beat.reads = ("medical_teacher", "medical_teacher_performance",
                        "medical_annotation_quality")


def on_teacher_table(judge, *args, table: str = "medical_teacher",
                     setting1: str | None = None) -> Judge:
    """``judge(summary, meta, *args, *methods, quality=...)`` on the medical Setting-2 students'
    table (``table``; :data:`KD_TABLE`: the distillation chapter's), judged only where the
    teachers' masks beat random ones: their annotation quality (the gate,
    :func:`.teacher_claims.weak_teachers`) from the teachers page. ``setting1``: the experiment
    whose Setting-1 per-run table the judge compares the students with (``setting1=`` its
    frame, None where the build has none)."""
    def run(ev: Evidence, methods: Methods = ()):
        frame, meta = ev.table(table)
        if frame is None:
            return None
        extra = ({} if setting1 is None else
                 {"setting1": ev.table(SETTING1_RUNS.format(setting1))[0]})
        return judge(frame, meta, *args, *methods,
                     quality=ev.table("medical_annotation_quality")[0], **extra)
    run.reads = (table, "medical_annotation_quality",
                 *([SETTING1_RUNS.format(setting1)] if setting1 else []))
    return run


def matches(runs: pd.DataFrame, data: str, method: str | None = None,
             other: str | None = None) -> Claim:
    """:func:`.mnist_claims.matches_claim` with the claim's methods in its order (claimed first)."""
    return matches_claim(runs, data, other, method)


def reemerge(runs, data, origins, *methods: str) -> Claim:
    return reemerge_claim(runs, data, origins, methods or None)


def ostensibly_reemerge(runs, data, origins, *methods: str) -> Claim:
    """"Ostensibly strong performance ... which turns out to rely on spurious signals" (l.372):
    the method relies on the tag and its contaminated score looks as good as Base's."""
    return reemerge_claim(runs, data, origins, methods or None, looks_well=(BASE,))


def reemerge_each(runs, data, origins, *methods: str) -> Claim:
    """"While RRR and RBR seem to perform well (left panel) compared to TAP and even Base
    models, they exhibit significant contamination sensitivity" (l.393): each of ``methods``
    (None: the comparators), in some cell, relies on the tag, more than TAP and Base do, and
    scores on contaminated images as well as they do (:func:`.medical_claims.reemerge_claim` per
    method, each needed: :func:`.claims.every_part`)."""
    methods = methods or tuple(comparators())
    others = (proposed_method(), BASE)
    parts = [reemerge_claim(runs, data, origins, [m], looks_well=others, relies_more=others)
             for m in methods]
    return every_part(" and ".join(label(m) for m in methods)
                      + " each let the tag re-emerge on some architecture, looking as well as "
                      "TAP and Base", parts)



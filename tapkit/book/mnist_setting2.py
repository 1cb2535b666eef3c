"""The MNIST Setting-2 chapter (``notebooks/teachers.py``): its annotation-quality table, the
figures' labels, the tables beside the paper's, and the findings read from them. The runs come
from :func:`tapkit.experiments.chapter_plans.teachers`; the medical chapter's counterpart is
:mod:`.medical_setting2`."""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd
from torch import Tensor

from .. import teachers
from ..config import TrainConfig
from ..data import VAL_FRACTION, Split, mnist_pixels

MNIST_SIDE = 28  # Decoy-MNIST's images, as the two-layer CNN takes them
from ..experiments.cells import Annotation, tau_text
from ..experiments.setting2_plans import annotator
from ..experiments.setting2_protocols import LambdaSource, Threshold
from ..methods import Kind, methods_where, no_xs, proposed_method
from . import labels, profile_notes, report

PAPER_TRAIN_DIGITS = 60_000  # MNIST's training split, before the validation split is taken out
# the paper's teachers' clean holdouts: 10% and 1% of the training digits left after the 10%
# validation split (5,400 and 540), as tapkit splits them (tapkit.data.build_splits)
PAPER_HELD = {f: round(PAPER_TRAIN_DIGITS * (1 - VAL_FRACTION) * f) for f in (0.1, 0.01)}


def held_out_text(held: Mapping[float, int], source: object) -> str:
    """How many clean digits the teachers learn from here, beside the paper's (``held``: the
    clean holdout's size per teacher fraction)."""
    return ("The paper's teachers learn from "
            + " and ".join(f"{PAPER_HELD[f]:,}" for f in held if f in PAPER_HELD)
            + " clean digits; here (source `" + str(source) + "`) their clean holdouts hold "
            + " and ".join(f"{n:,}" for n in held.values()) + " digits"
            + ("" if all(held[f] >= PAPER_HELD.get(f, 0) for f in held)
               else ", so these teachers are weaker than the paper's, the smallest one most")
            + ".")


def _teacher_rows(e: Tensor, data: Split, fraction: float, seed: int,
                  taus: Sequence[float]) -> list[dict]:
    rows = teachers.annotation_quality(e, data.mask, taus)
    return [{"annotator": annotator(fraction), "seed": seed, **r} for r in rows]


def _random_rows(truth: Tensor, seed: int, taus: Sequence[float]) -> list[dict]:
    coverage = truth.mean().item()
    rows = []
    for tau in taus:
        for name, cov in (("random (GT coverage)", coverage), ("random (coverage τ)", tau)):
            pred = teachers.random_masks(tuple(truth.shape), cov, seed)
            precision, recall = teachers.precision_recall(pred, truth)
            rows.append({"annotator": name, "seed": seed, "rule": "random", "tau": tau,
                         "coverage": pred.mean().item(), "precision": precision, "recall": recall})
    return rows


def annotation_quality(sal: Mapping[tuple[float, int], tuple[Tensor, Split]],
                       fractions: Sequence[float], seeds: Sequence[int],
                       taus: Sequence[float]) -> tuple[pd.DataFrame, float]:
    """The annotation-quality table (mean over ``seeds``) and the ground truth's coverage of the
    training pixels. ``sal[(fraction, seed)]``: a teacher's saliency E and the contaminated
    training split. Rows: each teacher under both threshold rules, and two random baselines per
    seed (masks of the ground truth's coverage, and of coverage τ); ``lift`` is the precision in
    units of the random masks' (the ground truth's coverage)."""
    quality = pd.DataFrame(
        [r for f in fractions for seed in seeds for r in _teacher_rows(*sal[(f, seed)], f, seed, taus)]
        + [r for seed in seeds for r in _random_rows(sal[(fractions[0], seed)][1].mask, seed, taus)])
    mean = quality.groupby(["annotator", "rule", "tau"], sort=False)[
        ["coverage", "precision", "recall"]].mean().reset_index()
    gt_coverage = mean.loc[mean.annotator == "random (GT coverage)", "coverage"].mean()
    mean["lift"] = mean["precision"] / gt_coverage
    return mean, gt_coverage


def saliency_by_region(sal: Mapping[tuple[float, int], tuple[Tensor, Split]]) -> pd.DataFrame:
    """Each teacher's mean E on the decoy patch, the digit's strokes and the blank background of
    the contaminated training images (:func:`tapkit.teachers.saliency_by_region`); one row per
    teacher, means over seeds (``sal[(fraction, seed)]``, as :func:`annotation_quality`). E < τ
    marks the region with the lowest E first: where that is the background, not the patch, the
    masks miss the decoy."""
    rows = []
    for (fraction, seed), (e, split) in sal.items():
        regions = teachers.saliency_by_region(e, split.mask, mnist_pixels(split.x) / 255)
        rows.append({"annotator": annotator(fraction), "seed": seed, "patch": regions["tag"],
                     "stroke": regions["stroke"], "background": regions["background"]})
    return pd.DataFrame(rows).groupby("annotator", sort=False)[
        ["patch", "background", "stroke"]].mean().reset_index()


def quality_findings(quality_mean: pd.DataFrame, gt_coverage: float,
                     regions: pd.DataFrame | None = None) -> str:
    """What the annotation-quality table shows: the teachers' precision against random masks',
    and why (``regions``: :func:`saliency_by_region`)."""
    taught = quality_mean[quality_mean.annotator.str.startswith("teacher")]
    lo, hi = taught["lift"].min(), taught["lift"].max()
    verdict = ("better than random at every rule and τ" if lo > 1 else
               "no better than random anywhere" if hi <= 1 else "better than random only in places")
    why = ("an input gradient is near zero on the flat background, so E < τ marks much of it, "
           "while a bright patch drives the first-layer filters like a stroke of a digit does and "
           "keeps a sizeable gradient")
    if regions is not None and len(regions):
        measured = "; ".join(
            f"{labels.label(r.annotator)}: patch {r.patch:.3f}, background {r.background:.3f}, "
            f"strokes {r.stroke:.3f}" for r in regions.itertuples())
        why += (f". Measured, the teachers' mean E (normalised to [0, 1] per image) is {measured}"
                " — where the patch's E lies above the background's, E < τ marks the background "
                "first and the masks miss the decoy")
    return (
        f"The patches cover {gt_coverage:.1%} of the training pixels, so any random mask has a "
        f"precision of about {gt_coverage:.1%} (lift 1). The teachers' precision lies between "
        f"{taught.precision.min():.1%} and {taught.precision.max():.1%} (lift {lo:.2f}–{hi:.2f}): "
        f"{verdict}. Under the absolute rule the recall grows with τ mostly because the coverage "
        f"does: {why}. The paper reports better-than-random teacher annotations on PNEU and "
        "KNEE and gives no annotation-quality numbers for MNIST; where the teachers' masks are no "
        "better than random here, the report does not judge the claim that the 1% teacher's "
        "annotations are useful on these digits.")


def quality_table(quality_mean: pd.DataFrame) -> pd.DataFrame:
    """:func:`annotation_quality`'s means as the chapter shows them: one row per annotator,
    threshold rule and τ it has (a teacher under both rules, a random baseline under its own),
    its precision, recall, coverage and lift (three decimals): four columns that fit the page,
    where one column per annotator and measure made sixteen, half of them empty."""
    return (quality_mean.set_index(["annotator", "rule", "tau"])
            [["precision", "recall", "coverage", "lift"]].round(3))


def quality_figure(quality_mean: pd.DataFrame):
    """The paper's annotation-precision/recall figure: pixel precision and recall against τ,
    one panel per threshold rule (:data:`tapkit.teachers.THRESHOLD_RULES`: Eq. 14's absolute
    level, the released code's quantile), each teacher solid and the random baselines dotted
    (``quality_mean``: :func:`annotation_quality`'s means over seeds)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2), sharey=True)
    for ax, rule in zip(axes, teachers.THRESHOLD_RULES):
        for name, group in quality_mean.groupby("annotator", sort=False):
            part = group if group.rule.iloc[0] == "random" else group[group.rule == rule]
            style = ":" if "random" in name else "-"
            shown = labels.label(name)
            ax.plot(part.tau, part.precision, style, marker="o", label=f"{shown} precision")
            ax.plot(part.tau, part.recall, style, marker="s", label=f"{shown} recall")
        ax.set_xscale("log")
        ax.set_xlabel("τ")
        ax.set_title(f"{rule} rule" + (" (paper, Eq. 14)" if rule == "absolute"
                                       else " (released code)"))
    axes[0].set_ylabel("pixel precision / recall")
    axes[1].legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1))
    fig.suptitle("Annotation quality on Decoy-MNIST", fontsize=8)
    fig.tight_layout()
    return fig


def masks_figure(e: Tensor, data: Split, teacher: str, taus: Sequence[float], n: int = 3):
    """What a teacher's masks look like: ``n`` contaminated training images of different classes
    (the split is sorted by class), their ground-truth patch, the teacher's saliency E and the
    masks of both threshold rules at the smallest and largest of ``taus`` (bright: annotated)."""
    import matplotlib.pyplot as plt

    pick = [(2 * i + 1) * len(data) // (2 * n) for i in range(n)]
    e, data = e[pick], data.subset(pick)
    panels = [("image", data.x), ("ground truth", data.mask), (f"E ({labels.label(teacher)})", e)]
    panels += [(f"{rule} τ={tau:g}", teachers.threshold(e, tau, rule))
               for rule in teachers.THRESHOLD_RULES for tau in (min(taus), max(taus))]
    fig, axes = plt.subplots(n, len(panels), figsize=(1.3 * len(panels), 1.4 * n))
    for row in range(n):
        for col, (name, images) in enumerate(panels):
            axes[row, col].imshow(images[row, 0], cmap="gray" if col == 0 else "magma")
            axes[row, col].set_xticks([]), axes[row, col].set_yticks([])
            if row == 0:
                axes[row, col].set_title(name, fontsize=7)
    fig.suptitle("Teacher annotations (bright = annotated)", fontsize=8)
    fig.tight_layout()
    return fig


def bar_labels(summary: pd.DataFrame, annotations: Sequence[str]) -> pd.DataFrame:
    """Mean per (annotation, τ) and split, in the order of ``annotations``, labelled for the x
    axis."""
    wide = report.printable(summary).pivot(index=["annotation", "tau"], columns="split", values="mean")
    order = [Annotation(a).value for a in annotations]
    wide = wide.iloc[sorted(range(len(wide)), key=lambda i: order.index(wide.index[i][0]))]
    wide.index = [a if tau == "any" else f"{a}\nτ={tau}" for a, tau in wide.index]
    return wide


def teacher_figure(summary: pd.DataFrame, runs: pd.DataFrame, annotations: Sequence[str],
                   method: str, title: str):
    """The MNIST teacher figure (:func:`.report.plot_metric_and_delta`): ``method``'s students
    per annotation and τ (:func:`bar_labels`), with the std over seeds as error bars on both
    panels (Δ's from the per-run ``runs``, :func:`.report.delta_std`) and the paper's value as a
    black mark where it has the same row (:func:`paper_rows`: its random rows are per τ, ours
    one per seed, so random has none)."""
    wide = bar_labels(summary, annotations)
    spread = report.delta_std(runs, ["method", "annotation", "tau"]).rename("mean").reset_index()
    paper = paper_rows(method)
    shown = {Annotation(a).value for a in annotations} - {Annotation.RANDOM.value}
    paper = paper[paper.annotation.isin(shown)].drop_duplicates(["annotation", "tau", "split"])
    return report.plot_metric_and_delta(
        wide, title,
        err=bar_labels(summary.assign(mean=summary["std"]), annotations)["contaminated"],
        paper=bar_labels(paper, annotations).reindex(wide.index),
        delta_err=bar_labels(spread.assign(split="delta"), annotations)["delta"])


def paper_rows(method: str) -> pd.DataFrame:
    """The paper's MNIST rows of ``method``: its teacher table's teacher and random rows, and its
    Setting-1 table's ground-truth and No-XS rows (τ NaN: none applies)."""
    teacher_paper = report.paper_values("teacher_results").query("dataset == 'MNIST'")
    teacher_paper = teacher_paper.query("method == @method").assign(
        tau=lambda f: f["tau"].astype(float))
    gt = report.paper_values("gt_results").query(
        "dataset == 'MNIST' and artifact == 'tag' and method == @method")
    gt = gt.assign(annotation=Annotation.GROUND_TRUTH.value, tau=float("nan"))
    reference = no_xs()  # the No-XS rows' method
    none = report.paper_values("gt_results").query(
        "dataset == 'MNIST' and artifact == 'tag' and method == @reference").assign(
        annotation=Annotation.NONE.value, tau=float("nan"))
    return pd.concat([teacher_paper, gt, none], ignore_index=True)


def ours_with_paper(summary: pd.DataFrame, method: str, train_taus: Sequence[float],
                    annotations: Sequence[str]) -> pd.DataFrame:
    """One row per (annotation, τ) beside the paper's; our random row is repeated under every
    training τ, beside the paper's random row of that τ. The rows are labelled by the
    annotation's name and τ as printed (``"any"`` where none applies)."""
    ours = report.printable(summary[(summary.method == method) | (summary.annotation == Annotation.NONE)])
    rnd = ours[ours.annotation == Annotation.RANDOM]
    spread = [rnd.assign(tau=tau_text(tau)) for tau in train_taus] if len(rnd) else []
    ours = pd.concat([ours[ours.annotation != Annotation.RANDOM], *spread], ignore_index=True)
    both = report.beside(ours, report.printable(paper_rows(method)), ["annotation", "tau", "split"])
    names = [Annotation(a).value for a in annotations]
    order = [(a, tau_text(tau)) for tau in train_taus for a in names
             if a not in (Annotation.GROUND_TRUTH, Annotation.NONE)]
    order += [(Annotation.GROUND_TRUTH.value, "any"), (Annotation.NONE.value, "any")]
    order = [o for o in order if o in set(zip(both.annotation, both.tau))]
    return report.side_by_side(both, ["annotation", "tau"], order)


def xs_teacher_table(summary: pd.DataFrame) -> pd.DataFrame:
    """RRR's and RBR's students with teacher and random masks (a :func:`.report.summarise`
    table by method, annotation and τ), ``mean (std)`` per split: the paper has no MNIST values
    to set beside them."""
    return report.mean_std_table(report.printable(summary),
                                 {k: (k, None) for k in ("method", "annotation", "tau")},
                                 sort=True)


def kd_cost_table(s, methods: Sequence[str] | None = None, rounds: int | None = None,
                  device: str = "cpu") -> pd.DataFrame:
    """One training step of each student of ``methods`` (KD/AT/JT), of TAP and of No XS on the
    protocol's model, batch and optimiser, with a frozen teacher of the same architecture: its
    seconds in each of ``rounds`` interleaved rounds (:func:`tapkit.benchmark.model_speed`: every
    student once a round, in every order in turn, so two students' times pair by round and a
    busy neighbour slows both) and its peak memory (:func:`tapkit.benchmark.step_memory_mb`:
    exact on a CPU, the same each pass). The appendix's cost of JT's second-order derivatives:
    "training times and memory usage suffer". One row per (method, round); MNIST's images are
    28 px. ``rounds`` None: the profile's Table-1 default of paired rounds (quick: 24, where JT's
    step, ~3x KD's on the CPU, comes out within a few per cent; smoke: 2)."""
    from ..benchmark import model_speed, step_memory_mb
    from ..experiments.protocols import bench

    b = bench(s.name)
    rounds = rounds or b.paired_steps or b.steps
    run = s.settings()
    methods = methods or methods_where(kind=Kind.DISTILLATION)
    # TAP beside them: the claim compares JT with "TAP and KD/AT" (the claims table's test)
    cases = list(dict.fromkeys([no_xs(), *methods, proposed_method()]))
    size = run.image_size or MNIST_SIDE
    peaks = step_memory_mb(run.model, cases, run.batch_size, size, run.optimizer, device)
    timed = model_speed(run.model, cases, run.batch_size, size, rounds, device, warmup=1,
                        paired_steps=rounds, optimizer=run.optimizer)
    return pd.DataFrame([{"method": row["method"], "round": r, "seconds": t,
                          "peak_mem_mb": peaks[row["method"]]}
                         for row in timed for r, t in enumerate(row.get("step_s") or [])])


def kd_cost_shown(cost: pd.DataFrame) -> pd.DataFrame:
    """:func:`kd_cost_table` as the page prints it, one row per student by its label: the median
    step in milliseconds and its multiple of No XS's, the peak memory in MB and its multiple."""
    per = cost.groupby("method", sort=False).agg(step=("seconds", "median"),
                                                  peak=("peak_mem_mb", "first"))
    base = per.loc[no_xs()]
    return pd.DataFrame({"method": [labels.label(m) for m in per.index],
                         "median step (ms)": (per["step"] * 1000).round(1).to_numpy(),
                         "× No XS (time)": (per["step"] / base["step"]).round(2).to_numpy(),
                         "peak memory of one step (MB)": per["peak"].round(1).to_numpy(),
                         "× No XS (memory)": (per["peak"] / base["peak"]).round(2).to_numpy()}
                        ).set_index("method")


def kd_left_out(s, t) -> str:
    """The MNIST distillation page's closing line: what its Setting-1 protocol ``s`` and
    teachers protocol ``t`` leave out of the paper's KD/AT/JT table."""
    left = []
    if set(t.kd_fractions) != set(t.fractions):
        untrained = [labels.in_prose(annotator(f)) for f in t.fractions if f not in t.kd_fractions]
        left.append(f"KD, AT and JT with {', '.join(untrained)} (its TAP row is trained)")
    return profile_notes.leaves_out(left + profile_notes.protocol_left_out(s))


def teachers_left_out(s, train_taus: Sequence[float], extra: Sequence[str],
                      held: Mapping[float, int]) -> str:
    """The MNIST Setting-2 page's closing line: what a profile (Setting-1 protocol ``s``) leaves
    out of the paper's MNIST Setting 2 (``held``: the teachers' clean holdout sizes per
    fraction, as :func:`held_out_text` gets them)."""
    left = []
    if set(train_taus) != {0.01, 0.05, 0.1}:
        left.append(f"students train at τ ∈ {list(train_taus)} only; the paper also trains at the "
                    "other thresholds (annotation quality above covers all three)")
    if not extra:
        left.append("RRR and RBR with teacher masks")
    holdouts = (" (" + " / ".join(f"{n:,}" for n in held.values()) + " clean digits for the "
                "teachers instead of "
                + " / ".join(f"{PAPER_HELD[f]:,}" for f in held if f in PAPER_HELD) + ")")
    return profile_notes.leaves_out(left + profile_notes.protocol_left_out(s, holdouts))


def teachers_text(teacher: TrainConfig, s) -> str:
    """How the teachers train, read from a teacher's config beside the students' protocol
    ``s``: optimiser, batch size and epochs, and which of them differ from the students'."""
    opt = profile_notes.OPTIMIZERS
    how = (f"{opt.get(teacher.optimizer, teacher.optimizer)} at learning rate {teacher.lr:g}, "
           f"batches of {teacher.batch_size}")
    same = ((teacher.optimizer, teacher.lr, teacher.batch_size)
            == (s.optimizer, s.lr, s.batch_size))
    epochs = (f"for {teacher.epochs} epochs, as the students" if teacher.epochs == s.epochs
              else f"for {teacher.epochs} epochs where the students train {s.epochs}")
    return (f"Each teacher trains like a No-XS model on its clean holdout ({how}: "
            + ("the students' optimiser and batch size" if same else
               f"where the students train with {opt.get(s.optimizer, s.optimizer)} at "
               f"learning rate {s.lr:g}, batches of {s.batch_size}")
            + f"), {epochs}, and is scored on the same three test splits as every student. A "
            "teacher that is right for the right reasons scores the same on all three.")


def profile_changes(s, t, paper_s, paper_t, profile: str, threshold: str) -> str:
    """What this profile changes from the paper's MNIST Setting 2 (``paper_s``, ``paper_t``:
    the paper profile's protocols), in one sentence (:func:`.profile_notes.changes`, with the
    teachers' epochs and the students' mask rule ``threshold``), after the students' rule in a
    sentence of its own. ``s``: the Setting-1 protocol on the teachers' seeds."""
    lambdas = ("the paper's teacher-annotation λ" if t.lambda_source is LambdaSource.PAPER
               else "this profile's Setting-1 λ")
    items = profile_notes.changes(s, paper_s, t.xs_methods,
                                  lambdas=dict.fromkeys(t.xs_methods, lambdas), searched=False)
    ours = t.teacher_epochs or s.epochs
    theirs = paper_t.teacher_epochs or paper_s.epochs
    if ours != theirs:
        items.append(f"teachers trained {ours} epochs instead of {theirs}")
    if threshold != paper_t.threshold.value:
        items.append(f"the students' masks by the {threshold} rule where the paper profile uses "
                     f"the {paper_t.threshold.value} rule"
                     + (" (the released code's, on which the paper's λ were tuned)"
                        if paper_t.threshold is Threshold.QUANTILE else ""))
    rule = ("the absolute rule, as the paper states (Eq. 14)" if threshold == "absolute" else
            f"the {threshold} rule, as the authors' released code does")
    return (f"Students here train on masks made by {rule}. "
            + profile_notes.changes_sentence(profile, items))


# ----------------------------------------------------------------------------- distillation

def kd_order(own: str, methods: Sequence[str]) -> list[tuple[str, str]]:
    """The MNIST distillation table's rows: per teacher of the paper's table (10%, then 1%),
    ``own`` (TAP with that teacher's masks) and each of ``methods`` in the order given (the
    registry's KD, AT, JT; the paper prints AT, JT, KD), then No XS."""
    rows = [(annotator(f).value, m) for f in (0.1, 0.01) for m in (own, *methods)]
    return rows + [(report.teacher_name(Annotation.NONE), no_xs())]


def _kd_wide(values: pd.DataFrame, order: Sequence[tuple[str, str]],
             column: str = "mean") -> pd.DataFrame:
    """``values`` (teacher, method, split, ``column``) as one row per (teacher, method) of
    ``order`` that it holds, labelled ``"KD\\nteacher_10"`` for the figure's axis."""
    # dropna=False: one seed's std is NaN in every split, and its columns must stay (no bar)
    wide = values.pivot_table(index=["teacher", "method"], columns="split", values=column,
                              sort=False, dropna=False)
    wide = wide.reindex([o for o in order if o in wide.index])
    wide.index = [f"{method.upper()}\n{who}" for who, method in wide.index]
    return wide


def kd_paper() -> pd.DataFrame:
    """The paper's MNIST distillation table (TAP, KD, AT, JT per teacher) and its Setting-1 No XS
    row (teacher ``"no teacher"``): teacher, method, split, mean, std."""
    paper = report.paper_values("kd_results").query("dataset == 'MNIST'")
    reference = no_xs()  # the No-XS rows' method
    plain = report.paper_values("gt_results").query(
        "dataset == 'MNIST' and artifact == 'tag' and method == @reference")
    both = pd.concat([paper, plain.assign(teacher=report.teacher_name(Annotation.NONE))])
    return both.drop_duplicates(["teacher", "method", "split"])


def kd_figure(summary: pd.DataFrame, runs: pd.DataFrame, order: Sequence[tuple[str, str]],
              title: str):
    """The MNIST distillation figure (:func:`.report.plot_metric_and_delta`): accuracy and
    Δ-accuracy per row of ``order`` (:func:`kd_order`) with the std over seeds as error bars on
    both panels (Δ's from the per-run ``runs``, :func:`.report.delta_std`) and the paper's
    value as a black mark (:func:`kd_paper`)."""
    wide = _kd_wide(summary, order)
    spread = report.delta_std(runs, ["teacher", "method"]).rename("mean").reset_index()
    return report.plot_metric_and_delta(
        wide, title, err=_kd_wide(summary, order, "std")["contaminated"],
        paper=_kd_wide(kd_paper(), order).reindex(wide.index),
        delta_err=_kd_wide(spread.assign(split="delta"), order)["delta"])


def kd_beside_paper(summary: pd.DataFrame,
                    order: Sequence[tuple[str, str]] | None = None) -> pd.DataFrame:
    """Ours beside the paper's MNIST distillation table, mean (std) per split, one row per
    (teacher, method) of the paper's (``order`` first; None: :func:`kd_order` of the registry's
    own and distillation methods); ``–`` on our side for a row this profile does not train."""
    order = kd_order(proposed_method(), methods_where(kind=Kind.DISTILLATION)) \
        if order is None else order
    paper = kd_paper()
    keys = paper[["teacher", "method"]].drop_duplicates()
    ours = keys.merge(pd.DataFrame({"split": list(report.SPLITS)}), how="cross").merge(
        summary, on=["teacher", "method", "split"], how="left")
    both = report.beside(ours, paper, ["teacher", "method", "split"])
    table = both.assign(ours=[report.fmt(m, sd) if not pd.isna(m) else "–"
                              for m, sd in zip(both.ours, both.ours_std)],
                        paper=[report.fmt(m, sd) for m, sd in zip(both.paper, both.paper_std)])
    table = table.pivot(index=["teacher", "method"], columns="split", values=["ours", "paper"])
    table.columns = [f"{split} ({who})" for who, split in table.columns]
    rows = [o for o in order if o in table.index] + [i for i in table.index if i not in order]
    table = table[[f"{sp} ({w})" for sp in report.SPLITS for w in ("ours", "paper")]].reindex(rows)
    table.index = pd.MultiIndex.from_tuples(
        [(labels.label(t), labels.label(m)) for t, m in table.index], names=["teacher", "method"])
    return table

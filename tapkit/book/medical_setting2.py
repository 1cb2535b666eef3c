"""The medical Setting-2 and distillation chapters: their tables, the paper's annotation-quality
figure (fig:overlap) and teacher-student figure (fig:ts), and the findings read from the tables."""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import pandas as pd

from ..experiments.cells import Annotation
from ..experiments.medical_plans import DATASETS
from ..experiments.protocols import medical, medical_teachers
from ..experiments.setting2_plans import annotator, at_pairs
from ..methods import Kind, list_methods, methods_where, no_xs, proposed_method
from ..metrics import tag_reliance, task_metric
from . import report
from .labels import label as _label
from .medical_notes import ARCH_LABELS, constant_score
from .preconditions import none_learned, not_learned_text, over_learned, unlearned
from .profile_notes import leaves_out, protocol_left_out
from .thresholds import MARGIN, clearly_less

_ANNOTATIONS = ("teacher_10", "teacher_1", "random", "ground_truth")
CASE_NAMES = {k: _label(k) for k in (*_ANNOTATIONS, *list_methods())}  # :func:`.labels.label`

# the figures' bars: the annotations, then TAP, the distillation baselines and No XS
ORDER = (*_ANNOTATIONS, proposed_method(), *methods_where(kind=Kind.DISTILLATION), no_xs())


def datasets_left_out(profile: str, datasets: Sequence[str]) -> list[str]:
    """What a medical Setting-2 page leaves out of the profile's data sets (quick: KNEE), as a
    clause of its "this profile leaves out" list, or nothing."""
    skipped = [e for e in medical(profile).experiments if e not in datasets]
    return ([" and ".join(DATASETS[e] for e in skipped) + " (its Setting-2 claims are judged on "
             "PNEU; the paper profile runs both)"] if skipped else [])


def teachers_left_out(profile: str, s, t, datasets: Sequence[str]) -> str:
    """The medical Setting-2 page's closing line: what ``profile`` (its Setting-1 protocol ``s``
    and teachers protocol ``t``, on ``datasets``) leaves out of the paper profile's."""
    paper_t, left = medical_teachers("paper"), datasets_left_out(profile, datasets)
    if set(t.models) != set(paper_t.models):
        left.append("the students " + ", ".join(ARCH_LABELS[m] for m in paper_t.models
                                                if m not in t.models)
                    + " (their XS runs are over this profile's budget)")
    if set(t.train_taus) != set(paper_t.train_taus):
        left.append(f"students at τ {[x for x in paper_t.train_taus if x not in t.train_taus]}")
    if set(t.xs_methods) != set(paper_t.xs_methods):
        left.append("RRR and RBR with teacher masks (the paper's appendix)")
    if t.lambda_source != "paper":
        left.append("the paper's teacher-annotation λ (tuned at 224 px from ImageNet weights); "
                    "the students here train with Setting 1's λ of this profile")
    return leaves_out(protocol_left_out(s) + left, data=True)


def kd_left_out(profile: str, s, t, datasets: Sequence[str]) -> str:
    """The medical distillation page's closing line, as :func:`teachers_left_out`."""
    paper_t, left = medical_teachers("paper"), datasets_left_out(profile, datasets)
    if set(t.kd_models) != set(paper_t.kd_models):
        left.append("the students " + ", ".join(ARCH_LABELS[m] for m in paper_t.kd_models
                                                if m not in t.kd_models))
    if set(t.kd_fractions) != set(paper_t.kd_fractions):
        left.append("KD, AT and JT with the 1% teacher")
    if set(t.kd_methods) != set(paper_t.kd_methods):
        left.append(", ".join(CASE_NAMES[m] for m in paper_t.kd_methods if m not in t.kd_methods)
                    + " students (JT's double backward takes 63-74 CPU-s a ResNet-18 run here, "
                      "KD and AT 23-27: over the CI budget; the MNIST distillation chapter "
                      "trains JT)")
    if t.lambda_source != "paper":
        left.append(f"the paper's λ for KD, AT and JT (tuned at 224 px from ImageNet weights): "
                    f"here λ = {t.kd_lambda:g} for "
                    + " and ".join(CASE_NAMES[m] for m in t.kd_methods) + ", without a search")
    return leaves_out(protocol_left_out(s) + left, data=True)


def teacher_rows(index: pd.Index) -> pd.Index:
    """An (experiment, teacher annotation) index as the teachers' table shows it: the data set
    upper-cased, the teacher by name (``("pneu", "teacher_10")`` -> ``("PNEU", "10% teacher")``)."""
    return index.map(lambda k: (k[0].upper(), CASE_NAMES[k[1]])).set_names(["data", "teacher"])


def teacher_table(perf: pd.DataFrame, teacher_runs: pd.DataFrame, datasets: Sequence[str],
                  fractions: Sequence[float]) -> pd.DataFrame:
    """The teachers' table: per data set and teacher (:func:`teacher_rows`), the mean (std)
    over seeds on each test split (``perf``: :func:`.report.summarise` of ``teacher_runs`` by
    experiment and teacher) and the clean images it trained on (``teacher_runs["images"]``)."""
    table = report.mean_std_table(perf, {"data": ("experiment", str.upper),
                                         "teacher": ("teacher", CASE_NAMES)})
    images = teacher_runs.groupby(["experiment", "teacher"])["images"].first()
    table["clean training images"] = images.set_axis(teacher_rows(images.index))
    return table.reindex(teacher_rows(pd.MultiIndex.from_tuples(
        [(e, annotator(f)) for e in datasets for f in fractions])))


def paper_teachers_text() -> str:
    """The paper's PNEU and KNEE teachers on the clean test split (its teacher table), a
    sentence."""
    paper = report.paper_values("teacher_performance").query(
        "dataset in ['PNEU', 'KNEE'] and split == 'clean'")
    return ("The paper's teachers, on the real data at 224 px from ImageNet weights, on the "
            "clean test split: " + "; ".join(
                f"{r.dataset} {CASE_NAMES[r.teacher]} {r.metric.upper()} {r.mean:.3f}"
                for r in paper.itertuples()) + ".")


PAPER_QUALITY_TEXT = ("The paper finds the annotations better than random (precision and recall "
                      "of circa 1.9% for random masks), recall rising and precision falling with "
                      "τ, and the 1% teacher almost as good as the 10% one.")
"""The paper's reading of its annotation-overlap figure (fig:overlap), set under ours."""


def with_tag_coverage(quality: pd.DataFrame, truth: Mapping[str, float]) -> pd.DataFrame:
    """:func:`annotation_quality`'s table with each data set's share of tagged pixels
    (``tag_coverage``: a random mask's precision), as the chapter writes it and the opening
    reads it."""
    return quality.assign(tag_coverage=quality.experiment.map(truth))


def _rank(case: str) -> int:
    return ORDER.index(case) if case in ORDER else len(ORDER)


def quality_rows(experiment: str, teacher: str, seed: int, rows: Sequence[dict]) -> list[dict]:
    """Annotation-quality rows of one teacher (:func:`tapkit.teachers.annotation_quality`),
    labelled."""
    return [{"experiment": experiment, "annotator": teacher, "seed": seed, **r} for r in rows]


def annotation_quality(sal: Mapping[tuple, tuple], taus: Sequence[float],
                       threshold: str) -> tuple[pd.DataFrame, dict[str, float]]:
    """The teachers' annotation quality per data set, teacher, rule and τ, the mean over seeds
    (``sal[(experiment, teacher, seed)]``: a teacher's saliency E and the tagged training split
    its students see; :func:`tapkit.teachers.annotation_quality` under ``threshold``), and each
    data set's tag coverage (the share of pixels its ground-truth masks mark)."""
    from .. import teachers

    quality = pd.DataFrame([row for (e, name, seed), (sal_e, data) in sal.items()
                            for row in quality_rows(e, name, seed, teachers.annotation_quality(
                                sal_e, data.mask, taus, [threshold]))])
    quality = quality.groupby(["experiment", "annotator", "rule", "tau"], sort=False)[
        ["coverage", "precision", "recall"]].mean().reset_index()
    truth: dict[str, float] = {}
    for (e, *_), (_, data) in sal.items():
        truth.setdefault(e, data.mask.mean().item())
    return quality, truth


def saliency_by_region(sal: Mapping[tuple, tuple]) -> pd.DataFrame:
    """Per data set and teacher, its mean E on the tags, on the digits' strokes and on the blank
    background of the tagged training images (:func:`tapkit.teachers.saliency_by_region`, the
    images' brightness from their ImageNet normalisation), means over seeds
    (``sal[(experiment, teacher, seed)]``, as :func:`annotation_quality`): why the masks find the
    tags or miss them."""
    from .. import teachers
    from ..data import brightness

    rows = [{"experiment": e, "annotator": name, "seed": seed,
             **teachers.saliency_by_region(sal_e, data.mask, brightness(data.x))}
            for (e, name, seed), (sal_e, data) in sal.items()]
    return pd.DataFrame(rows).groupby(["experiment", "annotator"], sort=False)[
        ["tag", "stroke", "background"]].mean().reset_index()


def random_coverage(sal: Mapping[tuple, tuple], taus: Sequence[float],
                    threshold: str) -> dict[str, dict[float, float]]:
    """Per data set, the share of pixels the teachers' masks cover at each τ of ``taus`` under
    ``threshold`` (:func:`tapkit.experiments.setting2_plans.mask_coverage`): what the random
    masks of that τ cover, as the paper's random column changes with τ."""
    from ..experiments.setting2_plans import mask_coverage

    maps: dict[str, list] = {}
    for (e, *_), (sal_e, _) in sal.items():
        maps.setdefault(e, []).append(sal_e)
    return {e: mask_coverage(m, taus, threshold) for e, m in maps.items()}


def coverage_text(coverage: Mapping[str, Mapping[float, float]]) -> str:
    """:func:`random_coverage` in a sentence."""
    return "Random masks' coverage per τ: " + "; ".join(
        f"{e.upper()} " + ", ".join(f"τ={tau:g}: {c:.1%}" for tau, c in cov.items())
        for e, cov in coverage.items()) + "."


def plot_overlap(quality: pd.DataFrame, truth_coverage: dict[str, float], title: str):
    """fig:overlap: precision (solid) and recall (dashed) of each teacher's annotations against
    the tags at every τ, one panel per data set; random masks of any coverage have a precision
    of the tags' coverage (dotted)."""
    import matplotlib.pyplot as plt

    experiments = list(dict.fromkeys(quality.experiment))
    fig, axes = plt.subplots(1, len(experiments), figsize=(4.5 * len(experiments), 3.2),
                             squeeze=False)
    for ax, experiment in zip(axes[0], experiments):
        part = quality[quality.experiment == experiment]
        for name, group in part.groupby("annotator", sort=False):
            line, = ax.plot(group.tau, group.precision, "-o", label=f"{CASE_NAMES[name]} precision")
            ax.plot(group.tau, group.recall, "--s", color=line.get_color(),
                    label=f"{CASE_NAMES[name]} recall")
        ax.axhline(truth_coverage[experiment], ls=":", color="gray",
                   label="random precision (tag coverage)")
        ax.set_xscale("log")
        ax.set_xlabel("τ")
        ax.set_ylim(0, None)
        ax.set_title(experiment.upper(), fontsize=report.MIN_FONT_PT)
    axes[0][0].set_ylabel("pixel precision / recall")
    axes[0][-1].legend(fontsize=report.MIN_FONT_PT, loc="upper left", bbox_to_anchor=(1.02, 1))
    report.titled(fig, title)
    report.fit_text(fig)
    fig.tight_layout()
    return fig


def quality_findings(quality: pd.DataFrame, truth_coverage: dict[str, float],
                     regions: pd.DataFrame | None = None) -> str:
    """Per data set: the teachers' precision in units of random's (lift), whether recall grows
    with τ, and how close the 1% teacher comes to the 10% one (the paper's three observations);
    where they are no better than random, why, measured (``regions``:
    :func:`saliency_by_region`)."""
    lines = []
    for experiment, part in quality.groupby("experiment", sort=False):
        cov = truth_coverage[experiment]
        lift = part.precision / cov
        rising = all(g.sort_values("tau").recall.is_monotonic_increasing
                     for _, g in part.groupby("annotator"))
        by = part.groupby("annotator").precision.mean()
        gap = (f"; mean precision of the 1% teacher {by['teacher_1']:.1%} against the 10% "
               f"teacher's {by['teacher_10']:.1%}" if {"teacher_1", "teacher_10"} <= set(by.index)
               else "")
        lines.append(
            f"- **{experiment.upper()}**: the tags cover {cov:.1%} of the training pixels, so "
            f"random masks have a precision of {cov:.1%}. The teachers' precision is "
            f"{part.precision.min():.1%}–{part.precision.max():.1%}, {lift.min():.2f}–"
            f"{lift.max():.2f}× random's ("
            + ("better than random everywhere" if lift.min() > 1 else
               "no better than random anywhere" if lift.max() <= 1 else
               "better than random only in places")
            + f"); recall {'grows' if rising else 'does not always grow'} with τ{gap}.")
    lift = quality.precision / quality.experiment.map(truth_coverage)
    if lift.min() < 1:
        lines.append("\nBelow-random precision means the tags' pixels are not among a teacher's "
                     "lowest-E pixels: E < τ marks other pixels first.")
        if regions is not None and len(regions):
            lines[-1] += (" Measured, the teachers' mean E (normalised to [0, 1] per image) on "
                          "the tags, the digits' strokes and the blank background: " + "; ".join(
                              f"{r.experiment.upper()} {_label(r.annotator)}: tags "
                              f"{r.tag:.3f}, strokes {r.stroke:.3f}, background "
                              f"{r.background:.3f}" for r in regions.itertuples())
                          + ". Where the tags' E lies above the background's, E < τ marks the "
                          "blank background before the tags: a tag the teacher never saw still "
                          "drives its early filters, as a stroke does (the MNIST Setting-2 "
                          "chapter measures the same with its corner patches).")
    return "\n".join(lines)


def plot_ts(summary: pd.DataFrame, experiment: str, title: str,
            runs: pd.DataFrame | None = None, constant: float | None = None):
    """fig:ts for one data set: one bar per annotation (and τ) for every architecture
    (``runs`` and ``constant``: :func:`plot_grouped`)."""
    return plot_grouped(report.printable(summary), experiment, ("annotation", "tau"),
                        lambda c, t: CASE_NAMES.get(c, c) + ("" if t == "any" else f" τ={t}"),
                        title, runs if runs is None else report.printable(runs), constant)


def at_pair_table(s, t, experiment: str) -> pd.DataFrame:
    """AT's layer pairs (:func:`.setting2_plans.at_pairs`) for each student architecture of
    ``t`` and of the paper profile's teachers protocol, one row per student and target layer:
    its size and the teacher layer it is compared with."""
    models = dict.fromkeys([*t.kd_models, *medical_teachers("paper").kd_models])
    pairs = pd.concat([at_pairs(s, t, experiment, m) for m in models])
    return pairs.assign(student=pairs.student.map(ARCH_LABELS)).set_index(
        ["student", "student layer"])


def plot_kd(summary: pd.DataFrame, experiment: str, title: str,
            runs: pd.DataFrame | None = None, constant: float | None = None):
    """The distillation figure for one data set: one bar per (teacher, method) (``runs`` and
    ``constant``: :func:`plot_grouped`)."""
    return plot_grouped(summary, experiment, ("method", "teacher"), lambda c, w: CASE_NAMES.get(c, c)
                        + ("" if w == "no teacher" else f" ({CASE_NAMES.get(w, w)})"), title,
                        runs, constant)


def plot_grouped(summary: pd.DataFrame, experiment: str, keys: tuple[str, str],
                 label: Callable[[str, str], str], title: str,
                 runs: pd.DataFrame | None = None, constant: float | None = None):
    """The metric on the contaminated test split (left) and its change when the tags are
    permuted (right): bars per architecture, one colour per value of ``keys`` (the first ordered
    teacher-first as :data:`ORDER`), named by ``label``. With ``runs`` (the per-run frame, its
    ``keys`` as the summary's), a bar none of whose runs learned the task is marked so on the
    right, where its Δ near 0 would read as keeping off the tag; ``constant``: a constant
    prediction's score, drawn on the left (the stand-in's balanced classes)."""
    import matplotlib.pyplot as plt
    import numpy as np

    metric = task_metric(experiment)
    part = summary[summary.experiment == experiment]
    wide = part.pivot_table(index=["model", *keys], columns="split", values="mean", sort=False)
    models = list(dict.fromkeys(part.model))
    bars = sorted({k[1:] for k in wide.index}, key=lambda k: (_rank(k[0]), str(k[1])))
    failed = ({} if runs is None else
              unlearned(runs[runs["experiment"] == experiment], experiment, ("model", *keys)))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    width, x = 0.8 / len(bars), np.arange(len(models))
    for i, bar in enumerate(bars):
        cont = [wide["contaminated"].get((m, *bar), np.nan) for m in models]
        perm = [wide["permuted"].get((m, *bar), np.nan) for m in models]
        offset = x + (i - (len(bars) - 1) / 2) * width
        axes[0].bar(offset, cont, width, label=label(*bar), color=f"C{i % 10}")
        axes[1].bar(offset, np.subtract(perm, cont), width, color=f"C{i % 10}")
        for m, at in zip(models, offset):
            if none_learned(failed.get((m, *bar))):
                down = metric.higher_is_better  # the side a Δ that uses the tag lies on
                axes[1].annotate("did not learn\nthe task", (at, 0), xytext=(0, -6 if down else 6),
                                 textcoords="offset points", rotation=90, ha="center",
                                 va="top" if down else "bottom", fontsize=report.MIN_FONT_PT,
                                 color=f"C{i % 10}")
    if constant is not None:
        report.chance_line(axes[0], constant, "constant predictor")
    axes[0].set_title(f"{metric.name.upper()} on SC(X*, y) test")
    axes[1].set_title(f"Δ-{metric.name.upper()} (permuted − contaminated)")
    axes[1].axhline(0, color="black", lw=0.8)
    for ax in axes:
        ax.set_xticks(x, [_label(m) for m in models])
    ncol = min(len(bars), 4)
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=report.MIN_FONT_PT, ncol=ncol,
               loc="lower center")
    better = "higher" if metric.higher_is_better else "lower"
    report.titled(fig, f"{title}\n{better} is better; a student that uses the tag loses when it "
                       "is permuted")
    report.fit_text(fig)
    fig.tight_layout(rect=(0, 0.075 * ((len(bars) + ncol - 1) // ncol) + 0.02, 1, 1))
    return fig


def _loss(wide: pd.DataFrame, experiment: str) -> pd.Series:
    """Per row of ``wide``, the reliance on the tag (:func:`tapkit.metrics.tag_reliance`): what
    the metric loses when the tags are permuted, more meaning more use of the tag whatever the
    metric's direction (KNEE's MAE: lower is better)."""
    return tag_reliance(wide["contaminated"], wide["permuted"], task_metric(experiment))


def _students(runs: pd.DataFrame | None, experiment: str, loss: pd.Series,
              keys: Sequence[str], shown: Callable[[pd.DataFrame], pd.DataFrame] = lambda f: f
              ) -> tuple[pd.Series, dict]:
    """``loss`` over each student's runs that learned the task, and those that did not
    (:func:`.preconditions.over_learned`, :func:`.preconditions.unlearned`); as it is without
    ``runs``, whose ``keys`` ``shown`` turns into the summary's (:func:`.report.printable` for
    the Setting-2 chapter's annotation and τ). A collapsed student loses nothing when the tags
    are permuted: averaged in, it would pass for one that kept off the tag."""
    if runs is None:
        return loss, {}
    own = shown(runs[runs["experiment"] == experiment])
    return (over_learned(loss, own, task_metric(experiment), keys),
            unlearned(own, experiment, keys))


def _reliance(d: float, failed) -> str:
    """A student's loss when the tags are permuted, and the seeds its mean leaves out."""
    return ("" if pd.isna(d) else f" {d:+.3f}") + not_learned_text(failed)


def ts_findings(summary: pd.DataFrame, experiment: str, method: str | None = None,
                runs: pd.DataFrame | None = None) -> str:
    """Per architecture of ``experiment``: how much each annotation's student of ``method``
    (None: the paper's own, TAP) loses when the tags are permuted, beside No XS and ground truth,
    in the metric's direction, and which students are near chance (a clean score no better than
    a constant prediction's). With ``runs`` (the per-run frame) each loss is over the runs that
    learned the task, and the others are named (:func:`_students`)."""
    method = method or proposed_method()
    metric = task_metric(experiment)
    const = constant_score(experiment)
    part = report.printable(summary[summary.experiment == experiment])
    keys = ["model", "annotation", "tau", "method"]
    wide = part.pivot_table(index=keys, columns="split", values="mean", sort=False)
    loss, failed = _students(runs, experiment, _loss(wide, experiment), keys, report.printable)
    lines = []
    for model in dict.fromkeys(part.model):
        cells, chance = [], []
        for (annotation, tau, m), r in wide.loc[model].iterrows():
            if m not in (method, no_xs()):
                continue
            name = CASE_NAMES.get(annotation, annotation) + ("" if tau == "any" else f" τ={tau}")
            key = (model, annotation, tau, m)
            cells.append(name + _reliance(loss[key], failed.get(key)))
            if (r["clean"] <= const) if metric.higher_is_better else (r["clean"] >= const):
                chance.append(name)
        note = (f" Near chance (clean {metric.name.upper()} no better than a constant prediction's "
                f"{const:.3f}): {', '.join(chance)}." if chance else "")
        lines.append(f"- **{_label(model)}**, loss of {metric.name.upper()} when "
                     f"the tags are permuted (higher = more reliance on the tag): "
                     f"{', '.join(cells)}.{note}")
    return "\n".join(lines) + "\n\n" + _teacher_vs_random(loss)


def _teacher_vs_random(loss: pd.Series) -> str:
    """How often each teacher's students lean on the tag less than the random-mask students of
    the same τ and architecture (by more than :data:`.thresholds.MARGIN`); ``loss`` is indexed
    (model, annotation, τ, method). A cell none of whose students learned the task (NaN) is not
    counted either way."""
    rnd = {(m, tau): d for (m, c, tau, _), d in loss.items()
           if c == Annotation.RANDOM and not pd.isna(d)}
    out = []
    for teacher in (Annotation.TEACHER_10, Annotation.TEACHER_1):
        pairs = [(d, rnd[(m, tau)]) for (m, c, tau, _), d in loss.items()
                 if c == teacher and (m, tau) in rnd and not pd.isna(d)]
        if pairs:
            better = sum(clearly_less(d, r) for d, r in pairs)
            out.append(f"the {CASE_NAMES[teacher]}'s masks in {better} of {len(pairs)}")
    return (f"Students lean on the tag clearly less (by more than {MARGIN:g}) than with random "
            "masks of the same coverage: with " + " and with ".join(out) + " (architecture, τ) cells."
            if out else "")


def results_table(summary: pd.DataFrame, experiment: str) -> pd.DataFrame:
    """Mean (std) per (architecture, method, annotation, τ) and split, as the appendix tables."""
    return report.mean_std_table(report.printable(summary[summary.experiment == experiment]), {
        "architecture": ("model", _label), "method": ("method", CASE_NAMES),
        "annotation": ("annotation", CASE_NAMES), "τ": ("tau", None)})


def kd_findings(summary: pd.DataFrame, experiment: str, runs: pd.DataFrame | None = None) -> str:
    """Per architecture and teacher: each student's loss when the tags are permuted (in the
    metric's direction), beside No XS's; which students lose clearly less than No XS. With
    ``runs`` (the per-run frame) each loss is over the runs that learned the task and the others
    are named (:func:`_students`): a student none of whose runs learned it is never "clearly
    less reliant"."""
    metric = task_metric(experiment)
    part = summary[summary.experiment == experiment]
    keys = ["model", "teacher", "method"]
    loss, failed = _students(runs, experiment, _loss(part.pivot_table(
        index=keys, columns="split", values="mean", sort=False), experiment), keys)
    lines = []
    for model in dict.fromkeys(part.model):
        ref = loss.get((model, "no teacher", no_xs()))
        rows = [(f"{CASE_NAMES.get(c, c)} ({CASE_NAMES.get(w, w)})", d, failed.get((m, w, c)))
                for (m, w, c), d in loss.items() if m == model and c != no_xs()]
        better = [name for name, d, _ in rows
                  if ref is not None and not pd.isna(d) and clearly_less(d, ref)]
        lines.append(f"- **{_label(model)}**: loss of {metric.name.upper()} when "
                     f"the tags are permuted, No XS {ref:+.3f}; "
                     + ", ".join(name + _reliance(d, f) for name, d, f in rows) + ". Clearly "
                     f"less reliant on the tag than No XS (by more than {MARGIN:g}): "
                     + (", ".join(better) or "none") + ".")
    return "\n".join(lines)


def kd_table(summary: pd.DataFrame, experiment: str) -> pd.DataFrame:
    """Mean (std) per (architecture, teacher, method) and split, as the appendix's tables."""
    return report.mean_std_table(summary[summary.experiment == experiment], {
        "architecture": ("model", _label), "annotator": ("teacher", CASE_NAMES),
        "method": ("method", CASE_NAMES)})

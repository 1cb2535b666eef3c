"""The medical chapters (PNEU, KNEE, or their digits stand-in): how their results are tabulated
and drawn. Their run lists (which runs, with which λ) are built in
:mod:`tapkit.experiments.medical_plans`, trained by :mod:`tapkit.experiments.medical_runs` and
loaded by :mod:`tapkit.experiments.medical_maps`; those names are re-exported here, the
chapters' one module to import.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from ..data import MIN_TAG_PX, standin_test_count
from ..methods import is_xs, no_xs, proposed_method
from ..models import get_spec
from ..experiments.executors import set_threads  # noqa: F401
from ..experiments.medical_maps import overlap_frame, overlap_layers, trained  # noqa: F401
from ..experiments.medical_plans import (ARCHITECTURES, DATASETS,  # noqa: F401
                                         EXTRA_ARCHITECTURES, LAMBDA_SETTINGS,
                                         chapter_settings, has_batchnorm, left_out,
                                         medical_runs, paper_lambdas, run_models,
                                         searched_lambdas, stripe_left_out, untrained)
from ..experiments.setting1 import case_config, cases as setting1_cases  # noqa: F401
from ..experiments.medical_runs import (pretraining_frame, read_choice,  # noqa: F401
                                        run_frame, search_and_choose, search_frame,
                                        teacher_frame, teacher_saliencies)
from ..experiments.protocols import Protocol, per_experiment  # noqa: F401
from ..experiments.paper_tables import paper_table1
from ..metrics import TaskMetric, tag_reliance, task_metric  # noqa: F401  (the chapters' metric)
from . import report
from .labels import label
from .medical_notes import (ARCH_LABELS, CASE_LABELS, budget_note, constant_score,  # noqa: F401
                            left_out_note, left_out_record, mark_left_out, override_note,
                            pretraining_note, search_choice_shown, search_findings,
                            search_scores_shown, search_table, standin_caveat,
                            variant_notes)
from ..seedstats import mean_ci, paired_difference
from .claims import on_seeds, per_seed
from .preconditions import failed_seeds, judged_seeds, learned_task
from .medical_claims import cells
from .origin import DataOrigin
from .thresholds import tag_use


# ----------------------------------------------------------------------------- data and notes

def origin(s: Protocol) -> DataOrigin:
    """Whether the protocol runs on the paper's data (a PNEU/KNEE folder) or on the digits
    stand-in (``source="embedded"``): what a table's provenance records as ``origin``."""
    return DataOrigin.STANDIN if s.source == "embedded" else DataOrigin.PAPER


def is_standin(s: Protocol) -> bool:
    """True when the protocol runs the digits stand-in rather than a PNEU/KNEE folder."""
    return origin(s) is DataOrigin.STANDIN


def table_meta(s: Protocol, experiment: str, models: Sequence[str], cases: Sequence[str],
               label: str) -> dict:
    """The provenance a Setting-1 table of ``experiment`` is written with: its label, the
    settings, what data it is on (``origin``: the paper's or the stand-in) and the cells the
    profile leaves out with why (``left_out``, ``{"<model>/<case>": why}``: the report's
    *not run* reasons, :meth:`tapkit.book.evidence.Evidence.left_out`)."""
    return {"label": label, "settings": s.as_dict(), "data": data_name(s, experiment),
            "origin": origin(s).value,
            "left_out": left_out_record(left_out(s, experiment, models, cases))}


def data_name(s: Protocol, experiment: str) -> str:
    """What the results are on, for every caption and figure title."""
    name = DATASETS[experiment]
    if is_standin(s):
        return f"stand-in built from embedded MNIST digits, not {name}"
    return f"{name} ({s.source or '$TAPKIT_DATA'})"


def standin_note(s: Protocol, experiment: str, models: Sequence[str] | None = None) -> str:
    """The visible note at the top of a medical chapter (HTML admonition, so that it renders in
    the book whatever the notebook's Markdown renderer). ``models``: the chapter's architectures,
    whose image size and image counts the note gives as they train (the appendix architectures
    and VGG-16 have their own in the quick profile); None: the protocol's."""
    name = DATASETS[experiment]
    if not is_standin(s):
        return (f'<div class="admonition note"><p class="admonition-title">Data</p><p>These '
                f"results are on {name} read from <code>{s.source or '$TAPKIT_DATA'}</code>.</p></div>")
    task = ("digits 0–4 vs 5–9, tags ABC / XYZ" if experiment == "pneu"
            else "digits 0–4 as grades 0–4, tags ABC / DEF / GHI / JKL / MNO")
    return (f'<div class="admonition warning"><p class="admonition-title">Stand-in data, not '
            f"{name}</p><p>{name} is not available here, so this chapter runs the same code on a "
            f"<b>stand-in built from the embedded MNIST digits</b> ({task}; 3 channels, ImageNet "
            f"normalisation, {_sizes(s, experiment, models)}, {_tag_height(s, experiment)}). "
            f"Every number and figure below is about the stand-in, not about {name}. Point the "
            f"<code>source</code> parameter at the {name} folder to run on the real data."
            "</p></div>")


def _sizes(s: Protocol, experiment: str, models: Sequence[str] | None) -> str:
    """"64×64 px, 300 images per class for training and validation, 100 per class for
    testing": the stand-in's sizes as ``models`` train on it (:meth:`Protocol.settings`, with
    the profile's per-model overrides), each group of architectures named where they differ;
    architectures the profile does not run on ``experiment`` are left out."""
    ran = run_models(s, experiment, [m for m in (models or s.models) if m in s.models],
                     [no_xs(), proposed_method()]) or list(s.models)
    groups: dict[str, list[str]] = {}
    for m in ran:
        r = s.settings(experiment, m)
        test = standin_test_count(r.per_class, r.test_per_class)
        text = (f"{r.image_size}×{r.image_size} px, {r.per_class} images per class for training "
                f"and validation, {test} per class for testing")
        groups.setdefault(text, []).append(label(m))
    if len(groups) == 1:
        return next(iter(groups))
    return "; ".join(f"{' and '.join(names)}: {text}" for text, names in groups.items())


def _tag_height(s: Protocol, experiment: str) -> str:
    """The stand-in's tag height, as the stand-in note says it."""
    px = s.source_for(experiment).tag_px
    if px is None:
        return f"tags at least {MIN_TAG_PX} px tall so that their letters stay legible"
    return (f"tags {px} px tall, where ResNet-18 learns to tell the five apart as the paper's "
            "models do")


# What differs between the two data sets on the Setting-1 page (notebooks/medical_gt.py): its
# metric, task, tags, folder, how the tags are swapped and the stripe's brightness
PAGE_TEXT = {
    "pneu": dict(
        metric="F-score", task="binary (normal vs pneumonia), so the metric is the F-score of the "
        "pneumonia class: **higher is better**", tags='"ABC" for normal and "XYZ" for pneumonia; '
        "the permuted test split swaps them", folder="chest_xray", swap="swapped",
        stripe="255 − label·127; the permuted split swaps the brightness"),
    "knee": dict(
        metric="MAE", task="graded on the ordinal Kellgren-Lawrence scale 0–4, so the metric is "
        "the mean absolute error between predicted and true grades: **lower is better**, and a "
        "model that uses the tag gets a *larger* MAE when the tags are permuted",
        tags='"ABC", "DEF", "GHI", "JKL" or "MNO" for grades 0 to 4; the permuted test split '
        "assigns the tags at random", folder="kneeKL224", swap="permuted",
        stripe="255 − label·51; the permuted split assigns the brightness at random"),
}
STANDIN_TITLE = "digit stand-in"  # the title's mark of a page that runs the stand-in


def page_title(s: Protocol, experiment: str) -> str:
    """The Setting-1 page's title and first paragraph as Markdown (``scripts/run_notebook.py``
    makes it the page's first cell): on the digits stand-in both say so first, and the stand-in
    box (:func:`standin_note`) follows the paragraph."""
    name, text = DATASETS[experiment], PAGE_TEXT[experiment]
    what = (f"the paper's {name} figure ({text['metric']} on the contaminated test split and "
            f"Δ-{text['metric']} when the tags are {text['swap']}) and its appendix table "
            "(contaminated / permuted / clean, mean and std over seeds) for VGG-16, ResNet-18 and "
            "DenseNet-121")
    rest = (f"{name} is {text['task']}. Every training image carries a text tag in a random "
            f"corner, {text['tags']}. Base trains on clean images; No XS on tagged images "
            "without explanatory supervision; RRR, RBR and TAP on tagged images with the "
            "ground-truth tag masks, at the λ of this profile's λ search (the paper's "
            "hyperparameter table for ground-truth annotations where a profile does not search).")
    if is_standin(s):
        return (f"# Setting 1 on {name} ({STANDIN_TITLE})\n\n"
                f"This page runs on a **stand-in built from embedded MNIST digits, not on "
                f"{name}** ({name} is not available here; the box below says how the stand-in "
                f"is made). On the stand-in it reproduces {what}. {rest}")
    return f"# Setting 1 on {name}\n\n{what[0].upper()}{what[1:]}. {rest}"


# ----------------------------------------------------------------------------- tables and figures

RUN_COLUMNS = ["model", "case", "seed", "lam", "status", "contaminated", "permuted", "clean",
               "val_constant", "seconds"]


def runs_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per run of a medical table (:data:`RUN_COLUMNS`): the reproduction report's
    paired differences over seeds (:mod:`.medical_claims`) read it."""
    return frame[[c for c in RUN_COLUMNS if c in frame.columns]].reset_index(drop=True)


def seed_table(runs: pd.DataFrame, experiment: str) -> pd.DataFrame:
    """Per architecture and case of a per-run table (:func:`runs_table`): the clean score and
    the reliance on the tag (:func:`tapkit.metrics.tag_reliance`), the first over its converged
    seeds, the second over those that learned the task (:func:`.preconditions.learned_task`: a
    collapsed run loses nothing when the tags are permuted, and averaged in would pass for one
    that kept off the tag), as means with their 95% Student-t intervals cut to the metric's
    range; for each XS method No
    XS's reliance minus its own, paired over the seeds where the report may judge it (both
    learned the task and No XS took the tag, :mod:`.preconditions`); and the seeds each row's
    claims cannot read, with why: what the report's verdicts read, flagged on the page."""
    metric = task_metric(experiment)
    rows = []
    for _, model, grp, rel in cells({experiment: runs}):
        none = per_seed(grp, no_xs(), rel)
        for case, cell in grp.groupby("case", sort=False):
            xs = is_xs(case)
            kept = judged_seeds(grp, rel, [case, no_xs()] if xs else [case], metric, shortcut=xs)
            own = per_seed(grp, case, rel)
            paired = on_seeds(own, kept.kept)
            done = cell[cell["status"] == "ok"]
            learned = set(cell.loc[learned_task(cell, metric), "seed"].astype(int))
            relied = [v for seed, v in own.items() if int(seed) in learned]
            rows.append({"architecture": label(model),
                         "method": label(case), "seeds": len(done),
                         f"clean {metric.label}": mean_ci(done.clean, bounds=metric.range()).text()
                         if len(done) else "did not converge",
                         "reliance on the tag": mean_ci(relied, bounds=metric.range(1)).text()
                         if relied else "—",
                         "No XS − this reliance (paired)": paired_difference(
                             none, paired, bounds=metric.range(2)).text()
                         if xs and set(none) & set(paired) else "",
                         "not judged (precondition)": "; ".join(
                             f"seed {s}: {why}" for s, why in sorted(kept.dropped.items()))})
    return pd.DataFrame(rows)


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean/std over seeds per (model, case, split), as the paper's appendix tables."""
    return report.summarise(frame, ["model", "case"])


def paper_summary(experiment: str, artifact: str = "tag") -> pd.DataFrame:
    """The paper's appendix values for ``experiment`` (``gt_results.csv``) in our summary's
    columns: ``model``, ``case``, ``split``, ``mean``, ``std`` (and its ``status``)."""
    paper = report.paper_values("gt_results")
    paper = paper[(paper.dataset == DATASETS[experiment]) & (paper.artifact == artifact)]
    return paper.rename(columns={"architecture": "model", "method": "case"})


def beside_paper(summary: pd.DataFrame, experiment: str, artifact: str = "tag") -> pd.DataFrame:
    """Our mean beside the paper's (``gt_results.csv``) per architecture, case and split."""
    return report.beside(summary, paper_summary(experiment, artifact), ["model", "case", "split"])


def wide_table(both: pd.DataFrame, models: Sequence[str], cases: Sequence[str],
               left: Mapping[tuple[str, str], str] | None = None,
               paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (architecture, case): ``contaminated (ours)``, ``contaminated (paper)``, ...
    formatted as the paper prints them (mean (std), :func:`.report.side_by_side`); with ``left``
    (cells the profile does not run), those say *not run* and why, beside the paper's numbers
    (``paper``: :func:`paper_summary`)."""
    labelled = both.assign(architecture=both.model.map(label),
                           method=both.case.map(label))
    order = [(label(m), label(c)) for m in models for c in cases]
    table = report.side_by_side(labelled, ["architecture", "method"], order)
    cells = ({} if paper is None else
             {(r.model, r.case, r.split): report.fmt(r.mean, r.std) if pd.notna(r.mean) else "–"
              for r in paper.itertuples()})
    return mark_left_out(table, left, models, cases, cells) if left else table


def summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    """A :func:`summarise` table as the paper prints its appendix tables: one row per
    architecture and method (their labels, sorted), ``mean (std)`` per split; for a chapter the
    paper has no table for (the extra architectures), so nothing stands beside it."""
    return report.mean_std_table(summary, {"architecture": ("model", ARCH_LABELS),
                                           "method": ("case", CASE_LABELS)}, sort=True)


LOSS_COLUMNS = ["model", "case", "lam", "epochs", "status", "task_loss_first", "task_loss_last",
                "seconds"]
DETAIL_COLUMNS = ["model", "trained as", "case", "lam", "options", "epochs", "batch_size",
                  "status", "weights", "task_loss_first", "task_loss_last", "seconds"]


def loss_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per run of :func:`run_frame`: its λ, epochs, status, task loss in the first and last
    epoch and seconds (:data:`LOSS_COLUMNS`), to three decimals: whether a run learned at all."""
    return frame[LOSS_COLUMNS].round(3)


def details_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per run of :func:`run_frame`, with the architecture each trained as (``trained as``):
    everything that tells two runs apart (:data:`DETAIL_COLUMNS`: λ, options, epochs, batch,
    starting weights) and how each went, in whole seconds."""
    return frame[DETAIL_COLUMNS].assign(seconds=frame["seconds"].round().astype("Int64"))


def stripe_scope(s: Protocol, experiment: str) -> str:
    """What the profile trains of the stripe appendix on ``experiment`` (:meth:`Protocol.stripes`),
    for the appendix's first paragraph; ``""`` where it trains none (the page then says so)."""
    models = per_experiment(s.stripe_models, experiment)
    if not models:
        return ""
    stripes, cases = s.stripes(setting1_cases())
    scope = (f"This profile trains {', '.join(label(m) for m in models)} with "
             f"{', '.join(label(c) for c in cases)} on seeds "
             f"{', '.join(map(str, stripes.seeds))}")
    if len(cases) == len(setting1_cases()) and len(models) == len(ARCHITECTURES):
        return scope + "."
    return scope + (" (its CPU budget; the paper profile trains every case on all three "
                    "architectures).")


def paper_stripe_table(experiment: str) -> pd.DataFrame:
    """The paper's stripe-artifact appendix values for ``experiment`` (``gt_results.csv``): one
    row per architecture and method, the mean per split."""
    return (report.paper_values("gt_results")
            .query(f"dataset == '{DATASETS[experiment]}' and artifact == 'stripe'")
            .pivot_table(index=["architecture", "method"], columns="split", values="mean",
                         aggfunc="first"))


def plot_results(summary: pd.DataFrame, metric: TaskMetric, models: Sequence[str],
                 cases: Sequence[str], title: str, untrained: Sequence[str] = (),
                 paper: pd.DataFrame | None = None, constant: float | None = None,
                 runs: pd.DataFrame | None = None, artifact: str = "tag"):
    """The paper's PNEU/KNEE figure: test performance on SC(X*, y) (left) and the Δ-metric,
    permuted − contaminated (right), bars per architecture and case, with the std over seeds as
    error bars (a one-seed cell has none; the Δ panel's from ``runs``, the per-run rows,
    :func:`.report.delta_std`; with ``runs`` its bars and bars' spread are over the runs that
    learned the task, :func:`.preconditions.learned_task`); architectures in ``untrained`` are labelled so;
    ``metric``: the experiment's (:func:`tapkit.metrics.task_metric`). ``paper`` (the paper's
    values in the summary's columns, :func:`paper_summary`) draws the paper's number on each bar
    as a black mark, so a reader sees ours against theirs; ``constant``: the score of a constant
    predictor, drawn as a dashed line on the left panel. The axes start at 0."""
    import matplotlib.pyplot as plt
    import numpy as np

    def values(frame, split, column="mean"):
        wide = frame.pivot_table(index=["model", "case"], columns="split", values=column,
                                 dropna=False)
        if split not in wide:
            return np.full(len(models), np.nan)
        return np.array([wide[split].get((m, case), np.nan) for m in models], dtype=float)

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    width = 0.8 / len(cases)
    palette = ["tab:gray", "tab:red", "tab:orange", "tab:purple", "tab:green"]
    colors = {c: palette[i] if i < len(palette) else f"C{i}"  # a method registered later
              for i, c in enumerate(setting1_cases())}
    x = np.arange(len(models))
    # the Δ panel over the runs that learned the task (a collapsed run loses nothing when the
    # tags are permuted: averaged in, it would pass for one that kept off the tag; findings and
    # the seed table name it)
    learned, _ = _learned_deltas(runs, metric)
    ran = set() if runs is None else set(zip(runs["model"], runs["case"]))
    spread = (report.delta_std(runs[learned_task(runs, metric)], ["model", "case"])
              if learned is not None else None)
    marked = False
    for i, case in enumerate(cases):
        part = summary[summary.case == case]
        cont, perm = values(part, "contaminated"), values(part, "permuted")
        sd = values(part, "contaminated", "std") if "std" in part else None
        offset = x + (i - (len(cases) - 1) / 2) * width
        drawn = bool(np.isfinite(cont).any())  # a case no architecture ran has no legend entry
        axes[0].bar(offset, cont, width, yerr=sd, capsize=2, label=label(case) if drawn else None,
                    color=colors.get(case), error_kw={"lw": 0.8})
        d_sd = (np.array([spread.get((m, case), np.nan) for m in models], dtype=float)
                if spread is not None else None)
        delta = perm - cont
        if learned is not None:
            delta = np.array([(learned.loc[(m, case), "permuted"]
                               - learned.loc[(m, case), "contaminated"])
                              if (m, case) in ran else d for m, d in zip(models, delta)])
        axes[1].bar(offset, delta, width, yerr=d_sd, capsize=2, color=colors.get(case),
                    error_kw={"lw": 0.8})
        theirs = paper[paper.case == case] if paper is not None else None
        if theirs is not None and len(theirs):
            p_cont, p_perm = values(theirs, "contaminated"), values(theirs, "permuted")
            shown = ~np.isnan(p_cont)
            if shown.any():
                kw = {"marker": "_", "s": 160 * width / 0.2, "color": "black", "zorder": 3,
                      "linewidths": 2}
                axes[0].scatter(offset[shown], p_cont[shown],
                                label=None if marked else "paper", **kw)
                axes[1].scatter(offset[shown], (p_perm - p_cont)[shown], **kw)
                marked = True
    names = [label(m) + ("\n(untrained)" if m in untrained else "") for m in models]
    axes[0].set_title(f"{metric.name.upper()} on SC(X*, y) test")
    axes[1].set_title(f"Δ-{metric.name.upper()} (permuted − contaminated)"
                      + ("\nover the runs that learned the task" if learned is not None else ""))
    axes[1].axhline(0, color="black", lw=0.8)
    if constant is not None:
        report.chance_line(axes[0], constant, "constant predictor")
    top = 1.0 if metric.higher_is_better else None
    axes[0].set_ylim(0, top)
    for ax in axes:
        ax.set_xticks(x, names)
    ncol = len(cases) + int(marked) + int(constant is not None)
    axes[0].legend(fontsize=7, ncol=min(ncol, 4), loc="upper center",
                   bbox_to_anchor=(0.5, -0.12))
    better = "higher" if metric.higher_is_better else "lower"
    fig.suptitle(f"{title}\n{better} is better; a model that uses the {artifact} loses performance "
                 f"when it is permuted" + ("; black marks: the paper's values" if marked else ""),
                 fontsize=8)
    fig.tight_layout()
    return fig


def _learned_deltas(runs: pd.DataFrame | None, metric: TaskMetric
                    ) -> tuple[pd.DataFrame | None, dict]:
    """Per (model, case) of a per-run frame, the means over the runs that learned the task
    (:func:`.preconditions.learned_task`; NaN where none did), and the seeds that did not
    (:func:`.preconditions.failed_seeds`); ``(None, {})`` without runs."""
    if runs is None or runs.empty or "case" not in runs:
        return None, {}
    columns = [c for c in ("contaminated", "permuted", "clean") if c in runs]
    kept = runs[columns].where(learned_task(runs, metric), axis=0)
    return (kept.groupby([runs["model"], runs["case"]], sort=False).mean(),
            failed_seeds(runs, metric))


def _xs_delta(case: str, r, means: pd.DataFrame | None, failed: dict, model: str) -> str:
    """One XS method's Δ (permuted − contaminated) and clean score for :func:`findings`: over
    its runs that learned the task where ``means`` has them, the others named."""
    seeds = failed.get((model, case), ((), 0))[0]
    if means is None or not seeds or (model, case) not in means.index:
        return f"{label(case)} {r['permuted'] - r['contaminated']:+.3f} (clean {r['clean']:.3f})"
    m = means.loc[(model, case)]
    named = f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"
    if pd.isna(m["contaminated"]):
        return f"{label(case)}: no seed learned the task (clean {r['clean']:.3f})"
    return (f"{label(case)} {m['permuted'] - m['contaminated']:+.3f} (clean {m['clean']:.3f}; "
            f"{named} did not learn the task and {'are' if len(seeds) > 1 else 'is'} left out)")


def findings(summary: pd.DataFrame, metric: TaskMetric, models: Sequence[str],
             cases: Sequence[str], skip: Sequence[str] = (),
             left: Mapping[tuple[str, str], str] | None = None,
             runs: pd.DataFrame | None = None, artifact: str = "tag") -> str:
    """Plain statements of what the numbers show: per architecture, the Δ-metric of No XS (did the
    model learn the tag? judged on its :func:`tapkit.metrics.tag_reliance` by
    :func:`.thresholds.tag_use`; with ``runs``, a No XS that learned the task in no seed is said
    to, not to have left the tag alone) and of each XS method, and the clean score of Base.
    Architectures in ``skip`` (untrained ones) are named as such; cells in ``left`` (the
    profile's ``not_run``) are named as not run. With ``runs`` (the per-run frame), an XS
    method's Δ and clean score are over its runs that learned the task, and the seeds left
    out are named: a collapsed run loses nothing when the tags are permuted, and averaged in it
    would pass for one that kept off the tag."""
    wide = summary.pivot_table(index=["model", "case"], columns="split", values="mean")
    means, failed = _learned_deltas(runs, metric)
    lines = []
    for model in models:
        name = label(model)
        if model in skip:
            lines.append(f"- **{name}**: not trained in this profile; its numbers are those of a "
                         "random network.")
            continue
        if (model, no_xs()) not in wide.index:
            why = {(left or {}).get((model, c)) for c in cases} - {None}
            if why and all((model, c) in (left or {}) for c in cases):
                lines.append(f"- **{name}**: not run in this profile ({'; '.join(sorted(why))}).")
            continue
        row = wide.loc[(model, no_xs())]
        verdict = tag_use(tag_reliance(row["contaminated"], row["permuted"], metric), artifact)
        if means is not None and (model, no_xs()) in means.index and pd.isna(
                means.loc[(model, no_xs()), "contaminated"]):  # a constant loses nothing
            verdict = (f"did not learn the task in any seed, so what it lost says nothing of "
                       f"its use of the {artifact}")
        parts = []
        for case in cases:
            if case in ("base", no_xs()) or (model, case) not in wide.index:
                continue
            parts.append(_xs_delta(case, wide.loc[(model, case)], means, failed, model))
        base = (f" Base (clean training) scores {wide.loc[(model, 'base'), 'clean']:.3f} on clean "
                f"test images." if (model, "base") in wide.index else "")
        gone = [label(c) for c in cases if (model, c) in (left or {})]
        lines.append(f"- **{name}**: No XS {row['contaminated']:.3f} → {row['permuted']:.3f} when "
                     f"the {artifact}s are permuted (Δ {row['permuted'] - row['contaminated']:+.3f}): it "
                     f"{verdict}. Δ under XS: {', '.join(parts) if parts else '—'}; clean "
                     f"{metric.name.upper()} of No XS {row['clean']:.3f}.{base}"
                     + (f" Not run here: {', '.join(gone)}." if gone else ""))
    return "\n".join(lines)


def overlap_measured(s: Protocol, datasets: Sequence[str], models: Sequence[str],
                     methods: Sequence[str] | None, root, device: str, dev: str, profile: str,
                     lambdas: Mapping | None = None, max_images: int | None = None
                     ) -> tuple[pd.DataFrame, dict[str, str]]:
    """The overlap appendix's measurement on ``datasets``: each data set's Setting-1 runs at the
    λ its PNEU/KNEE chapter searched (:func:`.medical_plans.searched_lambdas`, then
    ``lambdas``), their top-quartile recall and precision per layer (:func:`overlap_frame`, on
    ``max_images`` test images, None: the profile's ``overlap_images``), one frame; and each
    data set's provenance label (:func:`.report.provenance_label`; ``device`` as the chapter
    was given it, ``dev`` the one resolved)."""
    frames, labels = [], {}
    for experiment in datasets:
        lams = searched_lambdas(root, experiment, "tag", lambdas)
        runs = medical_runs(s, experiment, models, methods, "tag", lams)
        labels[experiment] = report.provenance_label(run_frame(runs, root, device), profile)
        frames.append(overlap_frame(runs, root, dev,
                                    s.overlap_images if max_images is None else max_images))
    return pd.concat(frames, ignore_index=True), labels


def overlap_beside_paper(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean (std) over seeds beside the paper's overlap tables (``overlap.csv``)."""
    keys = ["dataset", "model", "case", "metric", "layer"]
    grouped = frame.groupby(keys + ["map_size"], sort=False)
    ours = grouped["value"].agg(["mean", "std"]).reset_index()
    ours["chance"] = grouped["chance"].mean().values
    paper = report.paper_values("overlap")
    paper = paper.rename(columns={"architecture": "model", "method": "case"})
    return report.beside(ours, paper, keys)


# ----------------------------------------------------------------------------- Table 1

PAIRED_COLUMNS = ("speed_ratio", "speed_ratio_lo", "speed_ratio_hi", "speed_rounds", "mem_ratio",
                  "mem_ratio_lo", "mem_ratio_hi", "mem_passes")


def bench_ratios(rows: Sequence[dict]) -> pd.DataFrame:
    """Table 1 as ratios to No XS per architecture: for our measurements (``rows`` from
    :func:`tapkit.benchmark.bench`) the paired ratios with their 95% intervals and counts
    (``speed_ratio``, ``speed_ratio_lo``/``_hi``, ``speed_rounds``; ``mem_ratio`` likewise over
    ``mem_passes``), beside the paper's ratios (``table1_speed_memory.csv``); an out-of-memory
    pair has no ratio and status ``oom``."""
    ours = pd.DataFrame(rows)
    paper = paper_table1()
    paper = paper.pivot_table(index=["architecture", "method"], columns="metric", values="mean",
                              aggfunc="first").reset_index()
    paper["mem"] = pd.to_numeric(paper["mem_gb"], errors="coerce")
    paper["it_per_s"] = pd.to_numeric(paper["it_per_s"], errors="coerce")
    out = []
    for model, group in ours.groupby("model", sort=False):
        # a variant (the released VGG-16 head) is compared with the architecture the paper names
        names = {model, get_spec(model).torchvision_name}
        ref = paper[paper.architecture.isin(names)].set_index("method")
        for row in group.itertuples():
            p = ref.loc[row.method] if row.method in ref.index else None
            p_base = ref.loc[no_xs()] if no_xs() in ref.index else None
            out.append({
                "model": model, "method": row.method, "status": row.status,
                "it_per_s": row.it_per_s, "peak_mem_mb": row.peak_mem_mb,
                **{k: getattr(row, k, None) for k in PAIRED_COLUMNS},
                "paper_speed_ratio": _ratio(p["it_per_s"], p_base["it_per_s"]) if p is not None else None,
                "paper_mem_ratio": _ratio(p["mem"], p_base["mem"]) if p is not None else None,
            })
    out = pd.DataFrame(out)
    # JSON stores a missing bound as null: numbers (NaN) here
    return out.astype({k: float for k in PAIRED_COLUMNS})


def _ratio(value, base) -> float | None:
    if value is None or base is None or pd.isna(value) or pd.isna(base) or base == 0:
        return None
    return float(value) / float(base)



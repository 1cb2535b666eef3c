"""The medical chapters' prose that depends on the protocol and the numbers: which settings differ
per architecture, which cells are left out and why, what the budget was, and what the λ search
chose. Every statement is computed from the protocol or the tables, so it changes with them;
:mod:`tapkit.book.medical` re-exports these for the chapters.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import pandas as pd
import torch

from ..experiments.protocols import per_experiment
from ..experiments.plans import LEARNED_SHARE, learned_share
from ..experiments.medical_plans import ARCHITECTURES as MAIN_ARCHITECTURES, run_models
from ..experiments.setting1 import cases, seed_counts
from ..experiments.protocols import PretrainTask, Protocol
from ..data import FRACTAL_CATEGORIES
from ..metrics import constant_score as metrics_constant_score
from ..metrics import task_metric
from .labels import (ANNOTATION_LABELS, ARCH_LABELS, CASE_LABELS, OTHER_LABELS,  # noqa: F401
                     label, lam_text)
from . import table_display
from .report import mark_cells_not_run
from .thresholds import NEAR_CHANCE

CLASSES = {"pneu": 2, "knee": 5}


VARIANTS = {"vgg16_authors": "the authors' classifier head (25088→1024→ReLU→Dropout→classes, "
                             "40 M parameters instead of torchvision's 138 M)",
            "vgg16_quarter": "VGG-16's thirteen convolutions and five max-pools (the targets) "
                             "with a quarter of their channels, and the authors' head: a CPU "
                             "stand-in at ~1/16 of the full width's cost, 7 M parameters, "
                             "fine-tuned from its digits-pretrained start"}


def variant_notes(s: Protocol, models: Iterable[str] | None = None) -> list[str]:
    """One Markdown sentence per architecture that the profile trains as another registry entry
    (``s.variants``; quick: VGG-16 at a quarter of its width) among ``models`` (None: every one
    of the profile's it runs): what the page's name stands for. The report stores them with its
    claim table, and the intro's verdicts print them (the verdicts say "VGG-16")."""
    shown = list(s.models if models is None else models)
    run = set(run_models(s, s.experiments[0], shown, cases()))
    return [f"**{label(model)} is `{variant}`** in this profile: "
            f"{VARIANTS.get(variant, variant)}; every run's config records it."
            for model, variant in s.variants.items() if model in run]


def override_note(s: Protocol, models: Iterable[str] | None = None) -> str:
    """A visible note (HTML admonition) when the profile trains some of the page's architectures
    (``models``; None: every one of the profile's) differently from the others (another registry
    entry, other settings, none at all), or an empty string."""
    shown = list(s.models if models is None else models)
    run = set(run_models(s, s.experiments[0], shown, cases()))
    notes = [table_display.inline_html(n) for n in variant_notes(s, shown)]
    for model, change in s.model_overrides.items():
        name = label(model)
        if model not in run:
            continue
        if change.get("epochs") == 0:
            notes.append(f"<b>{name} is not trained in this profile</b> (0 epochs): its rows are "
                         f"the randomly initialised network, identical for every method.")
        else:
            notes.append(f"{name} is trained with {settings_text(change)} in this profile.")
    if not notes:
        return ""
    items = "".join(f"<p>{n}</p>" for n in notes)
    return (f'<div class="admonition warning"><p class="admonition-title">Per-architecture '
            f"settings</p>{items}</div>")


def cells_by_reason(left: Mapping[tuple[str, str], str],
                    prefix: str = "") -> dict[str, list[str]]:
    """The cells ``{(model, case): why}`` a profile leaves out, grouped by their reason and
    named as the pages name them (``prefix`` before each: ``"KNEE "``)."""
    by_why: dict[str, list[str]] = {}
    for (model, case), why in left.items():
        by_why.setdefault(why, []).append(f"{prefix}{label(model)} {label(case)}")
    return by_why


LEFT_OUT_HEADING = "Cells left out of this profile"  # what an opening's "not run" points to


def left_out_record(left: Mapping[tuple[str, str], str]) -> dict[str, str]:
    """``{"<model>/<case>": why}``: the cells a profile leaves out as a table's provenance
    records them (``left_out``; the report's *not run* reasons,
    :meth:`tapkit.book.evidence.Evidence.left_out`)."""
    return {f"{model}/{case}": why for (model, case), why in left.items()}


def left_out_note(left: Mapping[tuple[str, str], str]) -> str:
    """Markdown: the cells this profile does not run, each with why (empty when none)."""
    if not left:
        return ""
    lines = [f"- **Not run**: {', '.join(cells)} — {why}."
             for why, cells in cells_by_reason(left).items()]
    return "\n".join([f"{LEFT_OUT_HEADING} (marked *not run* in the table):", *lines])


def seeds_text(s: Protocol, models: Sequence[str], experiment: str | None = None) -> str:
    """How many seeds the page's architectures and cases train on ``experiment``, e.g. "5 seeds
    (VGG-16: 1, ResNet-18: 3, Base: 1)" (:func:`.setting1.seed_counts`: a case none of
    ``models`` trains there, such as the quick profile's RRR on KNEE, is not named)."""
    n, fewer = seed_counts(s, models, experiment)
    text = f"{n} seed{'s' * (n != 1)}"
    return text + (" (" + ", ".join(f"{label(m)}: {k}" for m, k in fewer.items())
                   + ")" if fewer else "")


def budget_note(s: Protocol, experiment: str, seconds: float) -> str:
    """One sentence naming the stand-in's budget: seeds, digits per class, epochs, batch, and
    the training time the runs recorded (``seconds``, their sum, λ search included)."""
    epochs = sorted({per_experiment(o.get("epochs", s.epochs), experiment)
                     for m, o in s.model_overrides.items() if m in ARCH_LABELS} | {s.epochs})
    sizes = sorted({o.get("image_size", s.image_size) for m, o in s.model_overrides.items()
                    if m in ARCH_LABELS} | {s.image_size})
    return (f"**Budget of this page**: {seeds_text(s, MAIN_ARCHITECTURES, experiment)}, "
            f"{per_experiment(s.per_class, experiment)} training digits per class (10% of them "
            f"the validation split), {per_experiment(s.test_per_class, experiment)} test digits "
            f"per class, {'–'.join(map(str, epochs))} epochs at batch {s.batch_size} "
            f"({s.optimizer}, {' or '.join(map(str, sizes))} px, one CPU thread): "
            f"~{seconds / 60:.0f} minutes of training recorded by its runs, λ search "
            "included (the pretrained starts are not: below).")


def pretraining_note(s: Protocol, starts: pd.DataFrame) -> str:
    """What the pretrained start of this page's runs is and what it cost (``starts``: one row per
    architecture, :func:`tapkit.experiments.medical_runs.pretraining_frame`), or that the runs
    start from random weights."""
    if s.pretraining is None or not len(starts):
        return ("**Start**: random weights (no pretraining; the paper fine-tunes ImageNet "
                "weights).")
    pre = s.pretraining
    each = "; ".join(f"{label(r.model)} {r.clean:.1%} in {r.seconds:.0f} s"
                     for r in starts.itertuples())
    what = PRETRAIN_TEXT[PretrainTask(pre.task)].format(
        n="all" if pre.per_class is None else pre.per_class, categories=FRACTAL_CATEGORIES)
    return (f"**Pretrained start, a stand-in for ImageNet weights.** The paper fine-tunes "
            "ImageNet-initialised networks; ImageNet needs a download, so each architecture here "
            f"was first trained once, for {pre.epochs} epoch{'s' * (pre.epochs != 1)} at batch "
            f"{pre.batch_size} (Adam, "
            f"with the learning rate and image size of its stand-in runs), {what}. Every run on "
            "this page starts from those weights with a fresh classifier head, and every medical "
            "chapter and seed shares them (one run each in the results store). Accuracy on the "
            f"pretraining task's test images and training time: {each}.")


# what each pretraining task is, for the pages (Pretraining.task)
PRETRAIN_TEXT = {
    PretrainTask.DIGITS: (
        "to tell the ten digits apart on {n} embedded digits of each class that no stand-in image "
        "is drawn from (half of the embedded training digits are kept for it). Unlike ImageNet "
        "for x-rays, this start already knows the stand-ins' shapes: KNEE's grades are digits "
        "0-4. The formula-driven fractals of FractalDB (Kataoka et al., ACCV 2020), also built "
        "in, know nothing of digits, but from them no λ of DenseNet-121's TAP kept it off the "
        "tag and learning (measured, docs/standin-research.md)"),
    PretrainTask.FRACTALS: (
        "to tell apart {categories} categories of formula-driven fractals ({n} images each; "
        "FractalDB-style pre-training, Kataoka et al., ACCV 2020): images with nothing of a "
        "digit or a tag in them, as ImageNet has nothing of an x-ray"),
}


_SETTING_TEXT = {"lr": "learning rate {}", "epochs": "{} epochs", "image_size": "{}-px images",
                 "batch_size": "batch {}", "per_class": "{} images per class"}


def settings_text(change: Mapping) -> str:
    """A profile's per-architecture settings in words: ``{"lr": 1e-4, "epochs": 4}`` ->
    ``"learning rate 0.0001, 4 epochs"``; a per-experiment value as ``28 (PNEU) / 12 (KNEE)``."""
    def value(v) -> str:
        if isinstance(v, Mapping):
            return " / ".join(f"{value(x)} ({str(e).upper()})" for e, x in v.items())
        return f"{v:g}" if isinstance(v, float) else str(v)
    return ", ".join(_SETTING_TEXT.get(k, f"{k} {{}}").format(value(v)) for k, v in change.items())


def standin_caveat(s: Protocol, models: Sequence[str], experiment: str | None = None) -> str:
    """How to read the stand-in's numbers on ``experiment`` (None: the protocol's first): how
    many seeds per architecture, small data, and a pretrained or random start for ``models``,
    those the profile runs there; what the runs did learn is in the findings computed from the
    table."""
    experiment = experiment or s.experiments[0]
    models = run_models(s, experiment, list(models), cases())
    started = [m for m in models if s.pretraining is not None
               and s.variants.get(m, m) in s.pretraining.models]
    start = ("fine-tuned from the pretrained start (above)" if len(started) == len(models)
             else "from random weights" if not started else
             f"fine-tuned from the pretrained start for "
             f"{', '.join(label(m) for m in started)} and from random weights for "
             "the others")
    seeds = seeds_text(s, models, experiment)
    sizes = {m: s.settings(experiment, m).image_size for m in models}
    px = " / ".join(f"{label(m)} {size}" for m, size in sizes.items())
    return (f"**Reading the stand-in's numbers.** Each cell is {seeds} of a "
            f"short Adam run (image side in px: {px}), {start}; a last-epoch score of such runs moves "
            "by a few hundredths between seeds, so smaller differences are noise. Whether Base "
            "learned the digits and No XS the tag is in the findings above: Base's clean score "
            "and No XS's drop when the tags are permuted. A penalty strong enough to keep a model "
            "off the tag can also keep it from learning the digits in so few steps. None of this "
            "says how the methods compare on PNEU or KNEE; the paper profile on the real folders "
            "does.")


def search_table(search: pd.DataFrame, choice: pd.DataFrame) -> pd.DataFrame:
    """The λ search, one row per run: λ, validation loss (the paper's criterion), the clean
    validation score and how far it goes from a constant prediction's to perfect
    (``learned_share``, the guard's :func:`tapkit.experiments.plans.learned_share`), last training
    loss, the three test scores, and which λ each criterion chose: ``chosen`` the profile's choice (with the guard where its
    protocol's ``lambda_guard`` says), ``unguarded`` the paper's criterion alone."""
    def marks(column: str) -> list[str]:
        picked = {(r.model, r.method, getattr(r, column)) for r in choice.itertuples()}
        return ["✓" if (r.model, r.method, r.lam) in picked else "" for r in search.itertuples()]

    out = search.assign(architecture=search.model.map(label),
                        learned_share=learned_share(search), chosen=marks("lam"),
                        unguarded=marks("lam_unguarded"))
    cols = ["architecture", "method", "lam", "val_loss", "val_clean", "learned_share",
            "task_loss_last",
            "contaminated", "permuted", "clean", "chosen", "unguarded"]
    return out[[c for c in cols if c in out.columns]].round(3)


# The search's page shows :func:`search_table` as two tables that each fit the page's column at
# 1280 px (its twelve columns scrolled): what chose λ, and what the runs scored on the test
# splits, which plays no part in the choice
CHOICE_COLUMNS = ("architecture", "method", "lam", "val_loss", "val_clean", "learned_share",
                  "chosen")
UNGUARDED_MARK = "(unguarded)"  # the paper's criterion alone, where the guard chose otherwise
SCORE_COLUMNS = ("architecture", "method", "lam", "task_loss_last", "contaminated", "permuted",
                 "clean")


def _shown(table: pd.DataFrame, columns: tuple[str, ...]):
    return table_display.styled(table[[c for c in columns if c in table.columns]])


def search_choice_shown(table: pd.DataFrame):
    """The λ search's choice (``table``: :func:`search_table`) as its page shows it: per run the
    criterion (validation loss), the guard (clean validation score, share learned) and one
    column of marks: ✓ the chosen λ, :data:`UNGUARDED_MARK` the λ the paper's criterion alone
    would choose where the guard changed the choice (one column, not two, so that the table
    fits the page)."""
    marks = [c or (UNGUARDED_MARK if u else "") for c, u in zip(table.chosen, table.unguarded)]
    return _shown(table.assign(chosen=marks), CHOICE_COLUMNS)


def search_scores_shown(table: pd.DataFrame):
    """The λ search's runs (``table``: :func:`search_table`) on the test splits, and their last
    training loss, for reading the choice: none of it decides λ."""
    return _shown(table, SCORE_COLUMNS)


def constant_score(experiment: str) -> float:
    """The clean-test score of the best constant prediction on the balanced stand-in: F1 of
    always predicting the positive class (2/3) for PNEU, the MAE of always predicting the median
    grade for KNEE (:func:`tapkit.metrics.constant_score` on one label of each class)."""
    return metrics_constant_score(torch.arange(CLASSES[experiment]),
                                  task_metric(experiment).name)


def search_findings(search: pd.DataFrame, choice: pd.DataFrame, experiment: str) -> str:
    """What the search chose, and whether the choice is a near-chance model: a validation loss
    within :data:`.thresholds.NEAR_CHANCE` (5%) of ln(classes) (what a constant prediction scores), or a clean-test score no better
    than the best constant prediction's (:func:`constant_score`; read after the choice, never
    used for it). The paper's criterion prefers such models when every λ that keeps a network
    off the tag also keeps it from learning (or, with BatchNorm on running statistics, collapses
    its eval-mode predictions while the training loss falls); this says so where it happens.
    The score is ``experiment``'s metric (:func:`tapkit.metrics.task_metric`)."""
    chance, const = math.log(CLASSES[experiment]), constant_score(experiment)
    metric = task_metric(experiment)
    lines = []
    for r in choice.itertuples():
        row = search[(search.model == r.model) & (search.method == r.method)
                     & (search.lam == r.lam)].iloc[0]
        name = f"{label(r.model)} {label(r.method)}"
        why = []
        if abs(row.val_loss - chance) < NEAR_CHANCE * chance:
            why.append(f"its validation loss is within {NEAR_CHANCE:.0%} of ln "
                       f"{CLASSES[experiment]} = {chance:.3f}, what a constant prediction scores (last training loss "
                       f"{row.task_loss_last:.3f})")
        if (row.clean <= const) if metric.higher_is_better else (row.clean >= const):
            why.append(f"its clean {metric.name.upper()} ({row.clean:.3f}) is no better than a "
                       f"constant prediction's ({const:.3f})")
        note = (" — **a near-chance model**: " + "; ".join(why) + ", so the criterion "
                "chose a λ at which the network learned little" if why else "")
        guarded = getattr(r, "guard", True)  # False: the paper's criterion alone (paper profile)
        if guarded and not getattr(r, "learned", True):
            note += (f"; no λ of the grid learned the task (a clean validation score "
                     f"{LEARNED_SHARE:.0%} of the way from a constant prediction's to perfect), "
                     "so the guard could not choose and this is the unguarded choice")
        elif guarded and getattr(r, "lam_unguarded", r.lam) != r.lam:
            note += (f"; without the guard the paper's criterion would choose λ = "
                     f"{lam_text(r.lam_unguarded)} (validation loss "
                     f"{r.val_loss_unguarded:.3f}), a run that did not learn the task")
        lines.append(f"- {name}: λ = {lam_text(r.lam)} (validation loss {row.val_loss:.3f}; "
                     f"{metric.name.upper()} "
                     f"{row.contaminated:.3f} contaminated / {row.permuted:.3f} permuted / "
                     f"{row.clean:.3f} clean){note}.")
    return "\n".join(lines)


def mark_left_out(table: pd.DataFrame, left: Mapping[tuple[str, str], str],
                  models: Sequence[str], cases: Sequence[str],
                  paper: Mapping[tuple[str, str, str], str] | None = None) -> pd.DataFrame:
    """``table`` (indexed by architecture and method labels) with *not run* in the rows of the
    cells of ``models`` × ``cases`` left out (:func:`.report.mark_cells_not_run`); ``paper``
    (``(model, case, split)`` -> the paper's cell text) fills their paper columns, so that the
    paper's number stays visible where ours did not run."""
    theirs: dict[tuple[str, str], dict[str, str]] = {}
    for (model, case, split), text in (paper or {}).items():
        theirs.setdefault((model, case), {})[split] = text
    return mark_cells_not_run(
        table, left, lambda m, c: (label(m), label(c)) if m in models and c in cases else None,
        theirs)

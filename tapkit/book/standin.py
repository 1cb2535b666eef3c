"""The digits stand-ins for PNEU and KNEE as the quick profile trains them, and its calibrated
Decoy-MNIST: their calibration (issue 36) and the stand-ins' images at the resolution actually
trained, for the data page.

The calibration is measured data (``measured/standin_calibration.csv``, one row per data set,
architecture, label noise and seed: Base's clean score and No XS's reliance on the tag or decoy;
how it was measured: docs/standin-research.md, docs/decoy-mnist-calibration.md and
``scripts/decoy_calibration.py``). A stand-in is right when Base scores what the paper's Base
scores (F1 0.91-0.95, MAE 0.49-0.60, accuracy 0.988) and No XS takes the tag in every seed, as
the paper's models do."""

from __future__ import annotations

from importlib import resources

import pandas as pd

from ..experiment_specs import ExperimentKind, get_experiment, list_experiments
from ..experiments import protocols
from ..methods import Kind, methods_where, proposed_method
from ..metrics import tag_reliance, task_metric
from ..models import Role, models_where
from . import labels
from .thresholds import MATCHES_BASE

# the paper's Base clean scores (gt_results.csv: PNEU F1, KNEE MAE over the three architectures;
# MNIST accuracy 0.988 (0.001), drawn as its ± one std)
PAPER_BASE = {"pneu": (0.91, 0.95), "knee": (0.49, 0.60), "decoy-mnist": (0.987, 0.989)}
# issue 36's targets: Base's clean score, and No XS's reliance on the tag in every seed
# (Decoy-MNIST: at least half the paper's 0.176; its Base within 0.04 of the paper's 0.988, as
# the noise-free quick profile is: 0.972 on its 4,000 digits and three epochs)
TARGET_BASE = {"pneu": (0.85, 0.97), "knee": (0.3, 0.9), "decoy-mnist": (0.948, 1.0)}
TARGET_RELIANCE = {"pneu": 0.3, "knee": 0.5, "decoy-mnist": 0.09}
# ...and TAP's on the medical stand-ins: a clean score no worse than Base's by more than the
# report's "matches the Base model" tolerance (F1 0.05, MAE 0.1), and a reliance on the tag at
# most this share of No XS's (means over seeds)
TARGET_TAP_CLEAN = MATCHES_BASE
TARGET_TAP_SHARE = 0.25
# the paper's No XS reliance where one number states it (MNIST: 0.995 − 0.819, the appendix
# table of ground-truth results on MNIST, LaTeX line 760)
PAPER_RELIANCE = {"decoy-mnist": 0.176}
# the stand-ins (the medical experiments on digits) and the calibrated tasks, in the page's order,
# by their registry labels and metrics
TASKS = tuple(list_experiments(ExperimentKind.MEDICAL))
NAMES = {e: get_experiment(e).label for e in TASKS + tuple(list_experiments(ExperimentKind.MNIST))}
METRICS = {e: task_metric(e).label for e in NAMES}


def chosen_noise(task: str) -> float | None:
    """The label noise the quick profile trains ``task`` with (None: it trains none)."""
    medical = get_experiment(task).kind is ExperimentKind.MEDICAL
    p = protocols.medical("quick") if medical else protocols.MNIST["quick"]
    src = p.embedded.get(task)
    return src.label_noise if src is not None and src.label_noise else None


def calibration() -> pd.DataFrame:
    """The measured calibration runs (package data)."""
    with (resources.files(__package__) / "measured" / "standin_calibration.csv").open() as fh:
        return pd.read_csv(fh)


def calibration_table(frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per stand-in, architecture and label noise: Base's clean score and No XS's reliance on
    the tag over the seeds measured (mean, and the smallest reliance: the issue asks for every
    seed), beside the targets; the profile's chosen noise marked."""
    frame = calibration() if frame is None else frame
    rows = []
    for (task, model, p), g in frame.groupby(["task", "model", "label_noise"], sort=True):
        lo, hi = TARGET_BASE[task]
        base, rel = g.base_clean.mean(), g.noxs_reliance.min()
        rows.append({"data": NAMES[task], "architecture": labels.label(model),
                     "label noise": p, "seeds": len(g),
                     "Base clean": f"{base:.3f}",
                     "No XS reliance (mean; smallest)":
                         f"{g.noxs_reliance.mean():+.3f}; {rel:+.3f}",
                     "targets met": ("yes" if lo <= base <= hi and rel >= TARGET_RELIANCE[task]
                                     else "no"),
                     "the profile's": "◀" if chosen_noise(task) == p else ""})
    return pd.DataFrame(rows).set_index(["data", "architecture", "label noise"])


def build_targets(runs: pd.DataFrame, experiment: str) -> pd.DataFrame:
    """Issue 36's targets as this build met them on a medical stand-in, one row per architecture
    of its per-run table (:func:`tapkit.book.medical.runs_table`; converged runs only): No XS's
    reliance on the tag in its least reliant seed (target: every seed at least
    :data:`TARGET_RELIANCE`), Base's clean score on its seeds (within :data:`TARGET_BASE`), and
    TAP's mean clean score against Base's mean (no worse by more than :data:`TARGET_TAP_CLEAN`)
    and its mean reliance as a share of No XS's (at most :data:`TARGET_TAP_SHARE`). A case the
    build did not run reads "not run" and meets nothing."""
    metric, tap = task_metric(experiment), proposed_method()
    no_xs = methods_where(kind=Kind.NO_XS)[0]
    lo, hi = TARGET_BASE[experiment]
    ok = runs[runs.status == "ok"].assign(
        reliance=lambda f: tag_reliance(f.contaminated, f.permuted, metric))
    worse = (lambda tap_, base: base - tap_) if metric.higher_is_better else (
        lambda tap_, base: tap_ - base)
    rows = []
    for model, grp in ok.groupby("model", sort=False):
        case = {c: g for c, g in grp.groupby("case")}
        none, base, own = case.get(no_xs), case.get("base"), case.get(tap)
        row = {"architecture": labels.label(model)}
        checks = []
        if none is not None:
            least = none.reliance.min()
            checks.append(least >= TARGET_RELIANCE[experiment])
            row["No XS reliance, least of its seeds"] = (f"{least:+.3f} "
                                                         f"({labels.count(len(none), 'seed')})")
        if base is not None:
            checks.append(bool(base.clean.between(lo, hi).all()))
            row[f"Base clean {metric.label}"] = (" / ".join(f"{v:.3f}" for v in base.clean)
                                                 + f" ({labels.count(len(base), 'seed')})")
        if own is not None and base is not None:
            gap = worse(own.clean.mean(), base.clean.mean())
            checks.append(gap <= TARGET_TAP_CLEAN[experiment])
            row["TAP clean: worse than Base by"] = f"{gap:+.3f}"
        if own is not None and none is not None:
            share = own.reliance.mean() / none.reliance.mean()
            checks.append(share <= TARGET_TAP_SHARE)
            # a negative share (TAP's swapped score the better) is no reliance: shown as 0
            row["TAP reliance ÷ No XS's"] = f"{max(share, 0.0):.2f}"
        complete = len(checks) == 4  # every case ran
        row["targets met"] = ("yes" if complete and all(checks) else
                              f"{sum(checks)} of 4" if complete else "not run")
        rows.append(row)
    if not rows:  # nothing converged
        return pd.DataFrame(columns=["targets met"]).rename_axis("architecture")
    return pd.DataFrame(rows).fillna("not run").set_index("architecture")


def targets_text(experiment: str) -> str:
    """What :func:`build_targets` checks, in words, with this stand-in's thresholds."""
    metric, (lo, hi) = task_metric(experiment), TARGET_BASE[experiment]
    return (f"**The stand-in's targets in this build** (issue 36): No XS relies on the tag by at "
            f"least {TARGET_RELIANCE[experiment]:g} in every seed; Base's clean {metric.label} "
            f"lies between {lo:g} and {hi:g} (the paper's Base: "
            f"{PAPER_BASE[experiment][0]:g}–{PAPER_BASE[experiment][1]:g}); TAP's mean clean "
            f"{metric.label} is no worse than Base's by more than "
            f"{TARGET_TAP_CLEAN[experiment]:g}, and its mean reliance on the tag is at most "
            f"{TARGET_TAP_SHARE:.0%} of No XS's. The calibration on the data page measured the "
            "first two over the label noise.")


def calibration_figure(frame: pd.DataFrame | None = None):
    """The calibration curve: per stand-in, Base's clean score and No XS's reliance against the
    label noise, one line per architecture (seeds as points), the targets shaded."""
    import matplotlib.pyplot as plt

    frame = calibration() if frame is None else frame
    tasks = [t for t in NAMES if t in set(frame.task)]
    fig, axes = plt.subplots(2, len(tasks), figsize=(4.2 * len(tasks), 5.6), squeeze=False)
    for j, task in enumerate(tasks):
        sub = frame[frame.task == task]
        metric = METRICS[task]
        for row, (col, label) in enumerate((("base_clean", f"Base clean {metric}"),
                                            ("noxs_reliance", "No XS reliance on the signal"))):
            ax = axes[row, j]
            for model, g in sub.groupby("model"):
                means = g.groupby("label_noise")[col].mean()
                line, = ax.plot(means.index, means.values, marker="o",
                                label=labels.label(model))
                ax.scatter(g.label_noise, g[col], s=10, color=line.get_color(), alpha=0.5)
            if row == 0:
                ax.axhspan(*TARGET_BASE[task], color="green", alpha=0.1, label="target")
                ax.axhspan(*PAPER_BASE[task], color="grey", alpha=0.25, label="paper's Base")
            else:
                ax.axhline(TARGET_RELIANCE[task], color="green", linestyle="--",
                           label="target (every seed)")
                if task in PAPER_RELIANCE:
                    ax.axhline(PAPER_RELIANCE[task], color="grey", linewidth=2, alpha=0.6,
                               label="paper's No XS")
            chosen = chosen_noise(task)
            if chosen is not None:
                ax.axvline(chosen, color="black", linestyle=":", label="the profile's noise")
            ax.set_xlabel("label noise p")
            ax.set_ylabel(label, fontsize=9)
            medical = get_experiment(task).kind is ExperimentKind.MEDICAL
            ax.set_title(NAMES[task] + (" stand-in" if medical else ""), fontsize=10)
            ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def standin_images(task: str, n: int = 6, seed: int = 0):
    """The stand-in's contaminated training images as the quick profile trains them (its image
    sizes over its architectures: 64 px for VGG-16, ResNet-18 and DenseNet-121; then the
    stripe appendix's, at its architectures' size), each titled with its recorded label and the
    digit's true class."""
    import matplotlib.pyplot as plt
    import numpy as np

    from ..data import IMAGENET_MEAN, IMAGENET_STD, digits_standin, embedded_standin

    p = protocols.medical("quick")
    sizes = sorted({p.settings(task, m).image_size for m in models_where(Role.MAIN)}, reverse=True)
    stripes = protocols.per_experiment(p.stripe_models, task)
    rows = [(size, "tag") for size in sizes] + sorted(
        {(p.settings(task, m).image_size, "stripe") for m in stripes}, reverse=True)
    src = p.source_for(task)
    fig, axes = plt.subplots(len(rows), n, figsize=(1.5 * n, 2.3 * len(rows) + 0.4),
                             squeeze=False)
    fig.suptitle(f"{task.upper()} stand-in" + (f", {src.describe()}" if src.describe() else ""),
                 fontsize=10)
    for r, (size, artifact) in enumerate(rows):
        _, splits = embedded_standin(task, src, seed, size, artifact=artifact, per_class=20)
        _, clean = digits_standin(task, seed, size, per_class=20)
        x = splits["train"].x
        pixels = (x * np.array(IMAGENET_STD)[:, None, None] + np.array(IMAGENET_MEAN)[:, None, None])
        for j in range(n):
            i = j * (len(x) // n)
            axes[r, j].imshow(pixels[i].permute(1, 2, 0).clamp(0, 1).numpy())
            recorded, true = splits["train"].y[i].item(), clean["train"].y[i].item()
            kind = "" if artifact == "tag" else f", {artifact}"
            axes[r, j].set_title(f"{size} px{kind}\nlabel {recorded}" + (
                "" if recorded == true else f" (digit {true})"), fontsize=9)
            axes[r, j].axis("off")
    fig.tight_layout()
    return fig

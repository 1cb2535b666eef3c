# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Setting 1 on KNEE
#
# The paper's KNEE figure (mean absolute error on the contaminated test split and Δ-MAE when the
# tags are permuted) and its appendix table (contaminated / permuted / clean, mean and std over
# seeds) for VGG-16, ResNet-18 and DenseNet-121. KNEE grades osteoarthritis on the ordinal
# Kellgren-Lawrence scale 0–4, so the metric is the MAE between predicted and true grades:
# **lower is better**, and a model that uses the tag gets a *larger* MAE when the tags are
# permuted. Every training image carries a text tag in a random corner, "ABC", "DEF", "GHI",
# "JKL" or "MNO" for grades 0 to 4; the permuted test split assigns the tags at random.
# Base trains on clean images; No XS on tagged images without explanatory supervision; RRR, RBR
# and TAP on tagged images with the ground-truth tag masks and the paper's λ (its hyperparameter
# table for ground-truth annotations).
#
# Re-run this chapter on the real data (the folder holding `kneeKL224/`), for example:
#
# ```bash
# papermill notebooks/knee.ipynb out.ipynb -p profile paper -p source /data/knee
# ```

# %% tags=["parameters"]
profile = "quick"      # "quick" (CPU, digits stand-in) or "paper" (GPU, 224 px, ImageNet weights)
seeds = None           # e.g. [0, 1, 2, 3, 4]; None: from the profile
epochs = None          # None: from the profile (an explicit value applies to every architecture)
batch_size = None      # None: from the profile (an explicit value applies to every architecture)
image_size = None      # None: from the profile (paper: 224 px)
grids = None           # λ-search grids, e.g. {"tap": [1e-3]}; None: from the profile
models = ["vgg16", "resnet18", "densenet121"]
methods = ["base", "none", "rrr", "rbr", "tap"]
lambdas = None         # None: from the paper; e.g. {"tap": 1e-3} or {"resnet18": {"tap": 1e-3}}
source = None          # None: from the profile ("embedded": the digits stand-in); or the KNEE folder
stripe_models = None   # architectures of the stripe appendix; None: from the profile
device = "auto"
results = None         # None: <repository>/results

# %%
from tapkit.experiments.params import parse_params

parse_params(globals())  # papermill passes strings ("[1]", "1e-3"): parsed and checked here

import logging

import matplotlib.pyplot as plt
from IPython.display import HTML, Markdown, display

from tapkit.book import medical, report
from tapkit.experiments import medical_plans, protocols

EXPERIMENT = "knee"
logging.basicConfig(level=logging.WARNING)
s = medical.chapter_settings(profile, seeds=seeds, epochs=epochs, batch_size=batch_size,
                             image_size=image_size, source=source, stripe_models=stripe_models,
                             search=grids and {m: tuple(g) for m, g in grids.items()})
medical.set_threads(s)
root = protocols.results_root(profile, results or report.repo_root() / "results")
metric = medical.METRICS[EXPERIMENT]
on = medical.data_name(s, EXPERIMENT)
display(HTML(medical.standin_note(s, EXPERIMENT)))
display(HTML(medical.override_note(s)))
display(Markdown(f"**Profile `{profile}`**: {s.as_dict()}"))

# %% [markdown]
# ## How the runs are trained
#
# One config per (architecture, method, seed), trained through the results store (a rerun reads
# the cache). The λ of each XS method comes from the paper's table for this dataset and
# architecture; the paper profile first runs the paper's λ search for every architecture and
# method (log steps, lowest loss on the permuted validation split) and trains with its choice,
# with the loss normalisations the paper's λ were tuned on (the released code's). RBR is the full-derivative penalty of Shao et al. (its influence term
# differentiated through the forward pass, so training needs third derivatives). PyTorch cannot
# take a third derivative of training-mode BatchNorm, so on ResNet-18 and DenseNet-121 (which
# have BatchNorm) the RBR term is computed with **BatchNorm in eval mode** (running statistics;
# `xs_batchnorm="eval"`), as the authors' released code does for its extra forward pass, while
# the task loss keeps its normal training-mode forward. VGG-16 has no BatchNorm and needs no such
# switch. The table under the figure lists λ, `xs_batchnorm`, epochs and status per run.

# %%
medical.search_and_choose(s, EXPERIMENT, models, methods, "tag", root, device)  # quick: none
tag_lambdas = medical_plans.searched_lambdas(root, EXPERIMENT, "tag", lambdas)
runs = medical.medical_runs(s, EXPERIMENT, models, methods, "tag", tag_lambdas)
frame = medical.run_frame(runs, root, device)
label = report.provenance_label(frame, profile)
summary = medical.summarise(frame)
report.write_table(summary, root, f"{EXPERIMENT}_gt", {"label": label, "settings": s.as_dict(), "data": on})
display(Markdown(f"*Results on the {on}: {label}*"))

# %% [markdown]
# ## MAE and Δ-MAE (the paper's KNEE figure)

# %%
fig = medical.plot_results(summary, metric, models, methods,
                           f"KNEE setting 1, ground-truth masks — {on}\n{label}",
                           medical.untrained(s))
report.save_figure(fig, root, f"{EXPERIMENT}_gt")
plt.show()

# %% [markdown]
# What the numbers show (computed from the table below):

# %%
display(Markdown(medical.findings(summary, metric, models, methods, medical.untrained(s))))
if medical.is_standin(s):
    display(Markdown(medical.STANDIN_CAVEAT))

# %% [markdown]
# ## The table, beside the paper's
#
# Paper values: the appendix's ground-truth KNEE table (five seeds, real KNEE at 224 px, ImageNet
# weights, 50 SGD epochs). Ours are on the data named in the caption; with the stand-in, only the
# *pattern* (does No XS's MAE grow when the tags are permuted, does an XS method prevent it) is
# comparable, not the values.

# %%
both = medical.beside_paper(summary, EXPERIMENT, "tag")
report.write_comparison(both, root, f"{EXPERIMENT}_gt", f"{label} · {on}", ["model", "case"])
display(Markdown(f"*MAE, mean (std) over seeds — ours on the {on}; {label}*"))
display(medical.wide_table(both, models, methods))

# %%
details = frame[["model", "case", "lam", "xs_batchnorm", "epochs", "batch_size", "status",
                 "weights", "task_loss_first", "task_loss_last", "seconds"]]
display(Markdown(f"*Runs — {on}; {label}*"))
display(details.round({"seconds": 1}))

# %% [markdown]
# ## Appendix: the stripe artifact
#
# The appendix's second contamination: a vertical stripe (6 px wide at 224 px, up to 15 px from
# the left or right edge, scaled with the image) whose brightness is 255 − label·51; the permuted
# split assigns the brightness at random. λ from the paper's stripe table. The quick profile
# runs the architectures in `stripe_models`: none (its CPU budget goes to the main setting); the
# paper profile runs all three.

# %%
stripe_models = medical.per_experiment(s.stripe_models, EXPERIMENT)
stripe_both = None
if stripe_models:
    medical.search_and_choose(s, EXPERIMENT, stripe_models, methods, "stripe", root, device)
    stripe_lambdas = medical_plans.searched_lambdas(root, EXPERIMENT, "stripe", lambdas)
    stripe_runs = medical.medical_runs(s, EXPERIMENT, stripe_models, methods, "stripe",
                                       stripe_lambdas)
    stripe = medical.run_frame(stripe_runs, root, device)
    stripe_label = report.provenance_label(stripe, profile)
    stripe_summary = medical.summarise(stripe)
    report.write_table(stripe_summary, root, f"{EXPERIMENT}_stripe",
                       {"label": stripe_label, "settings": s.as_dict(), "data": on})
    fig = medical.plot_results(stripe_summary, metric, stripe_models, methods,
                               f"{medical.DATASETS[EXPERIMENT]} with stripes, ground-truth masks — "
                               f"{on}\n{stripe_label}")
    report.save_figure(fig, root, f"{EXPERIMENT}_stripe")
    plt.show()
    display(Markdown(medical.findings(stripe_summary, metric, stripe_models, methods,
                                     medical.untrained(s))))
    stripe_both = medical.beside_paper(stripe_summary, EXPERIMENT, "stripe")
    report.write_comparison(stripe_both, root, f"{EXPERIMENT}_stripe", f"{stripe_label} · {on}",
                            ["model", "case"])
    display(Markdown(f"*MAE with stripes, mean (std) — ours on the {on}; {stripe_label}*"))
    display(medical.wide_table(stripe_both, stripe_models, methods))
else:
    display(Markdown(f"**Not run in the `{profile}` profile** (CPU budget): the stripe appendix "
                     f"on {medical.DATASETS[EXPERIMENT]} runs in the paper profile, or here with "
                     "`-p stripe_models '{\"knee\": [\"resnet18\"]}'`. The paper's values:"))
    display(report.paper_values("gt_results").query(
        f"dataset == '{medical.DATASETS[EXPERIMENT]}' and artifact == 'stripe'")
        .pivot_table(index=["architecture", "method"], columns="split", values="mean",
                     aggfunc="first"))

# %% [markdown]
# ## Paper-profile results (committed, from a GPU)

# %%
for name in (f"{EXPERIMENT}_gt", f"{EXPERIMENT}_stripe"):
    committed = medical.committed_paper_table(root, name) if profile != "paper" else None
    if committed is None:
        display(Markdown(f"No paper-profile `{name}` results are committed yet: run "
                         "`make book PROFILE=paper` on a GPU with the KNEE folder as `source` "
                         "and commit `results/paper/`."))
        continue
    committed_label, table = committed
    display(Markdown(f"*{name}: {committed_label}*"))
    display(table.pivot_table(index=["model", "case"], columns="split", values="mean"))

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
# # Setting 1 on Decoy-MNIST
#
# The paper's MNIST figure (test accuracy and Δ-accuracy for Base, No XS, RRR, RBR and TAP) and
# its appendix table (contaminated / permuted / clean, mean and std over seeds). Base trains on
# clean digits; every other model trains on digits whose corner patch reveals the label, with
# ground-truth masks for the XS losses.
#
# Re-run this chapter with other parameters, for example one different seed:
#
# ```bash
# make notebooks        # the jupytext sources notebooks/*.py -> notebooks/*.ipynb
# papermill notebooks/mnist.ipynb out.ipynb -p profile quick -p seeds "[1]"
# ```
#
# Runs already in the results cache (`results/<profile>/runs/`) are read, not retrained.

# %% tags=["parameters"]
profile = "quick"      # "quick" (CPU, embedded digits) or "paper" (GPU, full MNIST)
seeds = None           # e.g. [0, 1, 2, 3, 4]; None: the profile's
epochs = None          # None: the profile's
methods = None         # None: Base, No XS and the registry's XS losses (RRR, RBR, TAP)
lambdas = None         # e.g. {"<method>": 1e-3}; None: the lambda search's choice, else the paper's
source = None          # "embedded", "mnist", "torchvision:/root" or a folder of MNIST IDX files
device = "auto"
results = None         # None: <repository>/results

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from tapkit.book import (chapter, labels, medical_notes, openings, paper_profile, profile_notes,
                         report)
from tapkit.experiments import chapter_plans, plans, protocols
from tapkit.experiments.executors import run_many

ch = chapter.open_chapter(globals(), "mnist", "mnist")
s, root = ch.settings, ch.root
lams = plans.mnist_lambdas(root, lambdas)
ch.show_settings({"settings": s.as_dict(), "λ": lams})
display(Markdown(profile_notes.page_changes(s, protocols.mnist("paper"), profile, methods)))

# %% tags=["hide-input"]
cells = chapter_plans.mnist(s, root, cases=methods, lambdas=lambdas)
runs = run_many(chapter_plans.configs(cells), root / "runs", device)
runs["case"] = [c.method for c in cells]  # the table's method row (base: No XS on clean digits)
label = report.provenance_label(runs, profile)
summary = report.summarise(runs, ["case"])
report.write_table(summary, root, "mnist_gt", {"label": label, "settings": s.as_dict(), "lambdas": lams})
# one row per run: the reproduction report's intervals and paired differences over seeds
left = plans.mnist_left_out(s, methods)  # the cases this profile does not train, with why
report.write_table(runs[["case", "seed", "status", *report.SPLITS]], root, "mnist_gt_runs",
                   {"label": label, "data": ch.data()[0], "lambdas": lams,
                    "left_out": medical_notes.left_out_record(left)})
display(Markdown(f"*Results: {label}*"))

# %% [markdown]
# ## Over seeds: means with 95% intervals
#
# Each cell is the mean over seeds with its 95% Student-t interval; one seed has no interval.
# The reproduction report compares methods by paired differences over the same seeds.

# %% tags=["hide-input"]
fewer = {m: s.seeds_for(m) for m in methods if s.seeds_for(m) != s.seeds}
if fewer:
    display(Markdown("Trained on fewer seeds in this profile, to keep the book within its CPU "
                     "budget (so no interval and no verdict rests on them): " + "; ".join(
                         f"{labels.label(m)} on seed(s) {list(v)}" for m, v in fewer.items()) + "."))
display(report.interval_table(runs, methods))
display(Markdown(medical_notes.left_out_note(left)))

# %% [markdown]
# ## Test accuracy and Δ-accuracy (the paper's MNIST figure)
#
# Bars are ours, with the standard deviation over seeds; the black marks are the paper's values
# (its appendix table), so each bar reads against the number it reproduces.

# %% tags=["hide-input"]
paper = report.paper_values("gt_results").query("dataset == 'MNIST'")
paper = paper.rename(columns={"method": "case"})
fig = report.mnist_figure(summary, methods, "Decoy-MNIST, ground-truth masks", paper, runs)
report.save_figure(fig, root, "mnist_gt")
plt.show()
display(Markdown(f"*{label}*"))

# %% [markdown]
# ## The table, beside the paper's
#
# Paper values are the appendix's ground-truth MNIST table {cite:p}`zhang2024tap` (five seeds, full
# MNIST {cite:p}`lecun1998mnist,lecun1998gradient`, 50 SGD epochs).

# %% tags=["hide-input"]
both = report.beside(summary, paper, ["case", "split"])
report.write_comparison(both, root, "mnist_gt", label, ["case"])
display(report.mark_not_run(report.side_by_side(both, "case", methods), left, paper).rename(
    index=labels.label))

# %% [markdown]
# ## Paper-profile results (committed, from a GPU)
#
# The paper profile (full MNIST, 50 SGD epochs, five seeds) trained on a GPU lease and committed
# under `results/paper/`; its means ± std over seeds beside the paper's. A case the lease did not
# train says so, and why, in our column; the paper's number stays beside it.

# %% tags=["hide-input"]
display(Markdown(paper_profile.provenance_line(root, "setting1")))
display(paper_profile.mnist_beside_paper(root))
display(Markdown(paper_profile.mnist_delta_line(root)))  # No XS's
display(Markdown(paper_profile.mnist_lease_note(root)))

# %% tags=["hide-input"]
ch.opening(openings.mnist_found(runs, root))
ch.finish();

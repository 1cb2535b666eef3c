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
# # Where the models look: overlap with the tags
#
# The appendix's quantitative comparison. For every Setting-1 model of the PNEU and KNEE chapters
# (Base, No XS, RRR, RBR, TAP on VGG-16, ResNet-18, DenseNet-121) we take, on the contaminated
# test images SC(X*, y)_test, the top quartile by magnitude of
#
# * the input gradients (IG: gradient of the summed log-probabilities, channels summed), and
# * the channel-summed activations A^l (Eq. 6) of the four penalised layers (Act 1–4; the last
#   four of VGG-16's five), upsampled bilinearly to the input size,
#
# and measure how much of it falls on the tags (the ground-truth masks):
#
# $$\text{Recall} = \frac{|\text{spurious} \cap \text{top-quartile}|}{|\text{spurious}|}, \qquad
# \text{Precision} = \frac{|\text{spurious} \cap \text{top-quartile}|}{|\text{top-quartile}|}.$$
#
# Pixels are pooled over the test images (on the quick profile 100 of each split, evenly spaced
# over it so that every class keeps its share; the paper profile takes all). Lower is better: a
# model that ignores the tag has little of its top quartile on it. A top quartile placed at
# random has recall 0.25 and, as precision, the share of the image covered by tags; the tables
# state that chance level, which is much higher on the small stand-in images (whose tags are
# enlarged to stay legible) than on 224-px images. The models are read from the results store;
# this chapter builds exactly the configs of the PNEU and KNEE chapters (`tapkit.experiments.medical_runs`), so
# it trains nothing when those chapters have run.

# %% tags=["parameters"]
profile = "quick"      # "quick" (CPU, digits stand-in) or "paper" (GPU, 224 px, ImageNet weights)
seeds = None           # None: from the profile
epochs = None          # None: from the profile
datasets = None        # e.g. ["pneu"]; None: every data set of the profile (PNEU and KNEE)
models = None          # e.g. ["resnet18"]; None: the paper's three (VGG-16, ResNet-18, DenseNet-121)
methods = None         # None: Base, No XS and the registry's XS losses (RRR, RBR, TAP)
lambdas = None         # as in the PNEU/KNEE chapters
source = None          # None: from the profile ("embedded": the digits stand-in); or a data folder
max_images = None      # None: the profile's (quick: 100 of each contaminated split; paper: all)
device = "auto"
results = None         # None: <repository>/results

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from tapkit.book import chapter, medical, openings, overlap_tables, report
from tapkit.methods import method_label, proposed_method

ch = chapter.open_chapter(globals(), "overlap", "medical", datasets, show=True)
s, root, dev = ch.settings, ch.root, ch.device

# %% tags=["hide-input"]
overlap, labels = medical.overlap_measured(s, datasets, models, methods, root, device, dev,
                                           profile, lambdas, max_images)  # the PNEU/KNEE λ
label = " | ".join(f"{medical.DATASETS[e]}: {labels[e]}" for e in datasets)
data_names = "; ".join(medical.data_name(s, e) for e in datasets)
meta = {"label": label, "settings": s.as_dict(), "data": data_names,
        "origin": medical.origin(s).value}
report.write_table(overlap, root, "overlap_runs", meta)  # per run and seed: the report's judges
both = medical.overlap_beside_paper(overlap)
report.write_table(both, root, "overlap", meta)
display(Markdown(f"*Overlap on {data_names} — {label}*"))
if medical.is_standin(s):
    display(Markdown(medical.pretraining_note(
        s, medical.pretraining_frame(s, datasets[0], models, root, device))))

# %% [markdown]
# ## Recall per layer
#
# One panel per dataset and architecture: the recall of the top quartile at the input (IG) and at
# the four penalised layers, per method (cells the profile does not run have no line; the PNEU
# and KNEE chapters say why). The paper's finding is that with TAP the recall falls
# towards zero in the deeper layers and, indirectly, at the input, while RRR {cite:p}`ross2017rrr`
# and RBR {cite:p}`shao2021rbr` keep the tags in the deeper activations.

# %% tags=["hide-input"]
recall = both[both.metric == "recall"]
layers = list(overlap_tables.LAYERS)
fig = overlap_tables.recall_figure(recall, datasets, models, methods, medical.is_standin(s),
                                   medical.untrained(s),
                                   f"Top-quartile recall of the tags — {data_names}")
report.save_figure(fig, root, "overlap_recall")
plt.show()
display(Markdown(f"*{label}*"))

# %% [markdown]
# ## The tables, beside the paper's
#
# Recall and precision, ours (mean over seeds) beside the paper's (five seeds, real data at
# 224 px). The `map_size` row gives the spatial size of each map before upsampling: on the quick
# profile's stand-in (64 px) the deepest maps are 2×2, so their upsampled top quartile is decided
# by a handful of values. Only the input gradients and the first layers carry much information
# there.

# %% tags=["hide-input"]
for experiment in datasets:
    left = medical.left_out(s, experiment, models, methods)  # the profile's not_run
    for metric in ("recall", "precision"):
        display(Markdown(f"*{metric.capitalize()}, ours (paper) — {medical.data_name(s, experiment)}; "
                         f"{labels[experiment]}*"))
        display(overlap_tables.overlap_table(both, metric, experiment, models, methods, layers,
                                             left))
display(Markdown("*Spatial size of each map before upsampling (`map_size`)*"))
display(overlap_tables.map_sizes(both, layers))
display(Markdown(f"*Chance level of a randomly placed top quartile — {data_names}*"))
display(overlap_tables.chance_table(both))

# %% [markdown]
# ## TAP against No XS

# %% tags=["hide-input"]
own, skip = proposed_method(), medical.untrained(s)  # TAP, the paper's own method
compare = overlap_tables.against_none(recall, own, skip)
display(Markdown(f"*Mean recall of the tags, {method_label(own)} vs No XS — {data_names}; "
                 f"{label}*"))
display(compare.round(3))
display(Markdown(overlap_tables.against_none_text(compare, own, skip)))

# %% [markdown]
# ## Paper-profile results (committed, from a GPU)

# %% tags=["hide-input"]
chapter.show_committed(ch, ["overlap"], "run `make book PROFILE=paper` on a GPU with the PNEU "
                       "and KNEE folders and commit `results/paper/`.",
                       overlap_tables.committed_view);

# %% tags=["hide-input"]
ch.opening(openings.overlap_found(compare, root))
ch.finish();

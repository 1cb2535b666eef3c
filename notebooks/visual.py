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
# # Visual comparison: input gradients and activations
#
# The paper's Figure 1 and its appendix figures: for a few randomly chosen test images, the
# magnitude of the input gradient and the channel-summed activation maps A^l (Eq. 6) at the four
# penalised layers (the last four of VGG-16's five) of models trained with No XS, RRR, RBR and
# TAP. The tag's position (its ground-truth mask) is outlined in cyan in every panel. The paper's
# point: with RRR and RBR the input gradients look clean, but the tag can re-emerge in deeper
# activations; TAP suppresses it there, and indirectly in the input gradients too.
#
# The models are read from the results store: the configs are those of the PNEU and KNEE
# chapters (`tapkit.experiments.medical_runs`), so nothing is trained when those chapters have run.

# %% tags=["parameters"]
profile = "quick"      # "quick" (CPU, digits stand-in) or "paper" (GPU, 224 px, ImageNet weights)
seeds = None           # None: from the profile; models of the first seed are shown
epochs = None          # None: from the profile
datasets = None        # e.g. ["pneu"]; None: every data set of the profile (PNEU and KNEE)
models = None          # e.g. ["resnet18"]; None: the paper's three (VGG-16, ResNet-18, DenseNet-121)
methods = None         # None: No XS and the registry's XS losses (RRR, RBR, TAP)
figure1_model = "resnet18"   # the architecture of the Figure-1 panel
n_images = 2           # randomly chosen test images per figure
image_seed = 0         # which ones
lambdas = None         # as in the PNEU/KNEE chapters
source = None          # None: from the profile ("embedded": the digits stand-in); or a data folder
device = "auto"
results = None         # None: <repository>/results

# %% tags=["hide-input"]
from IPython.display import Markdown, display

from tapkit.book import chapter, medical, openings, visual
from tapkit.experiments.setting1 import xs_cases

ch = chapter.open_chapter(globals(), "visual", "medical", datasets, show=True)
if medical.is_standin(ch.settings):
    display(Markdown(medical.pretraining_note(ch.settings, medical.pretraining_frame(
        ch.settings, datasets[0], models, ch.root, ch.device))))

# %% [markdown]
# ## Figure 1
#
# One PNEU test image under RRR {cite:p}`ross2017rrr`, RBR {cite:p}`shao2021rbr` and TAP, as in
# the paper's Figure 1 {cite:p}`zhang2024tap`.

# %% tags=["hide-input"]
figure1 = (visual.figure(ch, "pneu", figure1_model, list(xs_cases()), 1, "visual_figure1",
                         "Figure 1", image_seed, lambdas)
           if "pneu" in datasets else None)

# %% [markdown]
# ## Appendix figures: every architecture, No XS, RRR, RBR and TAP
#
# Rows: for each image, one row per method; columns: the image, |input gradient|, and the
# activation maps of the four penalised layers (each map drawn over the whole image, so a 2×2 map
# shows as four blocks). In the quick profile the images are 64 px, so the deepest maps are 2×2
# and the first layers show best where the tag is. Cells the profile does not run (in the quick
# profile: RBR, VGG-16's RRR, RRR and VGG-16 on KNEE; the PNEU and KNEE chapters say why) have
# no rows, and an architecture with none has no figure.

# %% tags=["hide-input"]
panels = {}
for experiment in datasets:
    for model in medical.run_models(ch.settings, experiment, models, methods):
        panels[(experiment, model)] = visual.figure(ch, experiment, model, methods, n_images,
                                                    f"visual_{experiment}_{model}",
                                                    f"{medical.DATASETS[experiment]} appendix figure",
                                                    image_seed, lambdas)

# %% tags=["hide-input"]
ch.opening(openings.visual_found(figure1, panels, medical.untrained(ch.settings)))
ch.finish();

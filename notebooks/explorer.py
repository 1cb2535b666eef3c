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
# # Explore the activation maps
#
# Which pixels and which layers carry the spurious corner patch? The figures of the other chapters
# show a few chosen images; here you choose. The explorer below shows, for the Decoy-MNIST models
# of [Setting 1](mnist.ipynb) (No XS, RRR, RBR and TAP, trained on digits whose corner patch reveals the
# label):
#
# - the **input** with the ground-truth mask M of the patch outlined,
# - the **input gradient** (what RRR penalises inside M), as a magnitude,
# - the **channel-summed activation map** Aˡ of the chosen penalised layer, with the downscaled
#   mask D(M, l) that TAP penalises drawn on top,
# - the **prediction** with its class probabilities.
#
# The test images are from the *permuted* test set: their patch encodes a wrong label, so a model
# that learned the patch predicts that label instead of the digit.
#
# Move the **image** slider and pick a **model** and a **layer**. This page needs no kernel and no
# network: every combination was computed when the book was built, and the controls switch between
# the stored images in your browser. To browse every test image, or your own models, open the
# live version (see the end of the chapter).

# %% tags=["parameters"]
profile = "quick"      # "quick" (CPU, embedded digits) or "paper" (GPU, full MNIST)
seeds = None           # the explorer shows the models of the first seed; None: profile default
epochs = None          # None: profile default
methods = None         # None: No XS and the registry's XS losses the profile trains
lambdas = None         # None: lambda search choice, else the paper values (as the MNIST chapter)
source = None          # "embedded", "mnist", "torchvision:/root" or a folder of MNIST IDX files
device = "auto"        # where missing models are trained; the explorer itself runs on the CPU
results = None         # None: the results folder of the repository
split = "test_permuted"  # or "test_contaminated", "test_clean"
n_images = 12          # kernel-free explorer: images stored in the page (at most 24)
live = False           # True: recompute in the kernel as the controls move (needs Jupyter)

# %% tags=["hide-input"]
import numpy as np
from IPython.display import Markdown, display

from tapkit import metrics, widgets
from tapkit.book import chapter, labels, openings, report, table_display
from tapkit.experiments import plans
from tapkit.models import target_layers
from tapkit.experiments.executors import LocalExecutor, run_many
from tapkit.experiments.store import ResultStore
from tapkit.experiments.store import load_trained
from tapkit.method_options import TapOptions
from tapkit.methods import method_of
from tapkit.fit import experiment_data

ch = chapter.open_chapter(globals(), "explorer", "mnist", show=True)
s, root = ch.settings, ch.root
lams = plans.mnist_lambdas(root, lambdas)
seed = s.seeds[0]

# The same configs as the MNIST chapter, so its trained models are read from the results cache.
configs = {labels.label(m): cfg
           for m, cfg in plans.mnist_seed_configs(s, methods, lams, seed).items()}
store = ResultStore(root / "runs")
missing = [label for label, cfg in configs.items() if store.load(cfg) is None]
runs = run_many(configs.values(), root / "runs", device, executor=LocalExecutor(progress=False))
status = dict(zip(configs, runs["status"]))  # a run that did not converge has no model
models = {label: load_trained(cfg, root / "runs", "cpu") for label, cfg in configs.items()
          if status[label] == "ok"}
task, splits = experiment_data(next(iter(configs.values())))  # the data the models saw
test = splits[split]
label = report.provenance_label(runs, profile)
display(Markdown(f"*Models: {label}; seed {seed}; λ {lams}; "
                 f"{len(configs) - len(missing)} read from the results cache"
                 + (f", trained now: {', '.join(missing)}" if missing else "") + "*"
                 + "".join(f"\n\n**{m} did not converge** (status `{status[m]}`): it is not in "
                           "the explorer." for m in configs if m not in models)))

# %% [markdown]
# ## The explorer

# %% tags=["hide-input"]
cfg0 = next(iter(configs.values()))
layers = list(target_layers(cfg0.model))
wrong = (metrics.misclassified(models["No XS"], test) if "No XS" in models
         else np.array([], dtype=int))
lead = wrong[: n_images // 2]
indices = None if live else widgets.spread_over_classes(test.y.numpy(), n_images, first=lead)
if len(lead) and not live:
    display(Markdown(f"Images 0 to {len(lead) - 1} on the slider are test images No XS gets wrong "
                     f"(it gets {len(wrong)} of the {len(test)} wrong); the others are the first "
                     "test images of each class."))
kappa = s.options_for(method_of(TapOptions)).kernel_size  # TAP's κ (Eq. 7)
explorer = widgets.explorer(models, test, layers, indices=indices, live=live, kernel_size=kappa)
explorer

# %% [markdown]
# ## On these images, on average
#
# For each model: how many of the explorer's images it gets right, the share of its
# input-gradient magnitude inside the mask M, and the share of each penalised layer's activation
# inside D(M, l), averaged over the images. The patch covers about 2% of the pixels, so a larger
# share means the model attends to it. Half of these images were chosen because No XS gets them
# wrong: the counts are no accuracy estimate (the [MNIST chapter](mnist.ipynb) has those).

# %% tags=["hide-input"]
shown = (explorer.indices if not live
         else widgets.spread_over_classes(test.y.numpy(), n_images, first=lead))
summary = widgets.views_summary(models, test, shown, layers, explorer.kernel_size)
display(table_display.styled(summary, percent=summary.columns.drop("right")))

# %% [markdown]
# ## The live version
#
# The live explorer runs the models in a Jupyter kernel: it can show any of the test images, and
# recomputes the maps with `tapkit.maps.explain` whenever a control moves. The chapter is a
# jupytext file; make it a notebook with the live explorer switched on (papermill injects the
# parameter and runs it; the models come from the results cache, so this takes seconds once the
# MNIST chapter has run), then open it in Jupyter and run it again there, so that a kernel is
# attached to the controls:
#
# ```bash
# # from the repository root, after `make install`
# .venv/bin/jupytext --to ipynb --set-kernel - notebooks/explorer.py   # -> notebooks/explorer.ipynb
# .venv/bin/papermill notebooks/explorer.ipynb explorer-live.ipynb -p live True -p profile quick
# .venv/bin/pip install jupyterlab && .venv/bin/jupyter lab explorer-live.ipynb   # Run All
# ```
#
# (Or open `notebooks/explorer.ipynb` in any Jupyter front end, set `live = True` in its parameters
# cell and run all cells.) From your own code, with any models that share the target layers:
#
# ```python
# from tapkit import widgets
# ex = widgets.explorer({"No XS": model_a, "TAP": model_b}, splits["test_permuted"],
#                       ["relu1", "relu2"], live=True)
# ex                # in a notebook cell; ex.current holds the arrays on show
# ```
#
# Leave out `live=True` for the kernel-free explorer of this page: it stores at most 24 images
# (choose them with `indices=`), and works in any saved notebook or HTML page without a kernel.

# %% tags=["hide-input"]
ch.opening(openings.explorer_found(summary))
ch.finish(seeds=s.seeds[:1]);  # its runs use the first seed

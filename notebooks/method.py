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
# # The method: Targeted Activation Penalty
#
# A CNN layer keeps the spatial layout of its input, so the part of an activation map that
# "sees" a spurious signal can be located from the input-level annotation mask M. TAP penalises
# exactly that part. With Z^l the l-th convolution's output and σ its ReLU, the activation map is
# the channel sum (Eq. 6)
#
# $$A^l = \sum_{c=1}^{C^l} \sigma(Z^l_c),$$
#
# the mask is brought to the layer's size by max-pooling with stride 1 and kernel κ (growing it by
# ⌊κ/2⌋ pixels, for the receptive field) followed by average pooling (Eq. 7)
#
# $$\mathcal{D}(M, l) = \mathrm{AvgPool}(\mathrm{MaxPool}_\kappa(M), H^l, W^l),$$
#
# and the penalty over L targeted layers is (Definition 2)
#
# $$\mathcal{L}^{TAP}_{XS}(X, M; \theta) = \frac{1}{L}\sum_{l=1}^{L} \lVert \mathcal{D}(M,l) \odot A^l \rVert_1,$$
#
# added to the task loss with a weight λ (Eq. 3). In tapkit these are
# `tapkit.losses.downscale_mask` and `tapkit.losses.tap`; on any CNN:
#
# ```python
# import torch.nn.functional as F
# from tapkit import capture, tap
#
# layers = ["layer1", "layer2", "layer3", "layer4"]          # name the layers to target
# for x, y, mask in loader:                                  # mask: N x 1 x H x W, 1 = spurious
#     with capture(model, layers) as acts:                   # forward hooks, removed on exit
#         logits = model(x)
#     loss = F.cross_entropy(logits, y) + lam * tap(acts, mask)
#     optimizer.zero_grad(); loss.backward(); optimizer.step()
# ```

# %% tags=["parameters"]
profile = "quick"
seeds = None
epochs = None
lambdas = None
source = None
device = "auto"
results = None       # None: <repository>/results
kernel_size = 3

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from tapkit.book import chapter, method_figures, openings, report, table_display
from tapkit.experiments import plans, protocols
from tapkit.experiments.executors import run_many
from tapkit.fit import experiment_data
from tapkit.methods import comparators, get_method, no_xs, proposed_method

ch = chapter.open_chapter(globals(), "method", "mnist", show=True)
s, root = ch.settings, ch.root
lams = plans.mnist_lambdas(root, lambdas)

# %% [markdown]
# ## D(M, l) on real masks
#
# Top: a Decoy-MNIST {cite:p}`ross2017rrr` mask downscaled to the two-layer CNN's targeted layers,
# the outputs of its two conv blocks (after each max-pool, as for VGG-16 {cite:p}`simonyan2015vgg`
# and as in the authors' released code {cite:p}`zhang2023tapcode`). Second: a text-tag mask on a
# 224-px image downscaled to the four residual stages of ResNet-18 {cite:p}`he2016resnet`. The
# last rows: a tag of the medical stand-in at the quick profile's image size, downscaled to the
# layers ResNet-18 and DenseNet-121 {cite:p}`huang2017densenet` are penalised at there (at 32 px
# ResNet-18's last stage would be 1×1, and any tag would cover all of it; hence the stand-in's
# size). Grey levels are the weights D(M, l) gives each activation.

# %% tags=["hide-input"]
_, splits = experiment_data(plans.mnist_case_config(s, proposed_method(), lams, s.seeds[0]))
rows = method_figures.downscale_rows(splits["test_contaminated"].mask[:1],
                                     protocols.medical("quick").image_size)
fig = method_figures.downscale_figure(rows, kernel_size)
report.save_figure(fig, root, "method_downscale")
plt.show()

# %% [markdown]
# ## Theorem 1, measured
#
# Theorem 1 says that driving the activations whose receptive field contains a pixel to zero
# (through their filters) sets that pixel's input gradient to zero: TAP reaches the input
# gradient without computing it. We measure it on the Decoy-MNIST models of the MNIST chapter
# (the same configs, read from the results cache): the share of the absolute input gradient
# (of the summed log-probabilities) that falls inside the mask, and the share of each targeted
# activation map that falls inside D(M, l), on the contaminated test set.

# %% tags=["hide-input"]
# No XS, TAP and the first comparator that penalises the input gradient directly (RRR)
cases = [no_xs(), proposed_method(), [m for m in comparators() if get_method(m).input_grad][0]]
configs = plans.mnist_configs(s.with_overrides(seeds=s.seeds[:1]), cases, lams)  # first seed
runs = run_many(configs, root / "runs", device)
label = report.provenance_label(runs, profile)
test = splits["test_contaminated"]
theorem = method_figures.theorem_shares(configs, root / "runs", test, kernel_size)
report.write_table(theorem.reset_index(), root, "method_theorem1", {"label": label})
display(Markdown(f"*Share of gradient/activation mass inside the (downscaled) mask — {label}. "
                 f"The mask covers {test.mask.mean().item():.1%} of the pixels.*"))
display(table_display.styled(theorem, digits=4))

# %% tags=["hide-input"]
coverage = test.mask.mean().item()
fig = method_figures.theorem_figure(theorem, coverage)
report.save_figure(fig, root, "method_theorem1")
plt.show()
display(Markdown(f"*{label}*"))

# %% [markdown]
# What the bars show, against chance (the patch's share of the pixels): TAP penalises the
# activations, RRR {cite:p}`ross2017rrr` the input gradient itself.

# %% tags=["hide-input"]
display(Markdown(openings.theorem_findings(theorem, coverage)))

# %% tags=["hide-input"]
ch.opening(openings.method_found(theorem, test.mask.mean().item()))
ch.finish(seeds=s.seeds[:1]);  # its runs use the first seed

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
# # Speed and memory (Table 1)
#
# The paper's Table 1: iterations per second and memory of one training step (forward, XS term,
# backward, optimiser step) for No XS, RRR, RBR and TAP on VGG-16, ResNet-18 and DenseNet-121,
# "for batches of 16 224×224-pixel images" on an RTX 3080 (10 GB), where DenseNet-121 with RBR ran
# out of memory. TAP needs no second derivative, so the paper finds it at about No XS's speed and
# memory, while RRR (second derivatives) and RBR (third) cost several times more.
#
# `tapkit.experiments.table1.measure` measures the table from the profile's protocol, the same
# function the GPU lease (`scripts/gpu.py`) calls: its architectures, methods and loss forms,
# named under the settings below (both profiles time the full-width VGG-16 with the authors'
# head, the one the paper profile's chapters train, where the quick profile's train a quarter of
# its width; the paper profile also the authors' released losses). For each model, `tapkit.benchmark.bench` times the methods
# interleaved: all pairs built and warmed up, then rounds of one training step per method, the
# rounds going through every order of the methods in turn, so that machine noise and drift slow
# every method of a round alike and no method always runs right after the same one. No XS and
# TAP, which take no input gradients and are cheap, run many more rounds than RRR and RBR. A
# method's speed relative to No XS is the geometric mean over rounds of the round's ratio (No
# XS's step time, the mean of its two steps in that round, over the method's) with its 95%
# interval: on a busy machine the interval widens instead of the
# ratio moving. The absolute it/s is 1 / fastest step (interference only slows a step down, as
# Python's `timeit` advises). Peak memory is measured pair by pair: CUDA's max-allocated on a
# GPU and, on a CPU, the peak bytes of live tensors during the step, counted at the dispatcher
# (`tapkit.memory`: parameters, gradients, optimiser state, activations and temporaries), exact
# and the same from pass to pass; No XS and TAP are measured in several passes, for an interval
# of their ratio. RBR on the BatchNorm networks uses BatchNorm in
# eval mode for its XS term, as in training (see the PNEU chapter). Absolute numbers depend on the
# hardware, so they are compared with the paper's as **ratios to No XS** on the same
# architecture. No XS is measured twice per architecture ("No XS, again"): the gap between the two
# is the measurement noise against which the other ratios should be read.
#
# Beside the deep models, the chapter measures the two-layer CNN the paper trains on Decoy-MNIST, at
# its own batch and image size (the paper profile: the paper's 256 digits of 28 px,
# `two_layer_cnn@256x28`; the quick profile: the 64 its MNIST chapters train with): there a step is
# small, and TAP's extra pooling and masking per layer weigh the most. It is context: the paper's
# Table 1 and its speed claim are about the deep CNNs, and so is the verdict below. Every step
# uses the paper's optimiser, SGD with momentum 0.9.
#
# Last, how close a training step runs to what this machine can do: a No XS step's counted FLOPs
# per second as a share of a large matrix multiply's, at the settings the book trains each model
# with.
#
# The same measurement from the command line: `tapkit bench --models
# vgg16,resnet18,densenet121,two_layer_cnn@256x28 --batch-size 16 --image-size 224 --out bench.json`.

# %% tags=["parameters"]
profile = "quick"      # "quick" (CPU, small batch) or "paper" (GPU, batch 16 at 224 px)
# None: the profile's (Table 1's architectures, then the two-layer CNN as context); else each
# NAME or NAME@BATCHxSIZE (its own batch and image size; plain names take the profile's)
models = None
methods = None         # None: the profile's (No XS, RRR, RBR, TAP)
batch_size = None      # None: from the profile
image_size = None      # None: from the profile
steps = None           # None: from the profile
warmup = None          # None: from the profile
rerun = False          # True: measure again even when the stored table has these settings
device = "auto"
results = None         # None: <repository>/results

# %% tags=["hide-input"]
import json

import matplotlib.pyplot as plt
import pandas as pd
import torch
from IPython.display import Markdown, display

from tapkit.book import (chapter, labels, medical, openings, paper_profile, report,
                         speed_memory)
from tapkit.benchmark import efficiency, model_spec
from tapkit.experiments import protocols, table1
from tapkit.results import device_name, provenance, resolve_device

ch = chapter.open_chapter(globals(), "speed_memory", None)
root = ch.root
# models given: those alone (no context models); None: the profile's
protocol = protocols.bench(profile, batch_size=batch_size, image_size=image_size, steps=steps,
                           warmup=warmup, models=models, context=None if models is None else [],
                           methods=methods)
methods = list(protocol.methods)
b = protocol.as_dict()  # the settings, as stored beside the measurement
dev = resolve_device(device)
medical.set_threads(protocol)
specs = [model_spec(m, b["batch_size"], b["image_size"]) for m in table1.specs(protocol)]
names = [name for name, _, _ in specs]
judged = table1.architectures(protocol)  # Table 1's; the others are context
ARCH = {n: labels.label(n) + ("" if n in judged else " (context)") for n in names}
ch.show_settings({"settings": b, "device": device_name(dev)})
display(Markdown(speed_memory.timed_text(protocol, profile)))

# %% tags=["hide-input"]
# what a measurement is stored with: one taken with the same is shown again, not re-measured
stored = {"settings": b, "models": list(table1.specs(protocol)), "methods": methods,
          "device": device_name(dev), "threads": torch.get_num_threads()}
table = root / "tables" / "speed_memory.csv"
meta = None if rerun else speed_memory.stored_meta(table, **stored)
if meta is None:
    # each model's methods interleaved, No XS measured twice ("none_again": the noise floor)
    ratios = speed_memory.write_measured(table1.measure(protocol, dev, profile), root)
    meta = json.loads(table.with_suffix(".json").read_text())
else:
    ratios = medical.bench_ratios(meta["rows"])
    report.write_table(ratios, root, "speed_memory", meta)  # shown again: still this page's
rows, label = meta["rows"], meta["label"]
prov = provenance(dev)
display(Markdown(f"*{label}*"))

# %% [markdown]
# ## Ratios to No XS, beside the paper's

# %% tags=["hide-input"]
ratios = speed_memory.in_order(ratios, names, methods)
display(Markdown(f"*Speed and memory as ratios to No XS, ours vs the paper's (RTX 3080, batch 16 "
                 f"at 224 px) — {label}*"))
display(speed_memory.ratios_table(ratios, ARCH))

# %% tags=["hide-input"]
fig = speed_memory.ratios_figure(ratios, names, methods, ARCH)
report.save_figure(fig, root, "speed_memory")
plt.show()
display(Markdown(f"*{label}*"))

# %% [markdown]
# ## TAP's overhead and RBR on DenseNet-121
#
# The report's claim "TAP keeps at least 0.95 of No XS's speed and memory" is judged on the
# paper's Table 1 architectures (VGG-16, ResNet-18, DenseNet-121; the two-layer CNN's row is
# context and decides nothing), per architecture from the intervals: **reproduced** when TAP's
# speed interval lies at or above 0.95 and its memory interval at or below 1/0.95 ≈ 1.053;
# **not reproduced** when an interval lies wholly on the wrong side; **inconclusive on this machine** when an interval straddles the
# threshold. Inconclusive is not a failure of TAP: it says this machine's noise in these rounds
# (a shared CPU, another build beside this one) is larger than TAP's distance from the
# threshold; more rounds (`tapkit bench --paired-steps`) or a quieter machine decide. The
# interval of "No XS, again" against No XS is the same measurement's noise: it should contain 1.
# No XS is timed twice in every round, so each XS method's step is paired with the round's mean
# of the two (geometric): a ratio to one of them alone would carry that one's luck.

# %% tags=["hide-input"]
checks = speed_memory.tap_checks(ratios, ARCH)
display(Markdown(f"*TAP against No XS, with 95% intervals over paired rounds (speed) and passes "
                 f"(memory) — {label}*"))
display(checks)
oom = speed_memory.oom_text(ratios, b["batch_size"], b["image_size"], device_name(dev))
if oom:
    display(Markdown(oom))

# %% [markdown]
# ## Efficiency: a training step against the machine's matrix multiply
#
# FLOPs per second of a real No XS training step (forward, backward and optimiser step; FLOPs
# counted with PyTorch's `FlopCounterMode`: every matrix multiply and convolution, forward and
# backward) over the FLOPs per second of a 2048×2048 float32 matrix multiply, measured in the same
# process with the same threads (the fastest of a few, before each model and after the last; one thread
# on the quick profile, as its runs train). 1.0 would be
# a step as fast as BLAS; the ratio, unlike seconds, compares machines. Each model at the batch,
# image size and optimiser the book trains it with. Adam runs fused (`tapkit.fit.make_optimizer`):
# its per-tensor loop cost a third of a ResNet-18 step at 32 px. The same from the command line:
# `tapkit bench --efficiency --models resnet18@16x64 --optimizer adam --out eff.json`.

# %% tags=["hide-input"]
eff_rows = None if rerun else speed_memory.stored_rows(root / "tables" / "speed_efficiency.csv",
                                                       **stored)
if eff_rows is None:
    eff_rows = efficiency([tuple(e) for e in b["efficiency"]], steps=b["efficiency_steps"],
                          warmup=max(b["warmup"], 1), device=dev, threads=b["efficiency_threads"])
eff = pd.DataFrame(eff_rows)
report.write_table(eff, root, "speed_efficiency",
                   {"label": label, **stored, "provenance": prov, "rows": eff_rows})
if not eff.empty:
    display(Markdown(speed_memory.efficiency_caption(eff, prov["device"], b["efficiency_steps"])))
    display(speed_memory.efficiency_table(eff))

# %% [markdown]
# ## Paper-profile results (committed, from a GPU)
#
# The quick profile's CPU numbers say little about a GPU: on a CPU a step is compute-bound and
# the batch is small. The paper-profile measurement (batch 16
# of 224 px on a GPU) is the one to set beside the paper's Table 1. Absolute it/s and GB differ
# between an H100 and the paper's RTX 3080, so both sides are shown as ratios to No XS on the same
# architecture (ours with the 95% interval over paired rounds, the paper's with its own it/s and
# GB in parentheses).

# %% tags=["hide-input"]
display(Markdown(paper_profile.provenance_line(root, "table1")))
display(paper_profile.speed_beside_paper(root))
display(Markdown(paper_profile.densenet_rbr_line(root)))

# %% tags=["hide-input"]
ch.opening(openings.speed_found(ratios, label))
ch.finish();

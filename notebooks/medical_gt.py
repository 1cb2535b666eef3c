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

# %% tags=["parameters"]
experiment = "pneu"    # "pneu" or "knee": the book runs this chapter once for each
profile = "quick"      # "quick" (CPU, digits stand-in), "paper" (GPU, 224 px, ImageNet weights), "smoke"
seeds = None           # e.g. [0, 1, 2, 3, 4]; None: from the profile
epochs = None          # None: from the profile (an explicit value applies to every architecture)
batch_size = None      # None: from the profile (an explicit value applies to every architecture)
image_size = None      # None: from the profile (paper: 224 px)
grids = None           # λ-search grids, e.g. {"<method>": [1e-3]} or {"<method>": {"resnet18": [1e-3]}}; None: profile
models = None          # e.g. ["resnet18"]; None: the paper's three (VGG-16, ResNet-18, DenseNet-121)
methods = None         # None: Base, No XS and the registry's XS losses (RRR, RBR, TAP)
lambdas = None         # None: from the paper; e.g. {"<method>": 1e-3} or {"resnet18": {"<method>": 1e-3}}
source = None          # None: from the profile ("embedded": the digits stand-in); or the data folder
stripe_models = None   # architectures of the stripe appendix; None: from the profile
device = "auto"
results = None         # None: <repository>/results

# %% tags=["hide-input"]
from IPython.display import Markdown, display

from tapkit.book import chapter, medical, openings, profile_notes, report, standin, table_display
from tapkit.experiments import chapter_plans, protocols
from tapkit.book.params import ParameterError

if experiment not in medical.DATASETS:
    raise ParameterError(f"parameter experiment={experiment!r}: expected one of "
                         f"{sorted(medical.DATASETS)}")
NAME = medical.DATASETS[experiment]
TEXT = medical.PAGE_TEXT[experiment]  # what differs between the two data sets: metric, tags...
# the data box (stand-in or real) and the per-architecture note, displayed by open_chapter; the
# title and first paragraph become the page's first cell (scripts/run_notebook.py), so the box
# comes right after that paragraph
ch = chapter.open_chapter(globals(), experiment, "medical", [experiment])
s, root = ch.settings, ch.root
on = medical.data_name(s, experiment)
display(Markdown(medical.page_title(s, experiment)))
display(Markdown(profile_notes.page_changes(s, protocols.medical("paper"), profile, methods,
                                            models, experiment)))
display(Markdown(f"""Re-run this chapter on the real data (the folder holding `{TEXT['folder']}/`), for example:

```bash
papermill notebooks/medical_gt.ipynb out.ipynb -p experiment {experiment} -p profile paper -p source /data/{experiment}
```"""))
ch.show_settings()

# %% [markdown]
# ## How the runs are trained
#
# One config per (architecture, method, seed), trained through the results store (a rerun reads
# the cache). The λ of each XS method comes from a λ search with the paper's criterion: the
# lowest loss on the validation split with permuted tags, SC(X*, permute(y))_val. The paper
# profile searches the paper's grid for every architecture and method, with the loss
# normalisations the paper's λ were tuned on (the released code's). The paper's λ were tuned for
# ImageNet-initialised {cite:p}`deng2009imagenet` networks at 224 px. The quick profile cannot
# download ImageNet weights; its networks start instead from weights pretrained on embedded digits
# that no stand-in image comes from (below: what that start is, what it cost, and why not the
# formula-driven fractals of {cite:t}`kataoka2020fractaldb`), and XS terms differ by orders of
# magnitude between architectures, so the quick profile searches the
# stand-in's own validation split over three values per architecture (the grids in the settings
# above, `search`); a method without a grid uses the paper's λ. The table under the figure lists
# λ, each method's `options` (RRR's and RBR's `batchnorm` among them), epochs and status per run.
# RBR {cite:p}`shao2021rbr` needs the input gradients of ResNet-18 {cite:p}`he2016resnet` and DenseNet-121
# {cite:p}`huang2017densenet`, which have BatchNorm, and of VGG-16 {cite:p}`simonyan2015vgg`,
# which has none; which RBR this profile trains, and how, follows from its options:

# %% tags=["hide-input"]
display(Markdown(profile_notes.rbr_note(s, models)))

# %% tags=["hide-input"]
# the chapter's runs, each table's after its λ search (run here, its choice written)
cells = chapter_plans.planned(experiment, s, root, chapter_plans.runner(root, device),
                              models=models, cases=methods, lambdas=lambdas)
search = medical.search_frame(s, experiment, models, methods, "tag", root, device)  # cached
runs = chapter_plans.part(cells, f"{experiment}_gt")
frame = medical.run_frame(runs, root, device)
frame["trained as"] = [r.cfg.model for r in runs]
label = report.provenance_label(frame, profile)
summary = medical.summarise(frame)
meta = medical.table_meta(s, experiment, models, methods, label)
report.write_table(summary, root, f"{experiment}_gt", meta)
per_run = medical.runs_table(frame)  # the report's paired differences over seeds
report.write_table(per_run, root, f"{experiment}_gt_runs", meta)
left = medical.left_out(s, experiment, models, methods)
display(Markdown(f"*Results on the {on}: {label}*"))
if medical.is_standin(s):
    display(Markdown(medical.budget_note(s, experiment, frame.seconds.sum()
                                         + (search.seconds.sum() if len(search) else 0))))
    display(Markdown(medical.pretraining_note(
        s, medical.pretraining_frame(s, experiment, models, root, device))))

# %% tags=["hide-input"]
if len(search):
    choice = medical.read_choice(root, experiment)
    display(Markdown(f"## The λ search on the {on}\n\nEvery grid value on the first seed; the "
                     f"chosen λ (✓) has the lowest validation loss (the paper's criterion) among "
                     "the runs that learned the task: their clean validation score goes at "
                     "least a quarter of the way from a constant prediction's to perfect (*share "
                     "learned*); *(unguarded)* marks the λ the paper's criterion alone would "
                     "choose where the guard chose another. "
                     f"{TEXT['metric']} on the three test splits, in the second table, is for "
                     "reading the choice only; it plays no part in it. What was chosen:"))
    display(Markdown(medical.search_findings(search, choice, experiment)))
    display(Markdown(f"*λ search — {on}; {label}*"))
    search_runs = medical.search_table(search, choice)
    display(medical.search_choice_shown(search_runs))
    display(Markdown(f"*The search's runs on the test splits ({TEXT['metric']}), for reading "
                     f"the choice only — {on}*"))
    display(medical.search_scores_shown(search_runs))
else:
    display(Markdown(f"No λ search in the `{profile}` profile: the XS methods use the paper's λ."))

# %% tags=["hide-input"]
display(Markdown(f"## {TEXT['metric']} and Δ-{TEXT['metric']} (the paper's {NAME} figure)"))

# %% tags=["hide-input"]
chapter.medical_figure(ch, summary, experiment, models, methods,
                       f"{NAME} setting 1, ground-truth masks — {on}", f"{experiment}_gt",
                       caveat=True, runs=frame, caption=label)

# %% [markdown]
# ## Over seeds: means with 95% intervals and paired differences
#
# Reliance on the tag is what the metric worsens by when the tags are permuted (positive: the
# model uses the tag). Each cell is the mean over the architecture's seeds with its 95%
# Student-t interval; one seed has no interval. The last column compares each XS method with No
# XS seed by seed (the same data split and start), as the reproduction report's verdicts do.

# %% tags=["hide-input"]
display(Markdown(f"*Over seeds — {on}; {label}*"))
display(medical.seed_table(per_run, experiment).set_index(["architecture", "method"]))
if medical.is_standin(s):
    display(Markdown(standin.targets_text(experiment)))
    display(standin.build_targets(per_run, experiment))

# %% [markdown]
# ## The table, beside the paper's
#
# Paper values: the appendix's ground-truth table for this data set (five seeds, the real images
# at 224 px — PNEU's chest X-rays {cite:p}`kermany2018pneumonia,kermany2018data`, KNEE's
# Kellgren–Lawrence graded knee X-rays {cite:p}`chen2018kneedata,chen2019knee` — ImageNet weights,
# 50 SGD epochs). Ours are on the data named in the caption; with the
# stand-in, only the *pattern* (does No XS do worse when the tags are permuted, does an XS method
# prevent it) is comparable, not the values.

# %% tags=["hide-input"]
both = medical.beside_paper(summary, experiment, "tag")
report.write_comparison(both, root, f"{experiment}_gt", f"{label} · {on}", ["model", "case"],
                        medical.origin(s))
display(Markdown(f"*{TEXT['metric']}, mean (std) over seeds — ours on the {on}; {label}*"))
display(medical.wide_table(both, models, methods, left, medical.paper_summary(experiment, "tag")))

# %% tags=["hide-input"]
display(Markdown(f"*Runs — {on}; {label}*"))
display(table_display.styled(medical.details_table(frame)))

# %% [markdown]
# ## Appendix: the stripe artifact

# %% tags=["hide-input"]
display(Markdown(f"""The appendix's second contamination: a vertical stripe (6 px wide at 224 px, up to 15 px from
the left or right edge, scaled with the image) whose brightness is {TEXT['stripe']}. λ as for
the tags: searched on the stripes' own validation split where the profile searches, else the
paper's stripe table. {medical.stripe_scope(s, experiment)}"""))

# %% tags=["hide-input"]
stripe_models = medical.per_experiment(s.stripe_models, experiment)
if stripe_models:
    stripe_runs = chapter_plans.part(cells, f"{experiment}_stripe")
    stripe = medical.run_frame(stripe_runs, root, device)
    stripe_label = report.provenance_label(stripe, profile)
    stripe_summary = medical.summarise(stripe)
    stripe_meta = medical.table_meta(s, experiment, stripe_models, methods, stripe_label)
    report.write_table(stripe_summary, root, f"{experiment}_stripe", stripe_meta)
    report.write_table(medical.runs_table(stripe), root, f"{experiment}_stripe_runs", stripe_meta)
    stripe_left = medical.stripe_left_out(s, experiment, stripe_models, methods)
    chapter.medical_figure(ch, stripe_summary, experiment, stripe_models, methods,
                           f"{NAME} with stripes, ground-truth masks — {on}",
                           f"{experiment}_stripe", runs=stripe, left=stripe_left)
    stripe_both = medical.beside_paper(stripe_summary, experiment, "stripe")
    report.write_comparison(stripe_both, root, f"{experiment}_stripe", f"{stripe_label} · {on}",
                            ["model", "case"], medical.origin(s))
    display(Markdown(f"*{TEXT['metric']} with stripes, mean (std) — ours on the {on}; "
                     f"{stripe_label}*"))
    display(medical.wide_table(stripe_both, stripe_models, methods, stripe_left,
                               medical.paper_summary(experiment, "stripe")))
else:
    display(Markdown(f"**Not run in the `{profile}` profile** (CPU budget): the stripe appendix "
                     f"on {NAME} runs in the paper profile, or here with "
                     f"`-p stripe_models '{{\"{experiment}\": [\"resnet18\"]}}'`. The paper's values:"))
    display(medical.paper_stripe_table(experiment))

# %% [markdown]
# ## Paper-profile results (committed, from a GPU)

# %% tags=["hide-input"]
chapter.show_committed(
    ch, [f"{experiment}_gt", f"{experiment}_stripe"],
    f"run `make book PROFILE=paper` on a GPU with the {NAME} folder as `source` and commit "
    "`results/paper/`.",
    shape=chapter.by_split);
ch.opening(openings.medical_found(summary, experiment, root, medical.untrained(s)))
ch.finish();

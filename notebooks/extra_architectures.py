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
# # Two more architectures: EfficientNet-B0 and MobileNet-v2
#
# The appendix's "Additional Experiments with Deep Architectures": TAP against No XS and Base on
# two further CNNs, EfficientNet-B0 {cite:p}`tan2019efficientnet` and MobileNet-v2 {cite:p}`sandler2018mobilenetv2`, on PNEU and KNEE with text tags and ground-truth masks. The paper gives these
# results only as a figure (no table), and λ only in the text: TAP λ = 1e-6 on PNEU and 1e-5 on
# KNEE (it also ran RRR, λ = 1e-6, and RBR, λ = 1e3, for EfficientNet-B0 on KNEE; add `rrr` and
# `rbr` to `methods` to run them, at tens of times TAP's cost: double backward through
# depthwise convolutions is slow). TAP targets four blocks spread over each network's depth
# (`tapkit.models`: EfficientNet-B0 `features.2/3/5/7`, MobileNet-v2 `features.3/6/13/17`).
#
# The paper's text reports, qualitatively: both networks are "notably less vulnerable to spurious
# signals on PNEU, as the No XS models show little contamination sensitivity", and TAP
# "non-spuriously matches clean Base model performance".

# %% tags=["parameters"]
profile = "quick"      # "quick" (CPU, digits stand-in) or "paper" (GPU, 224 px, ImageNet weights)
seeds = None           # None: from the profile
epochs = None          # None: from the profile
datasets = None        # e.g. ["pneu"]; None: every data set of the profile (PNEU and KNEE)
models = None          # e.g. ["mobilenet_v2"]; None: the appendix's two (EfficientNet-B0, MobileNet-v2)
methods = None         # None: Base, No XS and TAP (the registry's own method)
lambdas = None         # None: from the paper (see above)
source = None          # None: from the profile ("embedded": the digits stand-in); or a data folder
device = "auto"
results = None         # None: <repository>/results

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from tapkit.book import chapter, medical, openings, report, table_display
from tapkit.experiments import chapter_plans

ch = chapter.open_chapter(globals(), "extra_architectures", "medical", datasets, notes=False)
s, root = ch.settings, ch.root
ch.show_settings({"settings": s.as_dict(),
                  "λ": {e: medical.paper_lambdas(e, models[0]) for e in datasets}})

# %% tags=["hide-input"]
summaries, frames = {}, {}
# the chapter's runs, after their λ search (the paper profile's only)
cells = chapter_plans.planned("extra_architectures", s, root,
                              chapter_plans.runner(root, device), datasets=datasets, models=models,
                              cases=methods, lambdas=lambdas)
for experiment in datasets:
    frame = medical.run_frame(chapter_plans.part(cells, f"extra_{experiment}"), root, device)
    frames[experiment] = frame
    label = report.provenance_label(frame, profile)
    summary = medical.summarise(frame)
    summaries[experiment] = (summary, label)
    on = medical.data_name(s, experiment)
    meta = {"label": label, "settings": s.as_dict(), "data": on,
            "origin": medical.origin(s).value}
    report.write_table(summary, root, f"extra_{experiment}", meta)
    # per run: the report judges this chapter's claims on the seeds where their preconditions hold
    report.write_table(medical.runs_table(frame), root, f"extra_{experiment}_runs", meta)
    metric = medical.task_metric(experiment).name
    chapter.medical_figure(ch, summary, experiment, models, methods,
                           f"{medical.DATASETS[experiment]}, extra architectures — {on}",
                           f"extra_{experiment}", runs=frame)
    display(Markdown(f"*{metric.upper()}, mean (std) over seeds — {on}; {label}. "
                     "The paper has no table for these architectures.*"))
    display(medical.summary_table(summary))
    display(Markdown(f"*Training loss, first and last epoch — {on}; {label}*"))
    display(table_display.styled(medical.loss_table(frame)))
if medical.is_standin(s):
    display(Markdown(medical.standin_caveat(s, models)))

# %% [markdown]
# ## Paper-profile results (committed, from a GPU)

# %% tags=["hide-input"]
chapter.show_committed(ch, [f"extra_{experiment}" for experiment in datasets],
                       "run `make book PROFILE=paper` on a GPU with the data folders and commit "
                       "`results/paper/`.",
                       chapter.by_split);

# %% tags=["hide-input"]
ch.opening(openings.extra_found({e: sm for e, (sm, _) in summaries.items()}, frames, root))
ch.finish();

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
# # Knowledge distillation on PNEU and KNEE
#
# The paper's appendix sets TAP with teacher annotations (τ = 0.01) beside three
# knowledge-distillation methods that learn from the same ResNet-18 teachers: **KD** matches the
# teacher's tempered softmax, **AT** its attention maps at the target layers, **JT** its input
# gradients. TAP's teacher only points at what to ignore; these make the student imitate it. No
# XS (Setting 1's run) is there for reference.
#
# **AT between different architectures.** AT compares attention maps layer by layer, so a
# student and a teacher with different numbers of target layers need a pairing. tapkit pairs
# them by resolution (`tapkit.baselines.pair_by_resolution`): every layer of the network with
# fewer targets takes the unpaired layer of the other network whose spatial size is nearest,
# and the rest go unpaired; a student map of another size is resized to its partner's. The
# pairs for the paper's three students and their ResNet-18 teacher are listed below.
#
# ```bash
# papermill notebooks/medical_distillation.ipynb out.ipynb -p profile paper -p source /data/medical
# ```

# %% tags=["parameters"]
profile = "quick"      # "quick" (CPU, digits stand-in), "paper" (GPU, the real PNEU/KNEE)
datasets = None        # e.g. ["pneu", "knee"]; None: from the profile (quick: PNEU, where the claims are judged)
seeds = None           # e.g. [0, 1, 2]; None: from the profile
kd_models = None       # student architectures; None: from the profile
kd_fractions = None    # teachers they learn from; None: from the profile
kd_methods = None      # e.g. ["kd", "at", "jt"]; None: from the profile (quick: KD and AT)
kd_temperature = None  # KD students' KdOptions.temperature; None: its default (4)
lambdas = None         # e.g. {"at": 1.0}; None: from the profile
source = None          # None: from the profile ("embedded": the digits stand-in); or the data folder
device = "auto"
results = None         # None: <repository>/results

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from tapkit.book import chapter, medical, openings, report
from tapkit.book import medical_setting2 as s2
from tapkit.experiments import setting2_plans as s2p
from tapkit.experiments import chapter_plans, protocols
from tapkit.experiments.executors import run_many

ch = chapter.open_chapter(globals(), "medical_distillation", "medical", datasets, notes=False)
t = protocols.medical_teachers(profile, kd_models=kd_models, kd_fractions=kd_fractions,
                               kd_methods=kd_methods)
s, root, device = t.on_seeds(ch.settings, seeds), ch.root, ch.device
runs_root = root / "runs"
on = {e: medical.data_name(s, e) for e in datasets}
lams = {(e, m): s2p.student_lambdas(s, t, root, e, m, lambdas) for e in datasets for m in t.kd_models}
extra = {} if kd_temperature is None else {"kd_temperature": kd_temperature}
ch.show_settings({"settings": s.as_dict(), "Setting 2": t.as_dict(),
                  "λ": {f"{e} {m}": v for (e, m), v in lams.items()}, **extra})
if medical.is_standin(s):
    display(Markdown(medical.pretraining_note(s, medical.pretraining_frame(
        s, datasets[0], list(dict.fromkeys([t.teacher_model, *t.kd_models])), root, device))))

# %% [markdown]
# ## AT's layer pairs
#
# Target layers, their size on this profile's images, and the ResNet-18 teacher layer each is
# compared with (– : unpaired).

# %% tags=["hide-input"]
display(s2.at_pair_table(s, t, datasets[0]))

# %% [markdown]
# ## TAP beside KD, AT and JT
#
# TAP's rows are the Setting-2 chapter's students with the teachers' masks at τ = 0.01 (read from
# the cache, or trained here).

# %% tags=["hide-input"]
students_ = chapter_plans.medical_distillation(s, root, t=t, datasets=datasets, lambdas=lambdas,
                                               kd_temperature=kd_temperature)
runs = run_many(chapter_plans.configs(students_), runs_root, device).assign(
    **chapter_plans.columns(students_, "experiment", "model", "method", "lam"))  # TAP, KD, AT, JT, none
runs["teacher"] = [report.teacher_name(st.annotation) for st in students_]
label = report.provenance_label(runs, profile)
summary = report.summarise(runs, ["experiment", "model", "teacher", "method"])
report.write_table(summary, root, "medical_kd",
                   {"label": label, "settings": s.as_dict(), "teachers": t.as_dict(), "data": on,
                    "origin": medical.origin(s).value,
                    "lambdas": {f"{e} {m}": v for (e, m), v in lams.items()}, **extra});

# %% tags=["hide-input"]
for e in datasets:
    fig = s2.plot_kd(summary, e, f"{e.upper()}, TAP vs knowledge distillation — {on[e]}", runs,
                     medical.constant_score(e) if medical.is_standin(s) else None)
    report.save_figure(fig, root, f"medical_kd_{e}")
    plt.show()
    display(Markdown(s2.kd_findings(summary, e, runs)))
    display(Markdown(f"*{e.upper()}, mean (std) over seeds — {on[e]}; {label}*"))
    display(s2.kd_table(summary, e))

# %% [markdown]
# The paper {cite:p}`zhang2024tap` finds that JT {cite:p}`srinivas2018jt` and KD
# {cite:p}`hinton2015kd` do not carry the teacher's insensitivity to the tag over to a deep
# student, while AT {cite:p}`zagoruyko2017at` sometimes does, on par with TAP for ResNet-18
# {cite:p}`he2016resnet` and VGG-16 {cite:p}`simonyan2015vgg` on PNEU, but less reliably across
# architectures; TAP is the most successful at avoiding the tag on KNEE.

# %% tags=["hide-input"]
display(Markdown(s2.kd_left_out(profile, s, t, datasets)))

# %% [markdown]
# ## Paper-profile results (committed, from a GPU)

# %% tags=["hide-input"]
chapter.show_committed(ch, ["medical_kd"], "run `make book PROFILE=paper` on a GPU with the "
                       "PNEU and KNEE folders as `source` and commit `results/paper/`.");
ch.opening(openings.medical_kd_found(summary, runs, root))
ch.finish(seeds=s.seeds);

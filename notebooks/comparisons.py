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
# # Appendix: ours beside the paper
#
# The paper's tables beside this build's numbers, with the difference (ours − paper), for the
# data sets that are the paper's own. Tables measured on the digits stand-in for PNEU and KNEE
# are left out: a difference between a stand-in and the real data means nothing, and the
# reproduction report judges those chapters' claims instead. Even on MNIST the quick profile
# trains on 5,000 digits for a few epochs, so levels differ; the report's verdicts rest on the
# pattern over seeds, not on these differences.

# %% tags=["parameters"]
profile = "quick"
results = None       # None: <repository>/results

# %% tags=["hide-input"]
from IPython.display import Markdown, display

from tapkit.book import chapter, openings, report

ch = chapter.open_chapter(globals(), "comparisons", None, show=True)
kept, skipped = report.paper_data_comparisons(ch.root)
display(Markdown(f"{len(kept)} table(s) on the paper's data for profile `{profile}`"
                 + (f"; left out, measured on a stand-in: {', '.join(skipped)}." if skipped else ".")))
for name, grp in kept.items():
    display(Markdown(f"### Table `{name}`\nEach cell: ours / paper (ours − paper). *Ours: "
                     f"{grp['produced_by'].iloc[0]}; paper: AAAI-24, five seeds, RTX 3080.*"))
    display(report.ours_and_paper(grp))

# %% [markdown]
# ## Paper-profile results (committed, from a GPU)

# %% tags=["hide-input"]
chapter.show_committed(ch, ["compare_*"], "run `make book PROFILE=paper` on a GPU and commit "
                       "`results/paper/`.");

# %% tags=["hide-input"]
ch.opening(openings.comparisons_found(kept, skipped))
ch.finish(data="the tables the other chapters wrote");

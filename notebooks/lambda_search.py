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
# # Choosing λ
#
# The paper tunes λ (Eq. 3) by training on SC(X*, y)_train and evaluating the loss on the
# *permuted* validation split SC(X*, permute(y))_val — a model that leans on the decoy pays for
# it there — increasing λ in log steps from 10⁻⁹ to 1 for TAP and RRR and from 1 to 10⁹ for RBR.
# This chapter runs that search and writes its choice to `results/<profile>/tables/lambda_choice.csv`,
# which the other MNIST chapters read (`tapkit.experiments.plans.mnist_lambdas`); methods it does not
# search keep the paper's λ (appendix, hyperparameter table), in the released forms those λ were
# tuned on (RRR scaled by H·W/|M|, the released RBR), while a searched method keeps the equation
# as written (TAP's Definition 2) at the λ this search chooses for it.
#
# The quick profile searches TAP only, on a short grid around the paper's 10⁻³, with the same
# epochs as the MNIST chapter so that the chosen run is reused there. The paper profile searches
# the paper's full grids for TAP, RRR and RBR, with the released code's loss normalisations it
# trains with (`tapkit/experiments/profiles/paper.py`); its PNEU, KNEE and extra-architecture chapters
# run the same search for every architecture and method they train. A run whose loss stopped
# being a finite number is marked DNC and cannot be chosen.

# %% tags=["parameters"]
profile = "quick"
seeds = None          # the search uses the first seed
epochs = None
grids = None          # e.g. {"<method>": [1e-4, 1e-3]}; None: the profile's
source = None
device = "auto"
results = None        # None: <repository>/results

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from tapkit.book import chapter, lambda_figures, openings, profile_notes, report
from tapkit.experiments import chapter_plans, plans, protocols
from tapkit.experiments.executors import run_many

ch = chapter.open_chapter(globals(), "lambda_search", "mnist", show=True)
s, root = ch.settings, ch.root
grids = grids or {m: list(lams) for m, lams in s.search.items()}  # the protocol's grids
display(Markdown(profile_notes.page_changes(s.with_overrides(search=grids),
                                            protocols.mnist("paper"), profile,
                                            profile_notes.XS_METHODS)))
cells = chapter_plans.lambda_search(s, root, grids=grids)
runs = run_many(chapter_plans.configs(cells), root / "runs", device)
label = report.provenance_label(runs, profile)
search = lambda_figures.search_table(runs)
display(Markdown(lambda_figures.search_caption(search, label)))
display(lambda_figures.search_shown(search))

# %% tags=["hide-input"]
choice = plans.choose_lambdas(search, guard=s.lambda_guard)
report.write_table(choice, root, "lambda_choice", {"label": label, "grids": grids})
report.write_table(search, root, "lambda_search", {"label": label})
paper = lambda_figures.paper_mnist_lambdas()
display(Markdown(f"**Chosen λ beside the paper's**: the `{profile}` profile chooses by "
                 f"{profile_notes.lambda_criterion(s.lambda_guard)}."))
display(lambda_figures.choice_shown(choice, paper))

# %% tags=["hide-input"]
fig = lambda_figures.search_figure(search)
report.save_figure(fig, root, "lambda_search")
plt.show()

# %% tags=["hide-input"]
ch.opening(openings.lambda_found(search, choice, paper))
ch.finish(seeds=s.seeds[:1]);  # its runs use the first seed

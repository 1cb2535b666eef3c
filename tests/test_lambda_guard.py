"""The λ search's guard (issue 20): a constant prediction's score, how far a run's clean
validation score goes beyond it, and the paper's criterion applied among the runs that learned
the task, beside the criterion alone."""

from __future__ import annotations

import re

import pandas as pd
import pytest
import torch

from tapkit.experiments import plans
from tapkit.metrics import constant_score


def test_constant_scores_by_hand():
    balanced = torch.tensor([0, 0, 1, 1])
    assert constant_score(balanced, "f1") == pytest.approx(2 / 3)      # always 1: 2*2/(2*2+2)
    assert constant_score(torch.tensor([0, 1, 1, 1]), "accuracy") == pytest.approx(0.75)
    grades = torch.arange(5).repeat(3)
    assert constant_score(grades, "mae") == pytest.approx(1.2)          # always grade 2
    assert constant_score(torch.tensor([0, 0, 0, 4]), "mae") == pytest.approx(1.0)  # always 0


def _search(val_loss, val_clean, metric="f1", constant=2 / 3):
    n = len(val_loss)
    return pd.DataFrame({"model": ["resnet18"] * n, "method": ["tap"] * n,
                         "lam": [10.0 ** -k for k in range(n)][::-1], "val_loss": val_loss,
                         "val_clean": val_clean, "val_constant": [constant] * n,
                         "metric": [metric] * n, "status": ["ok"] * n})


def test_learned_share_runs_from_a_constant_prediction_to_perfect():
    f1 = _search([1.0, 1.0, 1.0], [2 / 3, 0.75, 1.0])
    assert plans.learned_share(f1).tolist() == pytest.approx([0.0, 0.25, 1.0])
    mae = _search([1.0, 1.0], [1.2, 0.3], metric="mae", constant=1.2)
    assert plans.learned_share(mae).tolist() == pytest.approx([0.0, 0.75])
    assert plans.learned_share(f1.drop(columns="val_clean")).isna().all()


def test_the_guard_skips_the_run_that_learned_nothing_and_shows_the_unguarded_choice():
    # as measured on the stand-in: the largest λ has the lowest val_loss (ln 2) and learned nothing
    search = _search([1.12, 0.85, 0.682], [0.80, 0.78, 0.66])
    choice = plans.choose_lambdas(search, ["model", "method"]).iloc[0]
    assert (choice.lam, choice.lam_unguarded) == (0.1, 1.0)
    assert choice.val_loss == pytest.approx(0.85) and bool(choice.learned)


def test_when_no_run_learned_the_guarded_choice_is_the_unguarded_one_and_says_so():
    search = _search([1.12, 0.85], [0.60, 0.66])
    choice = plans.choose_lambdas(search, ["model", "method"]).iloc[0]
    assert choice.lam == choice.lam_unguarded == 1.0 and not bool(choice.learned)


def test_a_diverged_run_is_never_chosen():
    search = _search([0.2, 0.9], [0.99, 0.99]).assign(status=["dnc", "ok"])
    assert plans.choose_lambdas(search, ["model", "method"]).lam.tolist() == [1.0]


def test_the_medical_page_marks_both_choices_and_says_what_the_guard_changed():
    from tapkit.book import medical

    search = _search([1.12, 0.85, 0.682], [0.80, 0.78, 0.66]).assign(
        task_loss_last=[0.21, 0.55, 0.69], contaminated=[0.92, 0.58, 0.68],
        permuted=[0.57, 0.52, 0.68], clean=[0.78, 0.58, 0.69])
    choice = plans.choose_lambdas(search, ["model", "method"])
    table = medical.search_table(search, choice)
    assert table.chosen.tolist() == ["", "✓", ""] and table.unguarded.tolist() == ["", "", "✓"]
    assert table.learned_share.tolist() == pytest.approx([0.4, 0.34, -0.02], abs=1e-3)
    text = medical.search_findings(search, choice, "pneu")
    assert "λ = 0.1 " in text and "without the guard the paper's criterion would choose λ = 1 " in text
    # the page shows it as two tables: what chose λ, then the test scores (no part in it)
    chose = medical.search_choice_shown(table).data
    assert list(chose.columns) == ["architecture", "method", "λ", "validation loss",
                                   "clean validation score",
                                   "share learned (0 a constant, 1 perfect)", "chosen"]
    # one column of marks: the choice, and the paper's criterion alone where the guard differs
    assert chose["chosen"].tolist() == ["", "✓", "(unguarded)"] and chose["method"].iloc[0] == "TAP"
    scores = medical.search_scores_shown(table)
    assert list(scores.data.columns)[3:] == ["task loss, last epoch", "contaminated", "permuted",
                                             "clean"]
    cells = re.findall(r">([^<>]+)</td>", scores.to_html())
    assert cells[:7] == ["ResNet-18", "TAP", "1e-2", "0.210", "0.920", "0.570", "0.780"]


def test_the_paper_profile_picks_the_lowest_loss_even_where_the_run_failed_the_guard():
    """The paper chooses λ by the lowest validation loss alone (Experimental Design); the quick
    profile's guard skips the run that learned nothing. Both keep the unguarded choice beside."""
    from tapkit.experiments import protocols

    # λ = 1 has the lowest val_loss and learned nothing (clean F1 0.66 < the constant's 2/3)
    search = _search([1.12, 0.85, 0.682], [0.80, 0.78, 0.66])
    for profile, lam, guard in (("paper", 1.0, False), ("quick", 0.1, True), ("smoke", 0.1, True)):
        for p in (protocols.mnist(profile), protocols.medical(profile)):
            assert p.lambda_guard is guard, profile
            choice = plans.choose_lambdas(search, ["model", "method"], guard=p.lambda_guard).iloc[0]
            assert choice.lam == lam and choice.lam_unguarded == 1.0, profile
            assert bool(choice.guard) is guard and bool(choice.learned)
    paper = plans.choose_lambdas(search, ["model", "method"], guard=False).iloc[0]
    assert paper.val_loss == pytest.approx(0.682) == paper.val_loss_unguarded


def test_the_pages_say_which_criterion_chose():
    from tapkit.book import medical, openings

    search = _search([1.12, 0.85, 0.682], [0.80, 0.78, 0.66]).assign(
        task_loss_last=[0.21, 0.55, 0.69], contaminated=[0.92, 0.58, 0.68],
        permuted=[0.57, 0.52, 0.68], clean=[0.78, 0.58, 0.69])
    paper_table = pd.DataFrame({"method": ["tap"], "mean": [1e-3]})
    guarded = plans.choose_lambdas(search, ["model", "method"], guard=True)
    unguarded = plans.choose_lambdas(search, ["model", "method"], guard=False)
    text = openings.lambda_found(search, guarded, paper_table)
    assert "among the values of 3 that learned the task" in text and "picks λ = 1" in text
    text = openings.lambda_found(search, unguarded, paper_table)
    assert "TAP λ = 1 (lowest loss 0.682 among 3 values; the paper's 1e-3)" in text
    # the medical page speaks of a guard only where the profile has one
    assert "without the guard" in medical.search_findings(search, guarded, "pneu")
    assert "guard" not in medical.search_findings(search, unguarded, "pneu")

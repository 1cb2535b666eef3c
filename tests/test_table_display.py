"""Every table a chapter shows reads as labels, with no NaN and no cut text (issue 39)."""

from __future__ import annotations

import re

import pandas as pd

from tapkit.book import table_display


def test_a_shown_table_has_labels_dashes_and_whole_texts():
    note = "one VGG-16 seed costs ~1,100 CPU-s with its pretrained start and judges no claim"
    frame = pd.DataFrame({"speed_ratio": [0.96, float("nan")], "why": [note, ""]},
                         index=pd.MultiIndex.from_tuples([("teacher_10", "tap"), ("none", "none")],
                                                         names=["teacher", "method"]))
    shown = table_display.readable(frame)
    assert list(shown.columns) == ["speed ÷ No XS", "why"]
    assert list(shown.index) == [("10% teacher", "TAP"), ("No XS", "No XS")]
    assert frame.index[0] == ("teacher_10", "tap")  # the caller's frame keeps its keys
    html = table_display.readable_html(frame)
    assert "NaN" not in html and table_display.MISSING in html and note in html
    assert "teacher_10" not in html and "speed_ratio" not in html
    assert f"min-width: {table_display.TEXT_WIDTH}" in html  # the long note's column, not a sliver
    # numbers and unknown keys are shown as they are
    plain = table_display.readable(pd.DataFrame({"x": [1]}, index=pd.Index([0.01], name="tau")))
    assert list(plain.index) == [0.01] and plain.index.name == "tau"


def test_an_interval_prints_its_bounds_or_says_it_has_none():
    from tapkit.book.labels import interval_text

    assert interval_text(0.949, 1.0412) == "[0.95, 1.04]"
    assert interval_text(0.949, 1.0412, 3) == "[0.949, 1.041]"
    assert interval_text(float("nan"), 1.0) == "—"  # one seed or one pass
    assert interval_text(None, None, missing="(one pass)") == "(one pass)"


def test_a_formatted_table_labels_its_keys_and_prints_lambda_sign_and_shares():
    frame = pd.DataFrame({"method": ["tap", "rrr"], "lam": [1e-4, 2.5e-3],
                          "Δ-accuracy": [-0.155, 0.0], "val_loss": [0.61234, float("nan")],
                          "share": [0.25, 0.5]})
    html = table_display.styled(frame, percent=["share"], na_rep="DNC").to_html()
    cells = [c.strip() for c in re.findall(r"<td[^>]*>([^<]*)</td>", html)]
    assert cells == ["TAP", "1e-4", "-0.155", "0.612", "25%",
                     "RRR", "2.5e-3", "+0.000", "DNC", "50%"]
    assert "validation loss" in html and ">λ<" in html and "val_loss" not in html
    assert ">0<" not in html  # a plain range index is not shown as a column of row numbers
    assert "white-space: nowrap" in html and "overflow-x: auto" in html  # 1e-4 on one line
    assert frame.loc[0, "method"] == "tap"  # the caller's frame keeps its keys
    four = table_display.styled(pd.DataFrame({"x": [0.123456]}), digits=4).to_html()
    assert "0.1235" in four
    # a long text (a run's starting weights) keeps a readable column, a short one does not ask
    weights = "run 800fa336305ab7eb (digits pretraining, ResNet-18, 4 epochs) fine-tuned"
    long = table_display.styled(pd.DataFrame({"weights": [weights], "status": ["ok"]}))
    css = long.to_html()
    assert css.count(f"min-width: {table_display.TEXT_WIDTH}") == 1 and weights in css
    assert "min-width" not in table_display.styled(pd.DataFrame({"status": ["ok"]})).to_html()


def test_a_lambda_search_table_reads_as_labels_with_every_lambda_column_in_scientific_notation():
    """The λ search's and choice's columns (issue 39: the pages showed ``val_clean``,
    ``lam_unguarded``, ``True`` and λ 1e-4 as ``0.0001``)."""
    choice = pd.DataFrame({"method": ["tap"], "lam": [1e-2], "val_loss": [0.619],
                           "learned": [True], "lam_unguarded": [1e-4],
                           "val_loss_unguarded": [0.5], "guard": [False], "paper λ": [1e-3]})
    html = table_display.styled(choice).to_html()
    cells = [c.strip() for c in re.findall(r"<td[^>]*>([^<]*)</td>", html)]
    assert cells == ["TAP", "1e-2", "0.619", "yes", "1e-4", "0.500", "no", "1e-3"]
    for key in ("val_loss_unguarded", "lam_unguarded", "guard", "True", "False"):
        assert f">{key}<" not in html
    assert ">λ unguarded<" in html and ">its validation loss<" in html


def test_the_choice_beside_the_papers_leaves_the_profiles_guard_to_the_text():
    from tapkit.book import lambda_figures

    paper = pd.DataFrame({"method": ["tap", "rrr"], "mean": [1e-3, 10.0]})
    choice = pd.DataFrame({"method": ["tap", "rrr"], "lam": [1e-2, 1.0], "learned": [True, False],
                           "guard": [True, True]})
    shown = lambda_figures.choice_shown(choice, paper)
    assert list(shown.data.columns) == ["method", "λ", "learned", "paper λ"]
    cells = [c.strip() for c in re.findall(r"<td[^>]*>([^<]*)</td>", shown.to_html())]
    assert cells == ["TAP", "1e-2", "yes", "1e-3", "RRR", "1", "no", "1e1"]
    # a table whose methods were chosen differently keeps the column
    mixed = lambda_figures.choice_shown(choice.assign(guard=[True, False]), paper)
    assert "guarded" in list(mixed.data.columns)


def test_the_lambda_search_page_states_the_constant_score_once_and_shows_the_rest():
    from tapkit.book import lambda_figures

    runs = pd.DataFrame({"method": ["tap", "tap"], "lam": [1e-4, 1e-2], "status": ["ok", "ok"],
                         "val_loss": [1.004, 0.619], "contaminated": [0.968, 0.967],
                         "permuted": [0.815, 0.949], "metric": ["accuracy", "accuracy"],
                         "val_clean": [0.591, 0.867], "val_constant": [0.1003, 0.1003]})
    search = lambda_figures.search_table(runs)
    html = lambda_figures.search_shown(search).to_html()
    cells = [c.strip() for c in re.findall(r"<td[^>]*>([^<]*)</td>", html)]
    assert cells[:7] == ["TAP", "1e-4", "ok", "1.004", "0.968", "0.815", "0.591"]
    assert "accuracy" not in cells and "0.100" not in cells
    caption = lambda_figures.search_caption(search, "profile quick")
    assert caption == "*profile quick; a constant prediction's clean validation accuracy: 0.100*"
    assert lambda_figures.search_caption(search.drop(columns="val_constant"), "p") == "*p*"

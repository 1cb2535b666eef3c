"""Every table a chapter shows reads as labels, with no NaN and no cut text (issue 39)."""

from __future__ import annotations

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

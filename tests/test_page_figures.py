"""The pages' figures drawn by library functions (the notebooks call one each): what they put
where, checked on generated splits and hand-made masks."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from tapkit import losses  # noqa: E402
from tapkit.book import data_figures, method_figures, mnist_setting2  # noqa: E402
from tapkit.data import Split  # noqa: E402


def _split(n: int = 12, side: int = 28) -> Split:
    """Labels 0..9 cycling; image i bright at its own pixel (i, i); the mask marks a corner."""
    x = torch.zeros(n, 1, side, side)
    for i in range(n):
        x[i, 0, i, i] = 1.0
    mask = torch.zeros(n, 1, side, side)
    mask[:, :, :4, :4] = 1.0
    return Split(x, torch.arange(n) % 10, mask)


def test_decoy_examples_titles_each_column_with_its_label_and_draws_the_mask_below():
    splits = {name: _split() for _, name in data_figures.SPLIT_ROWS}
    splits["test_permuted"] = Split(splits["test_permuted"].x, (torch.arange(12) + 3) % 10,
                                    splits["test_permuted"].mask)
    fig = data_figures.decoy_examples(splits, 3, "t", step=4)  # images 0, 4, 8
    axes = np.array(fig.axes).reshape(4, 3)
    assert axes[0, 0].get_title() == "SC(X*, y)\ny=0" and axes[0, 2].get_title() == "y=8"
    assert axes[1, 1].get_title() == "y=7"  # the permuted split's own label of image 4
    assert np.array_equal(axes[3, 1].get_images()[0].get_array(),
                          splits["test_contaminated"].mask[4, 0].numpy())
    plt.close(fig)


def test_downscale_figure_draws_definition_2_at_each_layer():
    """A one-pixel mask at (0, 0) of a 28-px input, max-pooled with κ = 3 to the two-layer
    CNN's 14- and 7-px maps: the panels are losses.downscale_mask's, titled with the sizes."""
    mask = torch.zeros(1, 1, 28, 28)
    mask[0, 0, 0, 0] = 1.0
    rows = [("two_layer_cnn", mask, {"conv1": (14, 14), "conv2": (7, 7)})]
    fig = method_figures.downscale_figure(rows * 2, kernel_size=3)
    axes = np.array(fig.axes).reshape(2, 5)
    shown = axes[0, 1].get_images()[0].get_array()
    assert np.array_equal(shown, losses.downscale_mask(mask, (14, 14), 3)[0, 0].numpy())
    assert shown[0, 0] == 1.0 and shown.sum() >= 1
    assert axes[0, 2].get_title() == "D(M, conv2)\n(7, 7)" and not axes[0, 3].axison
    plt.close(fig)


def test_downscale_rows_use_each_models_targeted_sizes():
    rows = method_figures.downscale_rows(_split(1).mask, 64)
    assert [name for name, _, _ in rows] == ["two_layer_cnn", "resnet18", "resnet18",
                                             "densenet121"]
    assert rows[0][1].shape == (1, 1, 28, 28) and rows[1][1].shape[-1] == 224
    assert rows[2][1].shape[-1] == 64 and rows[2][1].sum() > 0  # the stand-in's tag is marked


def test_masks_figure_picks_one_image_per_part_of_the_sorted_split():
    data = _split(12)
    e = torch.rand(12, 1, 28, 28)
    fig = mnist_setting2.masks_figure(e, data, "teacher_10", [0.01, 0.1])
    axes = np.array(fig.axes).reshape(3, 7)
    assert axes[0, 2].get_title() == "E (10% teacher)"  # a person's name, not teacher_10
    picked = [2, 6, 10]  # 12 images: the middles of three thirds
    for row, i in enumerate(picked):
        assert np.array_equal(axes[row, 0].get_images()[0].get_array(), data.x[i, 0].numpy())
    plt.close(fig)


def test_quality_figure_labels_teachers_for_people_and_keeps_random_in_both_panels():
    rows = [{"annotator": a, "rule": r, "tau": tau, "precision": 0.1, "recall": 0.2}
            for a, rules in (("teacher_10", ("absolute", "quantile")), ("random (GT coverage)",
                                                                     ("random",)))
            for r in rules for tau in (0.01, 0.1)]
    fig = mnist_setting2.quality_figure(pd.DataFrame(rows))
    texts = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert "10% teacher precision" in texts and "random (GT coverage) recall" in texts
    assert len(fig.axes[0].get_lines()) == len(fig.axes[1].get_lines()) == 4
    plt.close(fig)


def test_medical_contaminations_outlines_every_label_once():
    fig = data_figures.medical_contaminations(0)
    titled = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titled.count("PNEU tags, label 1") == 1 and "KNEE stripes, label 4" in titled
    assert len(titled) == 2 + 5 + 2 + 5
    plt.close(fig)


def _ratios() -> pd.DataFrame:
    """Two architectures' TAP and No-XS-again ratios to No XS, with their intervals."""
    rows = []
    for model, (s, lo, hi), (m, mlo, mhi) in (("resnet18", (0.97, 0.96, 0.98), (1.0, 1.0, 1.0)),
                                              ("vgg16", (0.90, 0.80, 1.00), (1.2, 1.1, 1.3))):
        rows.append({"model": model, "method": "tap", "speed_ratio": s, "speed_ratio_lo": lo,
                     "speed_ratio_hi": hi, "mem_ratio": m, "mem_ratio_lo": mlo,
                     "mem_ratio_hi": mhi, "status": "ok", "peak_mem_mb": 10.0, "it_per_s": 2.0})
        rows.append({"model": model, "method": "none_again", "speed_ratio": 1.01,
                     "speed_ratio_lo": 0.99, "speed_ratio_hi": 1.03, "mem_ratio": 1.0,
                     "mem_ratio_lo": 1.0, "mem_ratio_hi": 1.0, "status": "ok",
                     "peak_mem_mb": 10.0, "it_per_s": 2.0})
    return pd.DataFrame(rows)


def test_tap_checks_judge_each_interval_against_the_threshold():
    from tapkit.book import claims, speed_memory

    checks = speed_memory.tap_checks(_ratios(), {"resnet18": "ResNet-18", "vgg16": "VGG-16"}, 0.95)
    assert list(checks.index) == ["ResNet-18", "VGG-16"]
    assert list(checks["speed ≥ 0.95"]) == [claims.REPRODUCED, claims.INCONCLUSIVE]
    # memory 1.1-1.3 lies wholly above 1/0.95 = 1.053: not reproduced
    assert list(checks["memory ≤ 1/0.95"]) == [claims.REPRODUCED, claims.NOT_REPRODUCED]
    assert checks.loc["VGG-16", "95% interval"] == "[0.800, 1.000]"
    assert checks.loc["ResNet-18", "noise: No XS again ÷ No XS (it/s)"] == "1.010 [0.990, 1.030]"


def test_oom_text_says_whether_the_papers_oom_cell_fits_here():
    from tapkit.book import speed_memory

    assert speed_memory.oom_text(_ratios(), 16, 224, "cpu") is None  # not measured here
    ran = pd.DataFrame([{"model": "densenet121", "method": "rbr", "status": "ok",
                         "peak_mem_mb": 7215.0, "it_per_s": 2.37}])
    text = speed_memory.oom_text(ran, 16, 224, "an H100")
    assert "**fits (peak 7215 MB, 2.37 it/s)**" in text and "batch 16 of 224 px" in text
    assert "ran out of memory" in speed_memory.oom_text(ran.assign(status="oom"), 16, 224, "x")


def test_against_none_compares_the_first_two_layers_and_counts_the_lower_pairs():
    from tapkit.book import overlap_tables

    rows = [{"dataset": "PNEU", "model": m, "case": c, "layer": layer, "ours": v}
            for m, values in (("resnet18", {"none": (0.6, 0.8, 0.6), "tap": (0.5, 0.2, 0.4)}),
                              ("densenet121", {"none": (0.3, 0.2, 0.2), "tap": (0.3, 0.5, 0.5)}))
            for c, (ig, a1, a2) in values.items()
            for layer, v in (("ig", ig), ("act1", a1), ("act2", a2))]
    compare = overlap_tables.against_none(pd.DataFrame(rows), "tap")
    assert compare.loc[("PNEU", "resnet18"), "TAP: Act 1-2"] == pytest.approx(0.3)
    assert compare.loc[("PNEU", "resnet18"), "No XS: IG"] == pytest.approx(0.6)
    text = overlap_tables.against_none_text(compare, "tap")
    # TAP's Act 1-2 means 0.3 and 0.5 (0.40), No XS's 0.7 and 0.2 (0.45); chance 0.25
    assert "**1 of 2**" in text and "0.40 against 0.45" in text and "scores 0.25" in text
    assert "no trained architecture" in overlap_tables.against_none_text(compare.iloc[:0], "tap")
    only = overlap_tables.against_none(pd.DataFrame(rows), "tap", skip=["densenet121"])
    assert len(only) == 1

"""Results that say what they mean: each task's metric and its direction, the one sign of the
reliance on the tag, the thresholds of the verdicts, τ compared as a number, and the typed origin
of a table's data; on hand-computed values."""

import math

import pandas as pd
import pytest

from tapkit import metrics
from tapkit.book import openings_medical, summary_reliance, teacher_claims, thresholds
from tapkit.book.medical_setting2 import _loss
from tapkit.book.origin import DataOrigin
from tapkit.seedstats import Estimate


def test_each_experiment_has_one_metric_with_its_direction():
    assert metrics.task_metric("mnist") == metrics.TaskMetric("accuracy", "accuracy", True)
    assert metrics.task_metric("pneu") == metrics.TaskMetric("f1", "F-score", True)
    assert metrics.task_metric("knee") == metrics.TaskMetric("mae", "MAE", False, 4.0)
    # the scorer the training records a run with is the metric's
    for name, m in metrics.EXPERIMENT_METRICS.items():
        assert m.name in metrics.METRICS, name
    with pytest.raises(ValueError, match="no metric for experiment 'cifar'"):
        metrics.task_metric("cifar")


def test_tag_reliance_is_positive_when_the_metric_worsens_whatever_its_direction():
    f1, mae = metrics.task_metric("pneu"), metrics.task_metric("knee")
    # F-score 0.90 -> 0.60 when the tag is swapped: 0.30 lost, the model relies on the tag
    assert metrics.tag_reliance(0.90, 0.60, f1) == pytest.approx(0.30)
    assert metrics.tag_reliance(0.60, 0.90, f1) == pytest.approx(-0.30)
    # MAE 0.50 -> 1.25: 0.75 added, the model relies on the tag
    assert metrics.tag_reliance(0.50, 1.25, mae) == pytest.approx(0.75)
    assert metrics.tag_reliance(1.25, 0.50, mae) == pytest.approx(-0.75)
    # the paper's Δ-metric (permuted − contaminated) is the same number, signed by direction
    assert metrics.delta(0.90, 0.60) == pytest.approx(-0.30)
    assert metrics.delta(0.50, 1.25) == pytest.approx(0.75)
    # elementwise on columns, as the chapters' tables hold them
    r = metrics.tag_reliance(pd.Series([1.0, 2.0]), pd.Series([1.5, 1.0]), mae)
    assert r.tolist() == pytest.approx([0.5, -1.0])


def test_every_chapter_reads_the_same_reliance():
    # one summary, KNEE: No XS 1.0 -> 1.5 (MAE rises: relies), TAP 1.0 -> 0.9
    wide = pd.DataFrame({"contaminated": [1.0, 1.0], "permuted": [1.5, 0.9]},
                        index=pd.MultiIndex.from_tuples([("m", "none"), ("m", "tap")]))
    long = wide.stack().rename("mean").rename_axis(["model", "case", "split"]).reset_index()
    opening = openings_medical.losses(long, "knee", ["model", "case"])
    setting2 = _loss(wide, "knee")
    claim = {case: e.mean for _, case, e in summary_reliance.reliances(
        long.assign(std=0.0, count=3), "knee")}
    assert opening.tolist() == pytest.approx([0.5, -0.1])
    assert setting2.tolist() == pytest.approx([0.5, -0.1])
    assert [claim["none"], claim["tap"]] == pytest.approx([0.5, -0.1])


def _estimate(mean: float, half: float) -> Estimate:
    return Estimate(mean, mean - half, mean + half, 3)


def test_the_verdict_helpers_use_the_named_margin():
    m = thresholds.MARGIN
    # keeps off the tag: the reliance interval reaches below the margin
    assert thresholds.keeps_off(_estimate(m + 0.01, 0.015))        # lo: m - 0.005
    assert not thresholds.keeps_off(_estimate(m + 0.03, 0.02))     # lo: m + 0.01
    # relies on it: the whole interval lies above the margin
    assert thresholds.relies(_estimate(m + 0.03, 0.02))
    assert not thresholds.relies(_estimate(m + 0.01, 0.015))
    # one seed has no interval: neither keeps off nor relies
    one = Estimate(0.5, math.nan, math.nan, 1)
    assert not thresholds.keeps_off(one) and not thresholds.relies(one)
    # clearly less: by more than the gap (the margin unless another is named)
    assert thresholds.clearly_less(0.10, 0.10 + 1.5 * m)
    assert not thresholds.clearly_less(0.10, 0.10 + 0.75 * m)
    g = thresholds.MNIST_GAP
    assert thresholds.clearly_less(0.10, 0.10 + 1.5 * g, g)
    assert not thresholds.clearly_less(0.10, 0.10 + 0.5 * g, g)
    # how much a model used the tag, from its reliance
    assert thresholds.tag_use(0.25) == "learned the tag"
    assert thresholds.tag_use(0.05) == "barely used the tag"
    assert thresholds.tag_use(0.01) == thresholds.tag_use(-0.2) == "did not learn the tag"


def test_tau_is_compared_as_a_number():
    tau = pd.Series(["0.01", "1e-2", "0.010", "0.1", "any"])  # as read from a CSV with "any" rows
    assert teacher_claims._at_tau(tau, 0.01).tolist() == [True, True, True, False, True]
    numbers = pd.Series([0.01, 0.1, 0.001])
    assert teacher_claims._at_tau(numbers, 0.01).tolist() == [True, False, False]


def test_data_origin_is_read_from_the_provenance_never_from_prose():
    assert DataOrigin.read({"origin": "paper"}) is DataOrigin.PAPER
    assert DataOrigin.read({"origin": "stand-in"}) is DataOrigin.STANDIN
    assert DataOrigin.read({"data": "stand-in built from embedded MNIST digits"}) is None
    with pytest.raises(ValueError, match="expected one of \\['paper', 'stand-in'\\]"):
        DataOrigin.read({"origin": "digits"})

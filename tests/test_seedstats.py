import math

import pytest

from tapkit.seedstats import mean_ci, paired_difference


def test_mean_ci_matches_the_t_interval_by_hand():
    # values 1, 2, 3: mean 2, s = 1, t_{0.975, 2} = 4.302653, half = 4.302653 / sqrt(3) = 2.484138
    est = mean_ci([1.0, 2.0, 3.0])
    assert est.mean == 2.0 and est.n == 3
    assert est.lo == pytest.approx(2 - 2.484138, abs=1e-6)
    assert est.hi == pytest.approx(2 + 2.484138, abs=1e-6)
    assert est.excludes(-1.0) and not est.excludes(0.0)


def test_one_seed_has_no_interval_and_nans_are_dropped():
    est = mean_ci([0.5, float("nan")])
    assert est.n == 1 and math.isnan(est.lo) and not est.excludes(0.0)
    assert "1 seed" in est.text()
    with pytest.raises(ValueError, match="no finite"):
        mean_ci([float("nan")])


def test_paired_difference_uses_common_seeds_and_cancels_seed_effects():
    a = {0: 0.90, 1: 0.80, 2: 0.70, 3: 0.5}
    b = {0: 0.85, 1: 0.76, 2: 0.64}
    est = paired_difference(a, b)  # differences 0.05, 0.04, 0.06: mean 0.05, s 0.01
    assert est.n == 3 and est.mean == pytest.approx(0.05)
    half = 4.302653 * 0.01 / math.sqrt(3)
    assert (est.lo, est.hi) == pytest.approx((0.05 - half, 0.05 + half), abs=1e-6)
    assert est.excludes(0.0)  # unpaired, the spread of a (0.1) would swamp the 0.05
    with pytest.raises(ValueError, match="no seed in common"):
        paired_difference({0: 1.0}, {1: 1.0})


def test_an_interval_from_a_summary_table_matches_the_one_from_its_values():
    from tapkit.seedstats import from_summary, mean_ci

    a, b = mean_ci([0.90, 0.92, 0.94]), from_summary(0.92, 0.02, 3)
    assert abs(a.lo - b.lo) < 1e-12 and abs(a.hi - b.hi) < 1e-12 and a.n == b.n == 3
    assert abs(b.hi - 0.92 - 4.302652729911275 * 0.02 / 3 ** 0.5) < 1e-9
    assert from_summary(0.5, float("nan"), 3).n == 3 and from_summary(0.5, 0.1, 1).text() == "0.500 (1 seed, no interval)"


def test_an_interval_stays_inside_the_metrics_range():
    """The issue's F1 0.857 [0.458, 1.256]: three seeds 0.60, 0.99, 0.98 give a t-interval past 1;
    within F1's range it ends at 1.0 and keeps its lower end (hand: mean 0.8567, s 0.2223,
    half 4.302653 · 0.2223 / √3 = 0.5522)."""
    from tapkit.metrics import TASK_METRICS

    f1 = TASK_METRICS["f1"]
    est = mean_ci([0.60, 0.99, 0.98], bounds=f1.range())
    assert est.hi == 1.0 and est.lo == pytest.approx(0.8567 - 0.5522, abs=1e-3)
    mae = TASK_METRICS["mae"]
    assert mae.range() == (0.0, 4.0) and mae.range(1) == (-4.0, 4.0) and f1.range(2) == (-2.0, 2.0)
    rel = paired_difference({0: 0.9, 1: -0.9, 2: 0.95}, {0: 0.0, 1: 0.0, 2: 0.0},
                            bounds=f1.range(1))
    assert rel.lo == -1.0 and rel.hi == 1.0  # both ends clipped: the data decide nothing

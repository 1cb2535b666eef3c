"""Numbers over seeds for the reproduction report: a mean with its 95% confidence interval, and a
paired difference between two methods trained on the same seeds (ReScience-style verdicts rest on
more than one seed: one seed can land either side of a threshold).

An interval stays inside the values its quantity can take (``bounds``: an F1 in [0, 1], a
reliance in [−1, 1], :meth:`tapkit.metrics.TaskMetric.range`): the Student-t interval is
intersected with them. The mean lies in that range whatever the seeds, so the intersection
covers it whenever the t-interval does: the same 95% confidence, and no F1 of 1.256 on a page."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from scipy import stats


@dataclass(frozen=True)
class Estimate:
    """``mean`` of ``n`` seeds with the two-sided ``level`` Student-t interval [lo, hi]
    (NaN bounds for a single seed: one seed has no spread to estimate)."""

    mean: float
    lo: float
    hi: float
    n: int

    def excludes(self, value: float = 0.0) -> bool:
        """True when the whole interval lies on one side of ``value``."""
        return self.n > 1 and (self.lo > value or self.hi < value)

    def text(self, digits: int = 3) -> str:
        if self.n < 2:
            return f"{self.mean:.{digits}f} (1 seed, no interval)"
        return f"{self.mean:.{digits}f} [{self.lo:.{digits}f}, {self.hi:.{digits}f}] ({self.n} seeds)"


Bounds = tuple[float, float] | None


def mean_ci(values: Sequence[float], level: float = 0.95, bounds: Bounds = None) -> Estimate:
    """Mean and Student-t interval ``mean ± t_{(1+level)/2, n-1} · s / sqrt(n)``, within
    ``bounds``; NaNs (runs that did not converge) are dropped, so ``n`` counts the converged
    seeds."""
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not xs:
        raise ValueError("no finite values: every run failed or none were given")
    n, mean = len(xs), sum(xs) / len(xs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else math.nan
    return from_summary(mean, sd, n, level, bounds)


def from_summary(mean: float, sd: float, n: int, level: float = 0.95,
                 bounds: Bounds = None) -> Estimate:
    """The Student-t interval of a mean given as (mean, sample std, count), as summary tables
    hold it, intersected with ``bounds`` (the values the quantity can take); no interval for one
    value or a missing std."""
    mean, n = float(mean), int(n)
    if n < 2 or math.isnan(float(sd)):
        return Estimate(mean, math.nan, math.nan, n)
    half = stats.t.ppf((1 + level) / 2, n - 1) * float(sd) / math.sqrt(n)
    lo, hi = mean - half, mean + half
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return Estimate(mean, lo, hi, n)


def paired_difference(a: Mapping[int, float], b: Mapping[int, float],
                      level: float = 0.95, bounds: Bounds = None) -> Estimate:
    """``a − b`` over the seeds both have (a paired comparison: each seed's data split and
    initialisation are shared, so seed-to-seed variation cancels), within ``bounds``."""
    seeds = sorted(set(a) & set(b))
    if not seeds:
        raise ValueError(f"no seed in common between {sorted(a)} and {sorted(b)}")
    return mean_ci([a[s] - b[s] for s in seeds], level, bounds)

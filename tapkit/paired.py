"""Ratios of paired measurements with a 95% interval: a method's training speed (or peak
memory) over No XS's, measured round by round on the same machine.

One round times one step of No XS and one of the method back to back (the benchmark alternates
their order), so whatever slows the machine in that round slows both: the round's ratio
``t_none / t_method`` cancels it, where the ratio of two fastest-of-a-few steps does not (on a
shared VM the fastest TAP step once came out ×0.88 of No XS's, and ×0.97-1.03 when quiet). A
ratio is summarised on the log scale, as ratios compose: the geometric mean of the rounds'
ratios with the Student-t interval of their logs (:func:`tapkit.seedstats.mean_ci`),
exponentiated. Inverting every ratio inverts the estimate and its interval exactly.
"""

from __future__ import annotations

import math
from typing import Sequence

from .seedstats import Estimate, mean_ci


def ratio_interval(numerators: Sequence[float], denominators: Sequence[float],
                   level: float = 0.95) -> Estimate:
    """Geometric mean of ``numerators[i] / denominators[i]`` over the pairs both have (the
    shorter sequence decides) with its ``level`` interval; pairs with a non-positive or missing
    value are left out. NaN everywhere and ``n = 0`` when no pair is left; NaN bounds for one."""
    logs = [math.log(a / b) for a, b in zip(numerators, denominators)
            if a is not None and b is not None and a > 0 and b > 0]
    if not logs:
        return Estimate(math.nan, math.nan, math.nan, 0)
    e = mean_ci(logs, level)
    return Estimate(math.exp(e.mean), math.exp(e.lo), math.exp(e.hi), e.n)


def speed_ratio(base_seconds: Sequence[float], method_seconds: Sequence[float],
                level: float = 0.95) -> Estimate:
    """The method's speed over No XS's from paired step times: per round
    ``base_seconds[r] / method_seconds[r]`` (above 1: the method steps faster)."""
    return ratio_interval(base_seconds, method_seconds, level)


def memory_ratio(base_mb: Sequence[float], method_mb: Sequence[float],
                 level: float = 0.95) -> Estimate:
    """The method's peak memory over No XS's, pass by pass: ``method_mb[p] / base_mb[p]``
    (above 1: the method needs more)."""
    return ratio_interval(method_mb, base_mb, level)

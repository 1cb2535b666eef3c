"""Table 1's claims: TAP's speed and memory against No XS's, RRR's and RBR's, and RBR's
out-of-memory step on the paper's GPU.

Speed ratios carry 95% intervals over paired rounds, memory ratios over passes
(:mod:`tapkit.paired`); judged on the deep CNNs of Table 1 (:func:`tapkit.experiments.table1.
architectures`), with any other model timed beside them shown as context.
"""

from __future__ import annotations

from typing import Collection, Iterable

import pandas as pd

from ..experiments.table1 import architectures
from ..methods import comparators, proposed_method
from .claims import (NOT_REPRODUCED, NOT_RUN, NOT_TESTABLE, REPRODUCED, Claim, combined,
                     keeps_verdict, needs_all, untestable)
from .labels import interval_text
from .labels import label as _label  # where a judge's argument is called ``label``
from .thresholds import KEEPS, MEMORY_SHARE, TIME_SHARE


def _bounds(row, key: str) -> tuple[float, float]:
    """The interval's ends, NaN where the table has none (an older table, one round)."""
    ends = (getattr(row, f"{key}_{end}", None) for end in ("lo", "hi"))
    lo, hi = (float("nan") if v is None else float(v) for v in ends)
    return lo, hi


SPEED_CLAIM = f"TAP keeps at least {KEEPS:g} of No XS's speed and memory"


def speed_claim(ratios: pd.DataFrame, label: str,
                judged: Collection[str] | None = None) -> Claim:
    """TAP keeps at least :data:`KEEPS` of No XS's training speed and uses at most 1/KEEPS of its
    peak memory, on every deep CNN of the paper's Table 1 (VGG-16, ResNet-18, DenseNet-121).
    ``judged``: the architectures the verdict is about (default: every bench profile's Table-1
    models, :func:`tapkit.experiments.table1.architectures`); a row of another model (the
    two-layer CNN measured beside them) is shown in the evidence as context and decides
    nothing. Each ratio carries its 95% interval over paired rounds (speed) or passes (memory)
    (:mod:`tapkit.paired`), judged by :func:`keeps_verdict`: noise widens an interval into
    "inconclusive" instead of flipping the verdict. A table without intervals (one round) is
    inconclusive; one with TAP timed on context models only is not testable."""
    claim = SPEED_CLAIM
    judged = architectures() if judged is None else frozenset(judged)
    tap = ratios[(ratios["method"] == proposed_method()) & ratios["speed_ratio"].notna()]
    if tap.empty:
        return Claim(claim, "Table 1", "no TAP benchmark in this build", "—", label, NOT_RUN,
                     reason="the speed chapter timed no TAP step")
    deep, context = tap[tap["model"].isin(judged)], tap[~tap["model"].isin(judged)]
    verdicts, parts = [], []
    for r in deep.itertuples():
        speed, mem = _bounds(r, "speed_ratio"), _bounds(r, "mem_ratio")
        verdicts += [keeps_verdict(*speed, KEEPS),
                     keeps_verdict(*mem, 1 / KEEPS, higher_is_better=False)]
        parts.append(_speed_part(r))
    aside = ("; context, not judged (not in Table 1): "
             + "; ".join(map(_speed_part, context.itertuples())) if len(context) else "")
    evidence = "; ".join(parts) + (" (95% intervals)" if parts else "") + aside
    if deep.empty:
        return Claim(claim, "Table 1", evidence.removeprefix("; "), "—", label, NOT_TESTABLE,
                     reason="TAP was timed on none of Table 1's deep CNNs")
    rounds = _counts(deep, "speed_rounds", "paired round")
    passes = _counts(deep, "mem_passes", "memory pass")
    return Claim(claim, "Table 1", evidence, f"{rounds}; {passes}", label, combined(verdicts))


def _speed_part(r) -> str:
    """One architecture's TAP ratios with their intervals, for a claim's evidence."""
    speed, mem = _bounds(r, "speed_ratio"), _bounds(r, "mem_ratio")
    return (f"{_label(r.model)}: speed ×{r.speed_ratio:.2f} {_interval(*speed)}, memory "
            f"×{r.mem_ratio:.2f} {_interval(*mem)}")


def _interval(lo: float, hi: float) -> str:
    return interval_text(lo, hi, missing="[no interval]")


def _counts(frame: pd.DataFrame, column: str, unit: str) -> str:
    """``"20–30 paired rounds"``: the range of ``column`` over the architectures."""
    n = sorted({int(v) for v in frame[column].dropna()}) if column in frame else []
    span = "no" if not n else f"{n[0]}" if n[0] == n[-1] else f"{n[0]}–{n[-1]}"
    return f"{span} {unit}{'' if span == '1' else 'es' if unit.endswith('s') else 's'}"


def cost_claim(ratios: pd.DataFrame, label: str, method: str | None = None,
               others: Iterable[str] | None = None,
               judged: Collection[str] | None = None) -> Claim:
    """RRR and RBR (``others``; None: the comparators, :func:`tapkit.methods.comparators`), which
    take second derivatives, train slower than TAP (``method``; None: the paper's own) and use
    more memory ("trains faster and uses less memory"), on every deep CNN of Table 1
    (``judged``, as :func:`speed_claim`); another model timed beside them (the two-layer CNN) is
    shown as context and decides nothing. Each comparator is needed on each deep CNN: one not
    benchmarked there (out of memory) is named and leaves the claim *not testable here* unless a
    measured one already fails it. Memory is counted exactly, so its ratio decides without an
    interval, as in :func:`cost_share_claim`."""
    method = method or proposed_method()
    named = list(comparators() if others is None else others)
    claim = (f"{' and '.join(map(_label, named))} train slower than {_label(method)} and use "
             "more memory")
    judged = architectures() if judged is None else frozenset(judged)
    wide = ratios.pivot_table(index="model", columns="method", values="speed_ratio")
    memory = (ratios.pivot_table(index="model", columns="method", values="mem_ratio")
              if "mem_ratio" in ratios else pd.DataFrame(index=wide.index))  # an older table
    others = [m for m in named if m in wide]
    if method not in wide or not others:
        return Claim(claim, "Table 1", "not benchmarked here", "—", label, NOT_RUN,
                     reason=f"{'/'.join(map(_label, named))} or {_label(method)} not benchmarked")

    def part(model, row) -> str:
        return f"{_label(model)}: " + ", ".join(
            f"{_label(m)} ×{row[m]:.2f} speed" + (f", ×{memory.loc[model, m]:.2f} memory"
                                                  if m in memory and pd.notna(memory.loc[model, m])
                                                  else "")
            for m in [method, *others] if pd.notna(row[m]))

    deep, context = wide[wide.index.isin(judged)], wide[~wide.index.isin(judged)]
    aside = ("; context, not judged (not in Table 1): "
             + "; ".join(part(m, r) for m, r in context.iterrows()) if len(context) else "")
    evidence = "; ".join(part(m, r) for m, r in deep.iterrows()) + aside
    if deep.empty:
        return Claim(claim, "Table 1", evidence.removeprefix("; "), "—", label, NOT_TESTABLE,
                     reason="timed on none of Table 1's deep CNNs")
    mem = memory.reindex(index=deep.index, columns=[method, *others])
    # a comparator out of memory where TAP trains (the paper's RBR on DenseNet-121) is the
    # claim's own evidence: slower (it cannot train there) and heavier
    oom = ({(r.model, r.method) for r in ratios.itertuples() if r.status == "oom"}
           if "status" in ratios else set())
    gaps = [f"{_label(m)} on {_label(model)}" for model in deep.index for m in named
            if (model, m) not in oom and (m not in deep or pd.isna(deep.loc[model, m])
                                          or pd.isna(mem.loc[model, m]))]
    measured = [(model, m) for model in deep.index for m in others
                if pd.notna(deep.loc[model, m]) and pd.notna(mem.loc[model, m])]
    holds = all(deep.loc[model, m] < deep.loc[model, method]
                and mem.loc[model, m] > mem.loc[model, method] for model, m in measured)
    if not holds:
        return Claim(claim, "Table 1; Introduction", evidence, "—", label, NOT_REPRODUCED)
    absent = [m for m in named if m not in others]
    if absent:  # a comparator this build never benchmarked
        return Claim(claim, "Table 1; Introduction", evidence, "—", label, NOT_RUN,
                     reason=f"{' and '.join(map(_label, absent))} not benchmarked here")
    if gaps:
        return Claim(claim, "Table 1; Introduction", evidence, "—", label, NOT_TESTABLE,
                     reason="not measured here: " + ", ".join(gaps))
    return Claim(claim, "Table 1; Introduction", evidence, "—", label, REPRODUCED)


def cost_share_claim(ratios: pd.DataFrame, label: str, method: str | None = None,
                     *others: str, judged: Collection[str] | None = None) -> Claim:
    """Avoiding second derivatives gives TAP (``method``; None: the paper's own) "circa 25% of
    the training time and half the memory" of RRR and RBR (``others``; None: the comparators):
    per comparator, TAP's share of its step time (the ratio of their speeds) and of its peak
    memory, averaged over Table 1's deep CNNs (``judged``, as :func:`speed_claim`), at most
    :data:`.thresholds.TIME_SHARE` and :data:`.thresholds.MEMORY_SHARE`. Memory is counted
    exactly (the allocator's peak bytes of live tensors) and the speeds' ratios are far from
    the thresholds, so the shares decide without an interval; the two-layer CNN is context."""
    method = method or proposed_method()
    named = list(others or comparators())
    claim = (f"{_label(method)} takes at most {TIME_SHARE:.0%} of the step time and "
             f"{MEMORY_SHARE:.0%} of the memory of {' and '.join(map(_label, named))}")
    judged = architectures() if judged is None else frozenset(judged)
    deep = ratios[ratios["model"].isin(judged)]
    speed = deep.pivot_table(index="model", columns="method", values="speed_ratio")
    memory = deep.pivot_table(index="model", columns="method", values="mem_ratio")
    timed = [m for m in named if m in speed and method in speed]
    if not timed:
        return Claim(claim, "Introduction; Table 1", "not benchmarked here", "—", label, NOT_RUN,
                     reason="TAP, RRR or RBR not timed on Table 1's architectures")
    parts, verdicts = [], []
    for other in timed:
        time_share = (speed[other] / speed[method]).mean()   # TAP's time ÷ the other's
        mem_share = (memory[method] / memory[other]).mean()
        parts.append(f"{_label(method)} ÷ {_label(other)}: time {time_share:.2f}, memory "
                     f"{mem_share:.2f}")
        verdicts.append(REPRODUCED if time_share <= TIME_SHARE and mem_share <= MEMORY_SHARE
                        else NOT_REPRODUCED)
    models = ", ".join(map(_label, sorted(speed.index)))
    evidence = "; ".join(parts) + f" (means over {models})"
    # "of RRR and RBR": a comparator never timed leaves the claim not run (named)
    c = Claim(claim, "Introduction; Table 1", evidence, "—", label, combined(verdicts))
    return needs_all(c, [f"{_label(m)} timing" for m in named if m not in timed])


PAPER_GPU_MB = 10 * 1024
"""The paper's GPU, an RTX 3080 of 10 GB (LaTeX line 352), where DenseNet-121's RBR step at
batch 16 of 224-px images ran out of memory (Table 1)."""


def oom_claim(meta: dict, label: str, method: str, model: str = "densenet121") -> Claim:
    """``method`` on ``model`` needs more than the paper's 10 GB GPU at the paper's batch of 16
    224-px images. Judged from Table 1's rows (the speed chapter's table metadata) only where
    that step was measured on a GPU at that batch and size: its peak memory above
    :data:`PAPER_GPU_MB` reproduces the OOM; elsewhere the measured peak is shown and the claim
    is not testable."""
    claim = (f"{_label(method)} on {_label(model)} needs more than a 10 GB GPU at batch 16 of "
             "224-px images")
    where = "Table 1 (OOM)"
    rows = [r for r in meta.get("rows", []) if r.get("model") == model
            and r.get("method") == method]
    if not rows or rows[0].get("peak_mem_mb") is None:
        return Claim(claim, where, f"no {_label(method)} step on {_label(model)} timed", "—",
                     label, NOT_RUN, reason="the speed chapter did not measure it")
    r = rows[0]
    peak, batch, size = float(r["peak_mem_mb"]), int(r["batch_size"]), int(r["image_size"])
    device = str(r.get("device", ""))
    evidence = (f"peak memory {peak:,.0f} MB at batch {batch} of {size} px on {device}")
    if not (device.startswith("cuda") and batch == 16 and size == 224):
        return untestable(claim, where, evidence, "—", label,
                          "a 10 GB GPU's limit at batch 16 of 224 px; this build measured "
                          "another batch and device (the paper profile on a GPU measures it)")
    return Claim(claim, where, evidence, "—", label,
                 REPRODUCED if peak > PAPER_GPU_MB else NOT_REPRODUCED)

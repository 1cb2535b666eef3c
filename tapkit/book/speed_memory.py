"""The speed-and-memory chapter (the paper's Table 1): when a stored measurement can be shown
again, how a measurement is written, and the order and shape its tables are shown in. The
measurement is :func:`tapkit.experiments.table1.measure` (the speed page and the GPU lease both
call it); the ratios are :func:`.medical.bench_ratios`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from ..benchmark import model_spec
from ..experiments.protocols import BenchProtocol
from ..experiments.table1 import Table1, architectures, specs
from ..methods import get_method, no_xs, proposed_method
from . import medical, report
from .claims import keeps_verdict
from .labels import interval_text, label
from .profile_notes import _and, loss_form
from .thresholds import KEEPS


def stored_meta(table: str | Path, settings: Mapping[str, Any], models: Sequence[str],
                methods: Sequence[str], device: str, threads: int) -> dict[str, Any] | None:
    """The provenance stored beside ``table`` (``<name>.json``, as :func:`write_measured` writes
    it, the rows among it) when its measurement was taken with these ``settings``, ``models`` and
    ``methods`` on this ``device`` with this many CPU ``threads``; None when there is none or it
    differs in any of them. Timing is slow and noisy: a page rebuilt with the same settings shows
    the same measurement instead of taking a new one."""
    meta = Path(table).with_suffix(".json")
    if not meta.exists():
        return None
    stored = json.loads(meta.read_text())
    same = (stored.get("settings") == settings and stored.get("models") == list(models)
            and stored.get("methods") == list(methods) and stored.get("device") == device
            and stored.get("threads") == threads)
    return stored if same else None


def stored_rows(table: str | Path, settings: Mapping[str, Any], models: Sequence[str],
                methods: Sequence[str], device: str, threads: int) -> list[dict] | None:
    """The rows of :func:`stored_meta` (its arguments), or None."""
    stored = stored_meta(table, settings, models, methods, device, threads)
    return None if stored is None else stored["rows"]


def write_measured(table: Table1, root: str | Path) -> pd.DataFrame:
    """``table``'s rows as ratios to No XS beside the paper's (:func:`.medical.bench_ratios`),
    written to ``root/tables/speed_memory.*`` with its provenance (:meth:`Table1.meta`: the
    settings :func:`stored_rows` compares, the loss options
    :func:`.paper_profile.released_losses` reads, the rows); the ratios."""
    ratios = medical.bench_ratios(table.rows)
    report.write_table(ratios, root, "speed_memory", table.meta())
    return ratios


def timed_text(protocol: BenchProtocol, profile: str) -> str:
    """One sentence for the speed page, read from the profile's bench protocol: which
    architectures it times as Table 1's, which beside them as context (not judged), and the form
    of each XS loss it times (:func:`.profile_notes.loss_form`; the paper profile's are the
    released code's, as the authors timed Table 1)."""
    names = [model_spec(s, protocol.batch_size, protocol.image_size)[0] for s in specs(protocol)]
    judged = architectures(protocol)
    context = [label(n) for n in names if n not in judged]
    forms = [loss_form(get_method(m).make_options(protocol.options.get(m)))
             for m in dict.fromkeys(protocol.methods) if m != no_xs()]
    table = [label(n) for n in names if n in judged]
    return (f"The `{profile}` profile times "
            + (f"{_and(table)} (Table 1's architectures)" if table else
               "none of Table 1's architectures")
            + (f", with the {_and(context)} beside them as context" if context else "")
            + (f"; the losses in these forms: {_and(forms)}" if forms else "") + ".")


def in_order(ratios: pd.DataFrame, models: Sequence[str], methods: Sequence[str]) -> pd.DataFrame:
    """``ratios`` (:func:`.medical.bench_ratios`) sorted by architecture in ``models`` order, then
    by method in ``methods`` order with the second No XS measurement (``none_again``) last; index
    reset."""
    rank = {m: i for i, m in enumerate(list(models) + list(methods) + ["none_again"])}
    return ratios.sort_values(["model", "method"], key=lambda col: col.map(rank)).reset_index(drop=True)


def committed_view(table: pd.DataFrame) -> pd.DataFrame:
    """A committed paper-profile ``speed_memory`` table as raw numbers: one row per (model,
    method), to two decimals. The speed page shows the committed table beside the paper's ratios,
    labelled for people, with :func:`.paper_profile.speed_beside_paper`."""
    return table.set_index(["model", "method"]).round(2)


def _intervals(ratios: pd.DataFrame, col: str, digits: int = 2) -> list[str]:
    """``[lo, hi]`` of ``col``'s interval per row (``—`` where it has none)."""
    return [interval_text(lo, hi, digits)
            for lo, hi in zip(ratios[f"{col}_lo"].astype(float), ratios[f"{col}_hi"].astype(float))]


def ratios_table(ratios: pd.DataFrame, arch: Mapping[str, str]) -> pd.DataFrame:
    """Table 1 as the page shows it: per architecture (``arch``: its label) and method, it/s and
    peak MB, the ratios to No XS with their 95% intervals, rounds and passes, beside the
    paper's ratios."""
    show = ratios.assign(
        architecture=ratios.model.map(arch), method=ratios.method.map(medical.CASE_LABELS),
        **{"it/s": ratios.it_per_s.round(2), "peak MB": ratios.peak_mem_mb.round(0),
           "speed 95%": _intervals(ratios, "speed_ratio"),
           "rounds": ratios.speed_rounds.astype("Int64"),
           "memory 95%": _intervals(ratios, "mem_ratio"),
           "passes": ratios.mem_passes.astype("Int64")})
    return show.set_index(["architecture", "method"])[
        ["status", "it/s", "speed_ratio", "speed 95%", "rounds", "paper_speed_ratio", "peak MB",
         "mem_ratio", "memory 95%", "passes", "paper_mem_ratio"]].round(2)


def ratios_figure(ratios: pd.DataFrame, names: Sequence[str], methods: Sequence[str],
                  arch: Mapping[str, str]):
    """Table 1 as bars: each XS method's speed and memory ratio to No XS per architecture (its
    95% interval as error bars) beside the paper's (hatched; a missing bar is the paper's OOM)."""
    import matplotlib.pyplot as plt
    import numpy as np

    # the two panels stacked, at the column's width, the legend under them: side by side at
    # 10 inches the page scaled them to ~6 px text, the legend covered the VGG-16 bars and two
    # architectures' names ran into each other
    fig, axes = plt.subplots(2, 1, figsize=(7.5, 6.2), sharex=True)
    xs = [m for m in methods if m != no_xs()]
    x = np.arange(len(names))
    for ax, col, name in ((axes[0], "speed_ratio", "it/s"), (axes[1], "mem_ratio", "memory")):
        for i, method in enumerate(xs):
            sel = ratios[ratios.method == method].set_index("model").reindex(names)
            off = x + (i - (len(xs) - 1) / 2) * 0.25
            mid = sel[col].astype(float)
            err = np.abs(np.vstack([mid - sel[f"{col}_lo"].astype(float),
                                    sel[f"{col}_hi"].astype(float) - mid]))
            ax.bar(off, mid, 0.12, yerr=np.nan_to_num(err), capsize=2,
                   label=f"{medical.CASE_LABELS[method]} (ours, 95% interval)", color=f"C{i}")
            ax.bar(off + 0.12, sel[f"paper_{col}"].astype(float), 0.12, color=f"C{i}",
                   alpha=0.4, hatch="//", label=f"{medical.CASE_LABELS[method]} (paper)")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_xticks(x, [arch[m].replace(" (", "\n(") for m in names])
        ax.set_ylabel(label(col))
        ax.set_title(f"{name} relative to No XS")
    handles, names_ = axes[0].get_legend_handles_labels()
    fig.legend(handles, names_, fontsize=report.MIN_FONT_PT, ncol=3, loc="lower center",
               bbox_to_anchor=(0.5, 0.0))
    report.titled(fig, "Table 1 as ratios to No XS (paper: hatched; a missing paper bar on "
                       "Table 1's architectures is the paper's OOM)")
    report.fit_text(fig)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def tap_checks(ratios: pd.DataFrame, arch: Mapping[str, str],
               keeps: float = KEEPS) -> pd.DataFrame:
    """The paper's method against No XS per architecture: its speed and memory ratios with their
    95% intervals and the verdict of each against ``keeps`` (speed at least ``keeps``, memory at
    most 1/``keeps``: :func:`.claims.keeps_verdict`), and the noise floor (No XS measured
    again, against No XS)."""
    own = ratios[ratios.method == proposed_method()].set_index("model")
    again = ratios[ratios.method == "none_again"].set_index("model")
    name = label(proposed_method())
    return pd.DataFrame({
        f"{name} it/s ÷ No XS": own.speed_ratio.values,
        "95% interval": _intervals(own, "speed_ratio", 3),
        f"speed ≥ {keeps:g}": [keeps_verdict(lo, hi, keeps)
                               for lo, hi in zip(own.speed_ratio_lo, own.speed_ratio_hi)],
        f"{name} memory ÷ No XS": own.mem_ratio.values,
        "95% interval ": _intervals(own, "mem_ratio", 3),
        f"memory ≤ 1/{keeps:g}": [keeps_verdict(lo, hi, 1 / keeps, higher_is_better=False)
                                  for lo, hi in zip(own.mem_ratio_lo, own.mem_ratio_hi)],
        "noise: No XS again ÷ No XS (it/s)": [
            f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in
            zip(again.speed_ratio, again.speed_ratio_lo, again.speed_ratio_hi)]},
        index=own.index.map(arch)).round(3)


def oom_text(ratios: pd.DataFrame, batch: int, px: int, device: str) -> str | None:
    """Whether the cell the paper's Table 1 marks OOM (:func:`.paper_profile.paper_oom`: RBR on
    DenseNet-121) fits here at ``batch`` images of ``px`` pixels, in a sentence; None when this
    measurement did not include it."""
    from .paper_profile import paper_oom

    model, method = paper_oom()
    cell = ratios[(ratios.model == model) & (ratios.method == method)]
    if cell.empty:
        return None
    row = cell.iloc[0]
    state = ("ran out of memory" if row.status == "oom" else
             f"fits (peak {row.peak_mem_mb:.0f} MB, {row.it_per_s:.2f} it/s)")
    return (f"{label(method)} on {label(model)} at batch {batch} of {px} px on {device}: "
            f"**{state}**. The paper's RTX 3080 (10 GB) ran out of memory at batch 16 of 224 px.")


def efficiency_table(eff: pd.DataFrame) -> pd.DataFrame:
    """The efficiency rows (:func:`tapkit.benchmark.efficiency`) for people: per architecture
    its batch, image size and optimiser, a step's GFLOP and seconds, its GFLOP/s and its share
    of the same process's matrix multiply."""
    return pd.DataFrame({
        "architecture": eff.model.map(label),
        "batch": eff.batch_size, "image px": eff.image_size, "optimiser": eff.optimizer.str.upper(),
        "GFLOP a step": (eff.step_flops / 1e9).round(2), "step s": eff.step_s.round(3),
        "GFLOP/s": (eff.flops_per_s / 1e9).round(1),
        "share of matmul": eff.efficiency.round(2)}).set_index("architecture")


def efficiency_caption(eff: pd.DataFrame, device: str, steps: int) -> str:
    """The efficiency table's caption: the matrix multiply's GFLOP/s and threads, the device and
    how many steps the fastest was taken from."""
    threads = int(eff.threads.iloc[0])
    return (f"*No XS training steps against a 2048² matrix multiply "
            f"({eff.matmul_flops_per_s.iloc[0] / 1e9:.1f} GFLOP/s with {threads} "
            f"thread{'s' if threads != 1 else ''}) — {device}, fastest of {steps} steps*")

"""The speed-and-memory chapter (the paper's Table 1): when a stored measurement can be shown
again, and the order and shape its tables are shown in. The ratios themselves are
:func:`.medical.bench_ratios`; the measurement is :func:`tapkit.benchmark.bench`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd


def stored_rows(table: str | Path, settings: Mapping[str, Any], models: Sequence[str],
                methods: Sequence[str], device: str, threads: int) -> list[dict] | None:
    """The rows of the measurement stored beside ``table`` (its provenance file ``<name>.json``,
    as the chapter writes it) when it was taken with these ``settings``, ``models`` and
    ``methods`` on this ``device`` with this many CPU ``threads``; None when there is none or it
    differs in any of them. Timing is slow and noisy: a page rebuilt with the same settings shows
    the same measurement instead of taking a new one."""
    meta = Path(table).with_suffix(".json")
    if not meta.exists():
        return None
    stored = json.loads(meta.read_text())
    same = (stored.get("settings") == settings and stored.get("models") == models
            and stored.get("methods") == methods and stored.get("device") == device
            and stored.get("threads") == threads)
    return stored["rows"] if same else None


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

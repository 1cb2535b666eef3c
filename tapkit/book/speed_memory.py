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
from ..methods import get_method
from . import medical, report
from .labels import label
from .profile_notes import _and, loss_form


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
             for m in dict.fromkeys(protocol.methods) if m != "none"]
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

"""What a build wrote, as the claim judges read it: :class:`Evidence` reads one profile's tables
under ``root/tables`` once, for every judge of the claim registry (:mod:`.claim_specs`), and says
which cells the profile left out and whether the medical tables are on the digits stand-in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pandas as pd

from ..sources import MEDICAL_EXPERIMENTS
from .medical_notes import cells_by_reason
from .origin import DataOrigin
from .report import read_cells

if TYPE_CHECKING:
    from .claims import Claim


@dataclass
class Evidence:
    """The tables one profile's build wrote under ``root/tables``, read once (lazily) for every
    judge: ``table(name)`` is ``(frame, provenance)`` or ``(None, {})``."""

    root: Path
    _cache: dict = field(default_factory=dict)

    def table(self, name: str) -> tuple[pd.DataFrame | None, dict]:
        if name not in self._cache:
            path = self.root / "tables" / f"{name}.csv"
            meta = path.with_suffix(".json")
            self._cache[name] = ((read_cells(path), json.loads(meta.read_text()) if meta.exists()
                                  else {}) if path.exists() else (None, {}))
        return self._cache[name]

    def has(self, *names: str) -> bool:
        return any(self.table(n)[0] is not None for n in names)

    def medical_data(self, only: tuple[str, ...] = MEDICAL_EXPERIMENTS,
                     table: str = "{}_gt_runs"):
        """``(runs, data names, origins)`` of the per-run tables of ``only`` (``table``: their
        name, by experiment; Setting 1's by default, ``"extra_{}_runs"`` the appendix
        architectures')."""
        found = {e: t for e in only if (t := self.table(table.format(e))[0]) is not None}
        metas = {e: self.table(table.format(e))[1] for e in found}
        return (found, {e: str(m.get("data", "unknown")) for e, m in metas.items()},
                {e: DataOrigin.read(m) for e, m in metas.items()})

    def left_out(self, only: tuple[str, ...], methods: Methods,
                 model: str | None = None) -> dict[str, list[str]]:
        """Why the profile left out the cells of ``methods`` (of ``model``; None: every
        architecture) on the data sets ``only``: the ``left_out`` of their per-run tables
        (``{"<model>/<case>": why}``, written by the chapter from the protocol's ``not_run``),
        the cells each reason leaves out: ``{why: ["KNEE ResNet-18 RRR", ...]}``."""
        cells: dict[str, list[str]] = {}
        for exp in only:
            recorded = self.table(f"{exp}_gt_runs")[1].get("left_out", {})
            left = {(arch, case): why for cell, why in recorded.items()
                    for arch, case in [cell.split("/")]
                    if case in methods and model in (None, arch)}
            for why, names in cells_by_reason(left, f"{exp.upper()} ").items():
                cells.setdefault(why, []).extend(names)
        return cells

    @cached_property
    def standin(self) -> bool:
        """Whether this build's medical tables are on the digits stand-in."""
        return any(DataOrigin.read(self.table(n)[1]) == DataOrigin.STANDIN
                   for n in ("pneu_gt_runs", "knee_gt_runs", "medical_teacher"))

    @property
    def ratios(self) -> pd.DataFrame | None:
        return self.table("speed_memory")[0]

    def speed_label(self) -> str:
        return ("timed training steps on random tensors · "
                + str(self.table("speed_memory")[1].get("device", "unknown device")))


Methods = tuple[str, ...]  # a claim's methods: registry names, the claimed one first
# a claim's judge: the build's tables and the claim's methods in, its verdict (None: no table)
Judge = Callable[[Evidence, Methods], "Claim | None"]

"""What a build's trained cells cost and which of the report's claims read them: issue 36's budget
rule ("pay for the new cells by removing cells no claim reads") needs both numbers, measured on
one build, before a maintainer cuts or adds a cell.

A *cell* is one row group of the chapters' tables: a data set, its artifact (the tag or the
stripe), an architecture, a case (No XS, Base, an XS or distillation method) and where its masks
or teacher come from (Setting 2's annotation), over its seeds.
Its cost is the CPU seconds its runs took (``runs/<key>/metrics.json``, each run once, however
many chapters read it). A claim *reads* a cell when judging the build without it changes the
claim's row of the report (verdict, evidence, reason or seeds): :func:`readers` drops the cell's
rows from every table of a copy of ``tables/`` and judges that copy
(:func:`.claim_specs.claims_table`), so the answer comes from the judges themselves, not from a
list kept beside them. A λ search's runs are costed with the cell of their method (they serve
it); runs that feed no table row, the pretrained starts (their own experiment) and the teachers
(case ``teacher``), are read by no claim directly, though the cells they serve are.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pandas as pd

from ..experiment_specs import get_experiment
from ..experiments.cells import Annotation
from ..methods import get_method, no_xs
from ..models import paper_architecture
from .claim_specs import claims_table

BASE = "base"
CASE_COLUMNS = ("case", "method")   # a table's case column: Setting 1's per-run tables, the rest
JUDGED = ("verdict", "evidence", "reason", "seeds")  # what a claim's row says of its cells


@dataclass(frozen=True, order=True)
class CellKey:
    """A cell of a build: ``experiment`` as the tables name it (``pneu``, ``knee``, ``mnist``),
    ``artifact`` (``tag`` or ``stripe``), ``model``, ``case`` and ``annotation`` (an
    :class:`~tapkit.experiments.cells.Annotation` value)."""

    experiment: str
    artifact: str
    model: str
    case: str
    annotation: str = Annotation.NONE.value

    def __str__(self) -> str:
        art = "" if self.artifact == "tag" else f" {self.artifact}"
        masks = ("" if self.annotation in (Annotation.NONE, Annotation.GROUND_TRUTH)
                 else f" ({self.annotation})")
        return f"{self.experiment}{art} {self.model} {self.case}{masks}"


FIELDS = ("experiment", "artifact", "model", "case", "annotation")


def _table_experiment(experiment: str) -> str:
    """A config's experiment as the tables name it (the registry's ``table_name``: Decoy-MNIST's
    tables say ``mnist``); a name the registry does not know, as it is."""
    try:
        spec = get_experiment(experiment)
    except ValueError:
        return experiment
    return spec.table_name or spec.name


def run_case(config: dict) -> str:
    """The case a run's config trains: Base (No XS on clean data), a teacher (trained on its
    clean holdout), else its method (``none`` for No XS)."""
    if config.get("data") == "holdout":
        return "teacher"
    if config.get("data") == "clean" and config.get("method") == no_xs():
        return BASE
    return str(config.get("method"))


def run_annotation(config: dict) -> str:
    """Where a run's masks or teacher come from, as the tables name it: a teacher's (the
    students of Setting 2 and KD/AT/JT, and a teacher itself by its holdout), random masks, the
    ground truth (an XS method's, Setting 1), or none (No XS, Base)."""
    method, teacher = get_method(str(config.get("method"))), config.get("teacher")
    if config.get("data") == "holdout":
        teacher = config
    elif not (teacher and (config.get("annotation") == "teacher" or method.needs_teacher)):
        teacher = None
    if teacher is not None:
        return Annotation.of_teacher(float(teacher.get("clean_fraction", 0.0))).value
    if method.term is None:
        return Annotation.NONE.value
    return (Annotation.RANDOM if config.get("annotation") == "random"
            else Annotation.GROUND_TRUTH).value


def run_costs(root: str | Path) -> pd.DataFrame:
    """One row per finished run of the store ``root/runs``: its key, :class:`CellKey` fields and
    seconds (the run's own clock, :func:`tapkit.experiments.run.train_run`). A registry variant
    is costed under the architecture the tables name it by (the quick profile's
    ``vgg16_quarter`` as VGG-16, :func:`tapkit.models.paper_architecture`)."""
    rows = []
    for path in sorted(Path(root, "runs").glob("*/metrics.json")):
        record = json.loads(path.read_text())
        cfg = record.get("config", {})
        rows.append({"key": path.parent.name,
                     "experiment": _table_experiment(str(cfg.get("experiment", ""))),
                     "artifact": str(cfg.get("artifact", "tag")),
                     "model": paper_architecture(str(cfg.get("model"))) or str(cfg.get("model")),
                     "case": run_case(cfg), "annotation": run_annotation(cfg),
                     "seed": cfg.get("seed"), "seconds": float(record.get("seconds", 0.0))})
    return pd.DataFrame(rows, columns=["key", *FIELDS, "seed", "seconds"])


def cell_costs(runs: pd.DataFrame) -> pd.DataFrame:
    """:func:`run_costs` summed by cell: runs, seeds and CPU seconds, the dearest first."""
    out = (runs.groupby(list(FIELDS), sort=False)
           .agg(runs=("key", "nunique"), seeds=("seed", "nunique"), seconds=("seconds", "sum"))
           .reset_index())
    return out.sort_values("seconds", ascending=False, ignore_index=True)


def _table_artifact(name: str) -> str:
    return "stripe" if "stripe" in name.split("_") else "tag"


def cell_rows(frame: pd.DataFrame, name: str, cell: CellKey) -> pd.Series:
    """Which rows of the table ``name`` belong to ``cell``: its experiment (the table's column,
    else a word of the table's name), artifact (a ``stripe`` table holds the stripe's), model
    and annotation (where the table has the column) and case (``case``, else ``method``). A
    table without a case column holds no cell's rows."""
    none = pd.Series(False, index=frame.index)
    case = next((c for c in CASE_COLUMNS if c in frame), None)
    if case is None or _table_artifact(name) != cell.artifact:
        return none
    if "experiment" in frame:
        rows = frame["experiment"].astype(str).map(_table_experiment) == cell.experiment
    elif cell.experiment in name.split("_"):
        rows = pd.Series(True, index=frame.index)
    else:
        return none
    if "model" in frame:
        rows &= frame["model"].astype(str) == cell.model
    if "annotation" in frame:
        rows &= frame["annotation"].astype(str) == cell.annotation
    return rows & (frame[case].astype(str) == cell.case)


def without(tables: Path, cell: CellKey, into: Path) -> Path:
    """A copy of the build's ``tables`` folder in ``into`` with ``cell``'s rows dropped from
    every table (their provenance copied as it is): the build as if the cell had not run."""
    out = into / "tables"
    shutil.copytree(tables, out)
    for path in out.glob("*.csv"):
        frame = pd.read_csv(path)
        rows = cell_rows(frame, path.stem, cell)
        if rows.any():
            frame[~rows].to_csv(path, index=False)
    return into


def readers(root: str | Path, cells: Iterable[CellKey]) -> dict[CellKey, list[str]]:
    """The claims (ids) that read each of ``cells``: those whose row of the report
    (:data:`JUDGED`) differs when the build is judged without the cell (:func:`without`)."""
    root = Path(root)
    full = claims_table(root).set_index("id")[list(JUDGED)].astype(str)
    found = {}
    for cell in cells:
        with tempfile.TemporaryDirectory() as tmp:
            less = claims_table(without(root / "tables", cell, Path(tmp)))
        changed = less.set_index("id")[list(JUDGED)].astype(str).ne(full).any(axis=1)
        found[cell] = sorted(changed[changed].index)
    return found


def ledger(root: str | Path) -> pd.DataFrame:
    """Every cell of the build in ``root`` (a profile's results folder) with its runs, seeds and
    CPU seconds (:func:`cell_costs`) and the claims that read it (:func:`readers`), the dearest
    first: the cells no claim reads are the first a budget can spend elsewhere."""
    costs = cell_costs(run_costs(root))
    keys = [CellKey(*row) for row in costs[list(FIELDS)].itertuples(index=False)]
    read = readers(root, keys)
    return costs.assign(claims=[", ".join(read[k]) for k in keys],
                        n_claims=[len(read[k]) for k in keys])

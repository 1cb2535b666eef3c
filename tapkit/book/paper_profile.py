"""The committed paper-profile results (``results/paper/``, trained on a GPU) set beside the
paper's own numbers, for the MNIST and the speed-and-memory pages.

The quick profile's pages run on a CPU with embedded digits and small images; the numbers to set
beside the paper's come from the paper profile, run on a GPU lease and committed under
``results/paper/``: its tables (``tables/mnist_gt*``, ``tables/speed_memory*``) and the lease's
record ``gpu_provenance.json`` (the device, the torch version, the wall seconds of each stage and,
for a lease that ended before every case trained, which cases are missing and why).

Every function here takes ``root``, the results folder of the profile the page runs
(``results/<profile>``; the committed tables are read from its sibling ``paper/``), reads the
committed files and returns text or a table for the page to display; none of them displays
anything or writes a file. A missing file gives a table that still shows the paper's numbers,
with the reason ours are missing in our column: a page built before any lease, or after a lease
that trained only part of a setting, never shows NaN or None where a number should be.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from ..experiments.setting1 import cases
from ..experiments.paper_tables import paper_table1
from ..methods import comparators, get_method, is_xs, no_xs, proposed_method
from ..models import list_models, paper_architecture
from .labels import interval_text, label
from .report import SPLITS, paper_values

PROVENANCE = "gpu_provenance.json"
# our architecture -> the column of the paper's Table 1 it is compared with
PAPER_ARCH = {n: paper_architecture(n) for n in list_models() if paper_architecture(n)}
SPEED_METHODS = (no_xs(), proposed_method(), *comparators(), "none_again")
TABLE1_BATCH, TABLE1_PX = 16, 224  # the paper's Table 1: batches of 16 images of 224 px
PAPER_GPU = "RTX 3080 (10 GB)"      # the paper's GPU (its experimental-setup paragraph)
STAGE_NAMES = {"setting1": "Setting 1 (Decoy-MNIST)", "table1": "Table 1 (speed and memory)"}
NO_RESULTS = "no paper-profile results are committed yet (`results/paper/`)"
NOT_COMMITTED = "nothing committed"  # the short reason in a table's cell
CELL_WIDTH = 50  # pandas' display.max_colwidth: a longer cell is cut with "..." on the page


def _paper_dir(root: str | Path) -> Path:
    return Path(root).parent / "paper"


def _json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def _device(text: str) -> str:
    """``cuda: NVIDIA H100 80GB HBM3`` -> ``NVIDIA H100 80GB HBM3``."""
    return re.sub(r"^\w+:\s*", "", text or "").strip() or "an unrecorded device"


def _num(value: Any) -> float | None:
    """A finite float, else None (NaN, empty, missing)."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return None if out != out else out


def provenance(root: str | Path) -> dict[str, Any]:
    """The committed lease record ``results/paper/gpu_provenance.json`` beside ``root``, or an
    empty dict when none is committed."""
    return _json(_paper_dir(root) / PROVENANCE)


def wall_seconds(record: Mapping[str, Any], stage: str) -> list[tuple[float, str]]:
    """Every wall time of ``stage`` (``table1``, ``setting1``) in a lease ``record``, in the order
    the leases wrote them, each with the qualifier its key carries: ``wall_s`` may name a stage a
    lease did not finish as ``setting1_partial``, which gives ``(478.0, "partial")``; a stage
    that several leases added to has one entry per lease; ``[]`` when none is recorded."""
    return [(_num(value), key[len(stage):].lstrip("_").replace("_", " "))
            for key, value in (record.get("wall_s") or {}).items()
            if key == stage or key.startswith(stage + "_")]


def _commits(detail: Mapping[str, Any], prov: Mapping[str, Any]) -> str:
    """The commits a stage's runs were trained at, as its table's label names them (``tapkit
    0.1.0 (8afbcae, 8c05fe1)``: runs from several leases), else the lease's own commit."""
    found = re.search(r"tapkit \S+ \(([^)]*)\)", str(detail.get("label") or ""))
    return found.group(1) if found else str(prov.get("git_commit") or "")[:7]


def provenance_line(root: str | Path, stage: str) -> str:
    """One line that labels the committed results of ``stage`` (``setting1`` or ``table1``):
    the GPU, the torch version, tapkit and the commits its runs were trained at, and the stage's
    wall time on each lease that ran it, so that a reader sees where the numbers beside the
    paper's were measured and for how long. The stage's own lease record where it has one (a
    later lease may have run only the other stage). Says so when no lease record is committed."""
    record = provenance(root)
    if not record:
        return f"*Committed paper-profile results: {NO_RESULTS}.*"
    detail = record.get(stage) or {}
    prov = detail.get("provenance") or record.get("provenance") or {}
    commit = _commits(detail, prov)
    parts = [f"GPU: {_device(prov.get('device', ''))}",
             f"torch {prov.get('torch', 'not recorded')}",
             f"tapkit {prov.get('tapkit', '?')}" + (f" ({commit})" if commit else "")]
    walls = wall_seconds(record, stage)
    name = STAGE_NAMES.get(stage, stage)
    if not walls:
        parts.append(f"{name}: wall time not recorded")
    elif len(walls) == 1:
        seconds, how = walls[0]
        how = "partial: not every case finished" if how == "partial" else how
        parts.append(f"{name}: {seconds:.0f} s wall time" + (f" ({how})" if how else ""))
    else:
        parts.append(f"{name}: {len(walls)} leases of "  # the record's keys keep no order
                     + ", ".join(f"{seconds:.0f}" for seconds, _ in sorted(walls))
                     + " s wall time")
    if stage == "setting1" and detail.get("runs"):
        parts.append(f"{detail['runs']} runs stored")
    if stage == "table1":
        parts.append(released_losses(root))
    return "*Committed paper-profile results — " + " · ".join(parts) + "*"


def released_losses(root: str | Path) -> str:
    """Which forms of the losses the committed Table 1 measured, from its options (e.g. ``RBR
    variant=released``): the authors' released code differs from the paper's equations, and a
    speed comparison holds only for the form that ran."""
    meta = _json(_paper_dir(root) / "tables" / "speed_memory.json")
    options = meta.get("options") or {}
    if not options:
        return "loss options not recorded"
    forms = "; ".join(f"{label(m)} "
                      + ", ".join(f"{k}={v}" for k, v in opts.items())
                      for m, opts in options.items())
    released = all(opts.get("variant", opts.get("scale", "released")) == "released"
                   for m, opts in options.items() if is_xs(m) and get_method(m).input_grad)
    return ("the authors' released losses" if released else "losses") + f" ({forms})"


def _lease_clause(lease: str, case: str) -> str:
    """The first clause of the lease text (split at ``.``, ``;`` or ``:``) that names ``case``
    (by its label, e.g. ``RRR``), without its end mark; empty when none does."""
    name = label(case)
    for clause in re.split(r"(?<=[.;:])\s+", lease or ""):
        if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", clause):
            return clause.rstrip(".;: ")
    return ""


def not_run_reason(root: str | Path, case: str, short: bool = False) -> str:
    """Why ``case`` has no committed Setting-1 result: the table's ``not_run`` entry and the
    lease's clause about it (``gpu_provenance.json``'s ``setting1.lease``), else that nothing
    is committed. ``short``: only the ``not_run`` entry (else the clause), for a table cell, which
    the page cuts after :data:`CELL_WIDTH` characters; the lease's whole account goes under the
    table (:func:`mnist_lease_note`)."""
    meta = _json(_paper_dir(root) / "tables" / "mnist_gt.json")
    setting = provenance(root).get("setting1") or {}
    why = (meta.get("not_run") or {}).get(case) or (setting.get("not_run") or {}).get(case)
    clause = _lease_clause(setting.get("lease", ""), case)
    if not meta:
        return NOT_COMMITTED if short else NO_RESULTS
    if short:
        return why or clause or "no run of it is stored"
    if why and clause:
        return f"{why}: {clause}"
    return why or clause or "no run of it is stored"


def _pm(mean: float, std: float | None, digits: int = 3) -> str:
    return f"{mean:.{digits}f}" + (f" ± {std:.{digits}f}" if std is not None else "")


def mnist_beside_paper(root: str | Path) -> pd.DataFrame:
    """Setting 1 on Decoy-MNIST (the paper's appendix table): one row per case (Base, No XS,
    RRR, RBR, TAP), and per test split our committed GPU result (mean ± std over its seeds) beside
    the paper's (mean ± std over five seeds). A case the lease did not train says
    ``not run here (<why>)`` in our column (the short reason of :func:`not_run_reason`; the lease's
    account is :func:`mnist_lease_note`) and keeps the paper's number; a case with fewer seeds
    than the profile's says how many it has."""
    tables = _paper_dir(root) / "tables"
    ours = pd.read_csv(tables / "mnist_gt.csv") if (tables / "mnist_gt.csv").exists() else None
    seeds = len((_json(tables / "mnist_gt.json").get("settings") or {}).get("seeds") or [])
    paper = paper_values("gt_results").query("dataset == 'MNIST'")
    rows = {}
    for case in cases():
        row = {}
        for split in SPLITS:
            mine = (ours[(ours["case"] == case) & (ours["split"] == split)]
                    if ours is not None else pd.DataFrame())
            mean = _num(mine["mean"].iloc[0]) if not mine.empty else None
            if mean is None:
                why = not_run_reason(root, case, short=True)
                cell = (f"not run here ({why})" if mine.empty else
                        f"did not converge ({int(mine['dnc_runs'].iloc[0])} runs)")
            else:
                count = int(mine["count"].iloc[0])
                cell = _pm(mean, _num(mine["std"].iloc[0]))
                if seeds and count != seeds:
                    cell += f" ({count} of {seeds} seeds)"
            row[f"{split} (ours, GPU)"] = cell
            row[f"{split} (paper)"] = _paper_cell(
                paper[(paper["method"] == case) & (paper["split"] == split)])
        rows[label(case)] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "case"
    return table


def _paper_cell(theirs: pd.DataFrame) -> str:
    """The paper's ``mean ± std`` of one selected row, its status (``DNC``) when it gives no
    number, ``–`` when the paper has no such cell."""
    if theirs.empty:
        return "–"
    mean = _num(theirs["mean"].iloc[0])
    return (_pm(mean, _num(theirs["std"].iloc[0])) if mean is not None
            else str(theirs["status"].iloc[0]).upper())


def mnist_delta(root: str | Path, case: str = no_xs()) -> dict[str, float | None]:
    """Δ-accuracy (permuted − contaminated) of ``case``, ours from the committed summary and the
    paper's from its appendix table: the drop when the decoy no longer matches the label, the
    paper's measure of how much a model relies on it (No XS: 0.819 − 0.995 = −0.176)."""
    def delta(frame: pd.DataFrame, key: str) -> float | None:
        sel = frame[frame[key] == case].set_index("split")["mean"]
        if not {"permuted", "contaminated"} <= set(sel.index):
            return None
        perm, cont = _num(sel["permuted"]), _num(sel["contaminated"])
        return None if perm is None or cont is None else perm - cont

    table = _paper_dir(root) / "tables" / "mnist_gt.csv"
    ours = delta(pd.read_csv(table), "case") if table.exists() else None
    paper = delta(paper_values("gt_results").query("dataset == 'MNIST'"), "method")
    return {"ours": ours, "paper": paper}


def mnist_delta_line(root: str | Path, case: str = no_xs()) -> str:
    """:func:`mnist_delta` as a sentence for the page, with the per-seed spread of our paired
    Δ when the committed per-run table is there."""
    d = mnist_delta(root, case)
    name = label(case)
    paper = _signed(d["paper"]) if d["paper"] is not None else "not given"
    if d["ours"] is None:
        return (f"Δ-accuracy (permuted − contaminated) of {name}: the paper's {paper}; ours "
                f"not run here ({not_run_reason(root, case)}).")
    spread = ""
    runs = _paper_dir(root) / "tables" / "mnist_gt_runs.csv"
    if runs.exists():
        mine = pd.read_csv(runs).query("case == @case and status == 'ok'")
        if len(mine) > 1:
            per_seed = mine["permuted"] - mine["contaminated"]
            spread = (f" (over {len(mine)} seeds: std {per_seed.std():.3f}, from "
                      f"{_signed(per_seed.min())} to {_signed(per_seed.max())})")
    return (f"Δ-accuracy (permuted − contaminated) of {name}: ours {_signed(d['ours'])}{spread} "
            f"on the GPU, the paper's {paper}.")


def _signed(value: float) -> str:
    """``-0.176`` as ``−0.176`` (a minus sign, as the paper prints it), ``+0.010`` with its plus."""
    return f"{round(value, 3) + 0.0:+.3f}".replace("-", "−")  # + 0.0: no "−0.000"


def mnist_lease_note(root: str | Path) -> str:
    """The lease's own account of Setting 1 (``setting1.lease``), for the cases it left out; a
    line saying every case ran (or that nothing is committed) otherwise, so that a page never
    shows an empty note."""
    setting = provenance(root).get("setting1") or {}
    meta = _json(_paper_dir(root) / "tables" / "mnist_gt.json")
    missing = meta.get("not_run") or setting.get("not_run") or {}
    if not missing:
        return ("Every case of the table ran on the GPU." if meta else
                "No GPU lease has committed Setting 1 yet.")
    order = cases()
    names = ", ".join(label(c) for c in sorted(
        missing, key=lambda c: order.index(c) if c in order else len(order)))
    lease = setting.get("lease")
    return f"Not run on the GPU: {names}." + (f" The lease's record: {lease}" if lease else "")


def _arch_label(model: str, row: Mapping[str, Any] | None) -> str:
    """A person's name for ``model``, with its batch and image size when they are not Table 1's
    (batch 16 of 224 px)."""
    name = label(model)
    if row:
        batch, px = row.get("batch_size"), row.get("image_size")
        if batch and px and (int(batch), int(px)) != (TABLE1_BATCH, TABLE1_PX):
            name += f" (batch {int(batch)}, {int(px)} px)"
    return name


def _interval(mean: float, lo: float | None, hi: float | None, one: str) -> str:
    return f"{mean:.3f} {interval_text(lo, hi, 3, missing=f'({one})')}"


def speed_beside_paper(root: str | Path) -> pd.DataFrame:
    """The committed Table 1 (speed and memory) as architecture × method: our GPU measurement
    as ratios to No XS on the same architecture (it/s with its 95% interval over paired rounds,
    peak memory with its interval over passes, or "one pass") beside the paper's ratios computed
    from its Table 1 (its it/s and GB in parentheses), and our peak memory in MB. Ratios compare
    machines that absolute it/s cannot: the paper ran an RTX 3080, ours an H100. With nothing
    committed, the paper's architectures and ratios are shown with ours "not run here"."""
    tables = _paper_dir(root) / "tables"
    committed = (tables / "speed_memory.csv").exists()
    ours = pd.read_csv(tables / "speed_memory.csv") if committed else None
    stored = {(r.get("model"), r.get("method")): r
              for r in _json(tables / "speed_memory.json").get("rows") or []}
    paper = paper_table1()
    models = (list(dict.fromkeys(ours["model"])) if committed
              else list(dict.fromkeys(paper["architecture"])))
    order = {m: i for i, m in enumerate(SPEED_METHODS)}
    rows = []
    for model in models:
        arch = PAPER_ARCH.get(model)
        p = paper[paper["architecture"] == arch] if arch else paper.iloc[0:0]

        def theirs(method: str, metric: str) -> tuple[float | None, str]:
            sel = p[(p["method"] == method) & (p["metric"] == metric)]
            if sel.empty:
                return None, ""
            return _num(sel["mean"].iloc[0]), sel["status"].iloc[0]

        mine = ours[ours["model"] == model] if committed else None
        methods = list(mine["method"]) if committed else list(SPEED_METHODS[:-1])
        for method in sorted(dict.fromkeys(methods), key=lambda m: order.get(m, len(order))):
            row = {"architecture": _arch_label(model, stored.get((model, method))),
                   "method": label(method)}
            row.update(_our_ratios(mine[mine["method"] == method].iloc[0]) if committed else
                       {c: f"not run here ({NOT_COMMITTED})" for c in OUR_SPEED_COLUMNS})
            for metric, col, unit in (("it_per_s", "it/s ÷ No XS (paper)", "it/s"),
                                      ("mem_gb", "memory ÷ No XS (paper)", "GB")):
                value, status = theirs(method, metric)
                base, _ = theirs(no_xs(), metric)
                if arch is None:
                    row[col] = "not in the paper's Table 1"
                elif method == "none_again":
                    row[col] = "–"
                elif status == "oom":
                    row[col] = f"OOM on the paper's {PAPER_GPU}"
                elif value is None or base is None:
                    row[col] = "–"
                elif method == no_xs():
                    row[col] = f"1 (reference: {value:.1f} {unit})"
                else:
                    row[col] = f"{value / base:.3f} ({value:.1f} {unit})"
            rows.append(row)
    return pd.DataFrame(rows).set_index(["architecture", "method"])


OUR_SPEED_COLUMNS = ("it/s ÷ No XS (ours, 95% interval)", "memory ÷ No XS (ours, 95% interval)",
                     "peak memory MB (ours)")


def _our_ratios(r: pd.Series) -> dict[str, str]:
    """Our three cells of one committed Table 1 row: the speed and memory ratios to No XS with
    their intervals (No XS itself: the reference, with its it/s and MB) and the peak MB."""
    speed, mem, peak = OUR_SPEED_COLUMNS
    if r["status"] != "ok" or _num(r["speed_ratio"]) is None:
        return {speed: f"{r['status']} on the GPU", mem: f"{r['status']} on the GPU", peak: "–"}
    if r["method"] == no_xs():
        return {speed: f"1 (reference: {float(r['it_per_s']):.1f} it/s)",
                mem: f"1 (reference: {float(r['peak_mem_mb']):.0f} MB)",
                peak: f"{float(r['peak_mem_mb']):.0f}"}
    return {speed: _interval(float(r["speed_ratio"]), _num(r["speed_ratio_lo"]),
                             _num(r["speed_ratio_hi"]), "one round"),
            mem: _interval(float(r["mem_ratio"]), _num(r["mem_ratio_lo"]), _num(r["mem_ratio_hi"]),
                           "one pass"),
            peak: f"{float(r['peak_mem_mb']):.0f}"}


def paper_oom() -> tuple[str, str]:
    """``(architecture, method)`` of the cell the paper's Table 1 marks out of memory (its
    ``status`` ``oom``: RBR on DenseNet-121)."""
    oom = paper_table1().query("status == 'oom'")
    return str(oom["architecture"].iloc[0]), str(oom["method"].iloc[0])


def densenet_rbr_line(root: str | Path) -> str:
    """RBR on DenseNet-121 (the cell the paper's Table 1 marks out of memory, :func:`paper_oom`):
    the paper reports it out of memory at batch 16 of 224 px on its 10 GB GPU; this says what the
    committed GPU run did (its device, peak memory and speed), so the cell the paper left empty
    has an answer, with its caveat: our peak is the memory PyTorch allocated, not the paper's
    measure (its No XS figure is set beside ours), so it does not say whether RBR would fit the
    paper's card."""
    arch, method = paper_oom()
    cell = f"{label(method)} on {label(arch)}"
    tables = _paper_dir(root) / "tables"
    if not (tables / "speed_memory.csv").exists():
        return f"{cell}: {NO_RESULTS}."
    ours = pd.read_csv(tables / "speed_memory.csv")
    dense = ours[ours["model"] == arch]
    sel = dense[dense["method"] == method]
    device = _device((_json(tables / "speed_memory.json").get("provenance") or {}).get("device")
                     or (provenance(root).get("provenance") or {}).get("device", ""))
    paper = (f"The paper marks {cell} out of memory (OOM) on its {PAPER_GPU} at "
             f"batch {TABLE1_BATCH} of {TABLE1_PX} px")
    if sel.empty:
        return f"{paper}; the committed run did not measure it."
    r = sel.iloc[0]
    if r["status"] != "ok":
        return f"{paper}; on the {device} it was also **{r['status']}**."
    mem = float(r["peak_mem_mb"])
    text = (f"{paper}. Ours ran on the {device}: it **fits**, with a peak of {mem:.0f} MB "
            f"allocated by PyTorch ({mem / 1024:.1f} GiB, {float(r['mem_ratio']):.2f}× No XS), at "
            f"{float(r['it_per_s']):.2f} it/s ({float(r['speed_ratio']):.3f} of No XS's speed).")
    reference = no_xs()  # the No-XS row's method
    base = dense[dense["method"] == reference]
    paper_base = paper_table1().query(
        "architecture == @arch and method == @reference and metric == 'mem_gb'")
    if not base.empty and not paper_base.empty:
        theirs, mine = float(paper_base["mean"].iloc[0]), float(base["peak_mem_mb"].iloc[0])
        text += (f" PyTorch's peak allocation is not the paper's measure (No XS: the paper's "
                 f"{theirs:.1f} GB, ours {mine:.0f} MB), so this does not say whether "
                 f"{label(method)} would fit the paper's card.")
    return text

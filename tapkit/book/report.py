"""Helpers the notebooks share: paper values, tidy summaries, tables and figures written with
their provenance, and the label that says which profile and hardware made a result."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from .. import results
from ..experiments.cells import Annotation, from_record, tau_text, to_record
from ..methods import no_xs
from ..metrics import EXPERIMENT_METRICS, TaskMetric, tag_reliance
from ..results import write_atomic
from .labels import label, lam_text
from .origin import DataOrigin
from .table_display import footnote
from .thresholds import MARGIN

SPLITS = ("contaminated", "permuted", "clean")
NOT_RUN_CELL = "not run"  # our cell of a case the profile leaves out (its reason a footnote)
_WRITTEN: list[Path] = []  # the tables this process wrote, in order (a chapter's kernel: its own)


def write_table(df: pd.DataFrame, root: str | Path, name: str,
                provenance: dict | None = None) -> Path:
    """``root/tables/<name>.csv`` (and its provenance ``<name>.json``), written atomically by
    :func:`tapkit.results.write_table` and remembered: the tables a chapter's kernel wrote are the
    page's downloads (:func:`written_tables`, :meth:`.chapter.Chapter.finish`)."""
    path = results.write_table(df, root, name, provenance)
    _WRITTEN.append(path)
    return path


def write_cells(df: pd.DataFrame, root: str | Path, name: str,
                provenance: dict | None = None) -> Path:
    """:func:`write_table` of a table labelled by cells (:func:`.cells.to_record`: the
    annotation as its name, τ a number, empty where none applies); :func:`read_cells` reads it
    back typed."""
    return write_table(to_record(df), root, name, provenance)


def read_cells(path: str | Path) -> pd.DataFrame:
    """A table :func:`write_cells` wrote, typed again (:func:`.cells.from_record`): the annotation
    as :class:`tapkit.experiments.cells.Annotation`, τ a float (NaN where none applies)."""
    return from_record(pd.read_csv(path))


def printable(summary: pd.DataFrame) -> pd.DataFrame:
    """``summary`` with its annotation as its name and τ as the page prints it (``"any"`` where
    none applies, :func:`tapkit.experiments.cells.tau_text`), to pivot and show; the columns it
    lacks stay as they are."""
    out = summary.copy()
    if "annotation" in out:
        out["annotation"] = out["annotation"].map(lambda a: Annotation(a).value)
    if "tau" in out:
        out["tau"] = out["tau"].map(tau_text)
    return out


NO_TEACHER = "no teacher"  # the teacher of No XS's row in a distillation table


def teacher_name(annotation: Annotation | str) -> str:
    """A distillation table's ``teacher`` column: the teacher's annotation name,
    :data:`NO_TEACHER` for No XS (as the paper's distillation table names its rows)."""
    annotation = Annotation(annotation)
    return NO_TEACHER if annotation is Annotation.NONE else annotation.value


def written_tables() -> list[Path]:
    """The tables :func:`write_table` wrote in this process, each once, in the order written."""
    return list(dict.fromkeys(_WRITTEN))


def repo_root(start: str | Path = ".") -> Path:
    """The nearest folder at or above ``start`` holding the book (``_toc.yml``) and the package
    (``tapkit/``): notebooks run in ``notebooks/``, tests and the CLI in the repository root."""
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").is_file() and (folder / "tapkit").is_dir():
            return folder
    raise FileNotFoundError(f"no tapkit repository (_toc.yml and tapkit/) above {here}")


def paper_values(name: str) -> pd.DataFrame:
    """A table transcribed from the paper (package data ``tapkit/book/paper_values/<name>.csv``,
    see its README). The λ tables and Table 1 are the experiments layer's
    (:mod:`tapkit.experiments.paper_tables`)."""
    with (resources.files(__package__) / "paper_values" / f"{name}.csv").open() as fh:
        return pd.read_csv(fh)


def tidy(runs: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Long format (one row per run and split) from :func:`tapkit.experiments.executors.run_many`'s frame."""
    value_cols = [s for s in SPLITS if s in runs]
    out = runs.melt(id_vars=list(keys) + ["metric", "status", "seed"], value_vars=value_cols,
                    var_name="split", value_name="value")
    return out


def did_not_converge(failed: int, runs: int) -> bool:
    """The paper's rule for a cell (appendix, LaTeX line 916, and the tables' captions: "did not
    converge (DNC) at least three times"; "we report averages and standard deviations of the
    converged runs if at least three runs converged"): DNC when more than half of its ``runs``
    failed, 3 or more of 5; a cell with no run at all is not DNC (it is missing)."""
    return runs > 0 and 2 * failed > runs


def summarise(runs: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Mean and std over the converged seeds per ``keys`` and split, with the count of runs that
    did not converge (``dnc_runs``) and whether the cell is DNC by the paper's rule
    (``dnc``, :func:`did_not_converge`), as the paper's tables report them: a DNC cell's mean and
    std are NaN (:func:`fmt` prints ``DNC``), the others average their converged runs. A key may
    be missing (NaN): τ of a run that takes none keeps its row."""
    long = tidy(runs, keys)
    grouped = long.groupby(list(keys) + ["split"], sort=False, dropna=False)
    out = grouped["value"].agg(["mean", "std", "count"]).reset_index()
    out["dnc_runs"] = grouped["status"].agg(lambda s: int((s != "ok").sum())).values
    total = grouped["status"].size().values
    out["dnc"] = [did_not_converge(f, n) for f, n in zip(out["dnc_runs"], total)]
    out.loc[out["dnc"], ["mean", "std"]] = float("nan")
    return out


def delta_std(runs: pd.DataFrame, keys: Sequence[str]) -> pd.Series:
    """Per ``keys``, the std over converged seeds of each run's Δ (permuted − contaminated):
    the error bar of a figure's Δ panel. It is not derivable from the splits' stds (a seed that
    scores higher on both moves Δ little), so it is computed run by run; NaN for one seed."""
    ok = runs[runs["status"] == "ok"]
    delta = (ok["permuted"] - ok["contaminated"]).rename("delta")
    return pd.concat([ok[list(keys)], delta], axis=1).groupby(
        list(keys), sort=False, dropna=False)["delta"].std()  # τ NaN: a run that takes none


def interval_table(runs: pd.DataFrame, cases: Sequence[str]) -> pd.DataFrame:
    """Per case (rows, in ``cases`` order) and split: the mean over converged seeds with its 95%
    Student-t interval (:func:`tapkit.seedstats.mean_ci`); ``DNC`` where more than half of the
    case's runs did not converge (:func:`did_not_converge`, the paper's rule)."""
    from ..seedstats import mean_ci

    ok = runs[runs["status"] == "ok"]
    cells = {}
    for case in cases:
        n, converged = int((runs["case"] == case).sum()), int((ok["case"] == case).sum())
        dnc = did_not_converge(n - converged, n) or converged == 0
        cells[case] = {split: NOT_RUN_CELL if n == 0 else "DNC" if dnc
                       else mean_ci(ok.loc[ok["case"] == case, split]).text()
                       for split in SPLITS}
    return pd.DataFrame.from_dict(cells, orient="index")


def fmt(mean: float, std: float | None = None, digits: int = 3) -> str:
    """``0.988 (0.001)`` as in the paper; ``DNC`` for a missing mean."""
    if mean is None or pd.isna(mean):
        return "DNC"
    if std is None or pd.isna(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ({std:.{digits}f})"


def _shown(labels: Mapping | Callable[[str], str] | None) -> Callable[[str], str]:
    """A column's values as a table shows them: through ``labels``, a mapping (a value it lacks
    as it is) or a function such as :func:`.labels.label`; None: as they are."""
    if labels is None:
        return lambda v: v
    if callable(labels):
        return labels
    return lambda v: labels.get(v, v)


def mean_std_table(part: pd.DataFrame,
                   index: Mapping[str, tuple[str, Mapping | Callable | None]],
                   sort: bool = False) -> pd.DataFrame:
    """A summary (:func:`summarise`: ``mean``, ``std`` per ``split``) as the paper prints its
    tables: ``mean (std)`` (:func:`fmt`) per split in :data:`SPLITS` order, one row per
    ``index`` entry, ``{row name: (column, labels)}``, the column's values shown through
    ``labels`` (a mapping, a function such as :func:`.labels.label`, or None). Rows in the
    summary's order, or sorted by their labels with ``sort``."""
    cells = part.assign(value=[fmt(m, s) for m, s in zip(part["mean"], part["std"])],
                        **{name: part[col].map(_shown(labels))
                           for name, (col, labels) in index.items()})
    table = cells.pivot_table(index=list(index), columns="split", values="value",
                              aggfunc="first", sort=sort)
    return table[[s for s in SPLITS if s in table.columns]]


def beside(ours: pd.DataFrame, paper: pd.DataFrame, on: Sequence[str]) -> pd.DataFrame:
    """Paper value beside ours with the difference (ours - paper), joined on ``on``."""
    left = ours.rename(columns={"mean": "ours", "std": "ours_std"})
    right = paper[list(on) + ["mean", "std"]].rename(columns={"mean": "paper", "std": "paper_std"})
    merged = left.merge(right, on=list(on), how="left")
    merged["paper"] = pd.to_numeric(merged["paper"], errors="coerce")
    merged["difference"] = merged["ours"] - merged["paper"]
    return merged


def side_by_side(both: pd.DataFrame, index: str | Sequence[str],
                 order: Sequence | None = None) -> pd.DataFrame:
    """The "ours beside the paper" table every chapter prints: a :func:`beside` frame as one row
    per ``index`` (a column, or several for a row label made of them) and the columns
    ``contaminated (ours)``, ``contaminated (paper)``, ``permuted (ours)``, ... in
    :data:`SPLITS` order, each cell ``mean (std)`` as the paper prints them (:func:`fmt`: ``DNC``
    where none of our runs converged, ``–`` where the paper gives no value). With ``order``
    (index values, tuples for several columns) the rows are those, in that order; a value with no
    row is a row of NaN, for the caller to fill (e.g. :func:`.medical_notes.mark_left_out`).

    One function for the MNIST, teachers and medical chapters, so that their tables read alike."""
    table = both.assign(ours=[fmt(m, sd) for m, sd in zip(both.ours, both.ours_std)],
                        paper=[fmt(m, sd) if not pd.isna(m) else "–"
                               for m, sd in zip(both.paper, both.paper_std)])
    index = index if isinstance(index, str) else list(index)
    table = table.pivot(index=index, columns="split", values=["ours", "paper"])
    table.columns = [f"{split} ({who})" for who, split in table.columns]
    table = table[[f"{sp} ({who})" for sp in SPLITS for who in ("ours", "paper")]]
    return table.reindex(order) if order is not None else table


def mark_row_not_run(table: pd.DataFrame, key, why: str, paper: Mapping[str, str]) -> None:
    """Row ``key`` of a :func:`side_by_side` table (``table``) as a cell the profile leaves out:
    *not run* in our columns with the mark of ``why``, a footnote of the table
    (:func:`.table_display.footnote`: ``not run [1]``), and the paper's cell text per split
    (``paper``; "–" where it has none) where no row of ours brought it, so that the paper's
    number stays visible where ours did not run."""
    cell = f"{NOT_RUN_CELL} {footnote(table, why)}"
    table.loc[key, [c for c in table.columns if c.endswith(" (ours)")]] = cell
    for col in [c for c in table.columns if c.endswith(" (paper)")]:
        if pd.isna(table.loc[key, col]):
            table.loc[key, col] = paper.get(col.removesuffix(" (paper)"), "–")


def mark_cells_not_run(table: pd.DataFrame, left: Mapping[tuple[str, str], str],
                       row_of: Callable[[str, str], Any],
                       paper: Mapping[tuple[str, str], Mapping[str, str]] | None = None
                       ) -> pd.DataFrame:
    """A :func:`side_by_side` table with the cells this profile leaves out (``left``:
    ``{(model, case): why}``) marked *not run*, each reason a footnote
    (:func:`mark_row_not_run`): ``row_of(model, case)`` is the cell's row in ``table`` (None, or
    a row the table lacks: not shown there), ``paper[model, case]`` its paper cells per split.
    Nothing left out: ``table`` itself."""
    if not left:
        return table
    out = table.copy()
    for (model, case), why in left.items():
        row = row_of(model, case)
        if row is not None and row in out.index:
            mark_row_not_run(out, row, why, (paper or {}).get((model, case), {}))
    return out


def mark_not_run(table: pd.DataFrame, left: Mapping[tuple[str, str], str],
                 paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """A :func:`side_by_side` table indexed by case with the cases this profile leaves out
    (``left``: ``{(model, case): why}``, e.g. :func:`.plans.mnist_left_out`) marked
    (:func:`mark_cells_not_run`), the paper's cells from ``paper`` (``case``, ``split``,
    ``mean``, ``std``)."""
    theirs: dict[str, dict[str, str]] = {}
    for r in (paper.itertuples() if paper is not None else ()):
        theirs.setdefault(r.case, {})[r.split] = fmt(r.mean, r.std)
    return mark_cells_not_run(table, left, lambda _model, case: case,
                              {key: theirs.get(key[1], {}) for key in left})


def provenance_label(runs: pd.DataFrame, profile: str) -> str:
    """``profile quick · cpu: x86_64, 2 threads · tapkit 0.1.0 (abc1234) · torch 2.14.1``."""
    def one(col: str) -> str:
        vals = sorted(set(runs[col].astype(str))) if col in runs else ["unknown"]
        return ", ".join(vals)

    commit = one("prov_git_commit")
    commit = ", ".join(c[:7] for c in commit.split(", "))
    return (f"profile {profile} · {one('prov_device')} · tapkit {one('prov_tapkit')} ({commit}) · "
            f"torch {one('prov_torch')}")


DPI = 120
"""Resolution of the book's figures."""
MAX_WIDTH_PX = 1600
"""No saved figure is wider than this: a wider PNG shrinks its plots on the page (the Table-1
figure, whose 300-character provenance title made it 1,965 px wide, showed its plots at ~250 px)."""
MIN_FONT_PT = 9
"""No text of a saved figure is smaller than this."""


def _lines_fit(text, renderer, width: float) -> None:
    """Wrap ``text`` (a :class:`matplotlib.text.Text`) with :mod:`textwrap` until no line of it is
    wider than ``width`` pixels; its words are kept."""
    import textwrap

    for _ in range(6):
        extent = text.get_window_extent(renderer).width
        lines = text.get_text().split("\n")
        longest = max(len(line) for line in lines)
        if extent <= width or longest <= 12:
            return
        chars = max(12, int(longest * 0.97 * width / extent))
        text.set_text("\n".join(textwrap.fill(line, chars, break_on_hyphens=False)
                                for line in lines))


def fit_text(fig, min_pt: float = MIN_FONT_PT) -> None:
    """Make ``fig``'s text read at page width: every visible text at least ``min_pt`` points, and
    each line of it no wider than the figure (a long title, e.g. with a provenance label, is
    wrapped to the figure's width). Figure-level text that hangs from the top (a suptitle) keeps
    its bottom edge and grows upwards, so that its new lines do not cover the plots. Call it
    before ``tight_layout`` to give the wrapped lines room; :func:`save_figure` calls it again."""
    from matplotlib.text import Text

    for ax in fig.axes:
        for axis in ("x", "y"):
            ticks = getattr(ax, f"{axis}axis").get_ticklabels()
            if ticks and min(t.get_fontsize() for t in ticks) < min_pt:
                ax.tick_params(axis=axis, labelsize=min_pt)
    renderer = fig.canvas.get_renderer()
    width = fig.bbox.width
    hanging = [t for t in [getattr(fig, "_suptitle", None), *fig.texts]
               if t is not None and t.get_va() == "top"]
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        if text.get_fontsize() < min_pt:
            text.set_fontsize(min_pt)
        if text.get_rotation() % 180 != 0:
            continue
        before = text.get_window_extent(renderer)
        _lines_fit(text, renderer, width)
        if text in hanging and text.get_window_extent(renderer).height > before.height:
            bottom = fig.transFigure.inverted().transform((0, before.y0))[1]
            text.set_va("bottom")
            text.set_y(bottom)


def titled(fig, title: str, fontsize: float = MIN_FONT_PT) -> None:
    """``fig.suptitle(title)`` wrapped to the figure's width (:func:`fit_text`), before a
    ``tight_layout`` that leaves it room."""
    text = fig.suptitle(title, fontsize=max(fontsize, MIN_FONT_PT))
    _lines_fit(text, fig.canvas.get_renderer(), fig.bbox.width)


def save_figure(fig, root: str | Path, name: str) -> Path:
    """``root/figures/<name>.png``, written atomically, at most :data:`MAX_WIDTH_PX` wide with its
    text at least :data:`MIN_FONT_PT` points (:func:`fit_text`): a wider figure is saved at a
    lower resolution. Provenance belongs in the page's caption, not in the figure; a long title
    that still carries one is wrapped to the figure's width."""
    import io

    fit_text(fig)
    renderer = fig.canvas.get_renderer()
    pad = 0.1  # savefig's pad_inches
    inches = fig.get_tightbbox(renderer).width + 2 * pad
    dpi = min(DPI, int((MAX_WIDTH_PX - 4) / inches))  # - 4: the bbox's rounding to pixels
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", pad_inches=pad)
    path = Path(root) / "figures" / f"{name}.png"
    write_atomic(path, buf.getvalue())
    return path


def write_comparison(both: pd.DataFrame, root: str | Path, name: str, label: str,
                     row_cols: Sequence[str], origin: DataOrigin = DataOrigin.PAPER) -> Path:
    """Record a chapter's paper-vs-ours table (from :func:`beside`) for the reproduction report:
    ``root/tables/compare_<name>.csv`` with columns table, row, split, ours, paper, difference,
    the label of the profile and hardware that produced ours, and the ``origin`` of its data
    (:class:`.origin.DataOrigin`: the paper's, or a stand-in that the report leaves out)."""
    out = pd.DataFrame({
        "table": name,
        "row": both[list(row_cols)].astype(str).agg(" / ".join, axis=1),
        "split": both["split"] if "split" in both else "",
        "ours": both["ours"], "paper": both["paper"], "difference": both["difference"],
        "produced_by": label, "origin": origin.value,
    })
    return write_table(out, root, f"compare_{name}")


def paper_data_comparisons(root: str | Path) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The paper-vs-ours tables under ``root/tables/compare_*.csv`` (:func:`write_comparison`)
    split by their data: ``({name: table}`` measured on the paper's data sets, ``[names]``
    measured on a stand-in``)``, told apart by their ``origin`` column; a table without one
    (written before it existed) is counted with the stand-ins: rebuild it to compare it."""
    kept, skipped = {}, []
    for path in sorted((Path(root) / "tables").glob("compare_*.csv")):
        table = pd.read_csv(path)
        name = path.stem.removeprefix("compare_")
        if "origin" not in table or (table["origin"] != DataOrigin.PAPER.value).any():
            skipped.append(name)
        else:
            kept[name] = table
    return kept, skipped


def ours_and_paper(compare: pd.DataFrame) -> pd.DataFrame:
    """A :func:`write_comparison` table as one row per ``row`` and one column per split, each cell
    ``ours / paper (ours − paper)`` (``—`` where the paper gives no value)."""
    def cell(r) -> str:
        if pd.isna(r.paper):
            return f"{r.ours:.3f} / —"
        return f"{r.ours:.3f} / {r.paper:.3f} ({r.difference:+.3f})"

    out = compare.assign(cell=[cell(r) for r in compare.itertuples()])
    wide = out.pivot(index="row", columns="split", values="cell")
    wide = wide.reindex(index=list(dict.fromkeys(out["row"])),
                        columns=list(dict.fromkeys(out["split"])))
    wide.index.name, wide.columns.name = None, None
    return wide


def plot_metric_and_delta(wide: pd.DataFrame, title: str,
                          metric: TaskMetric = EXPERIMENT_METRICS["mnist"],
                          err: pd.Series | None = None, paper: pd.DataFrame | None = None,
                          delta_err: pd.Series | None = None):
    """The paper's two-panel results figure: the metric on SC(X*, y)_test (left) and the
    Delta-metric, permuted minus contaminated (right). ``wide`` has one row per case and the
    columns ``contaminated`` and ``permuted``. A case that relies on the spurious signal
    (:func:`tapkit.metrics.tag_reliance` above :data:`.thresholds.MARGIN`) is drawn red.
    ``err``: the std over seeds of each case's contaminated score (error bars), ``delta_err``
    that of its Δ (:func:`delta_std`); ``paper``: the
    paper's values in ``wide``'s shape, drawn as a black mark on each bar. The left axis
    starts at 0."""
    import matplotlib.pyplot as plt

    delta = wide["permuted"] - wide["contaminated"]
    worse = tag_reliance(wide["contaminated"], wide["permuted"], metric) > MARGIN
    ticks = [tick_label(case) for case in wide.index]
    x = list(range(len(ticks)))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(min(13.0, max(9.0, 1.3 * len(ticks) + 1.5)), 3.6))
    yerr = err.reindex(wide.index).to_numpy() if err is not None else None
    ax1.bar(x, wide["contaminated"].to_numpy(), yerr=yerr, capsize=3, color="tab:blue",
            error_kw={"lw": 0.8}, label="ours (± std over seeds)" if err is not None else "ours")
    if metric.higher_is_better:
        ax1.set_ylim(0.0, 1.0)
    ax1.set_title(f"{metric.name} on SC(X*, y) test")
    ax2.bar(x, delta.to_numpy(), color=["tab:red" if w else "tab:green" for w in worse],
            yerr=delta_err.reindex(wide.index).to_numpy() if delta_err is not None else None,
            capsize=3, error_kw={"lw": 0.8})
    ax2.axhline(0, color="black", lw=0.8)
    ax2.set_title(f"Δ-{metric.name} (permuted − contaminated)")
    if paper is not None:
        theirs = paper.reindex(wide.index)
        kw = {"marker": "_", "s": 500, "color": "black", "zorder": 3, "linewidths": 2}
        ax1.scatter(x, theirs["contaminated"].to_numpy(), label="paper", **kw)
        ax2.scatter(x, (theirs["permuted"] - theirs["contaminated"]).to_numpy(), **kw)
        ax1.legend(fontsize=MIN_FONT_PT, loc="lower right")
    # slanted where the labels would run into each other: many bars, or long two-line labels
    longest = max(len(line) for tick in ticks for line in tick.split("\n"))
    slant = len(ticks) > 5 or len(ticks) * longest > 50
    for ax in (ax1, ax2):
        ax.set_xticks(x, ticks, fontsize=MIN_FONT_PT, rotation=30 if slant else 0,
                      ha="right" if slant else "center")
    titled(fig, title)
    fit_text(fig)
    fig.tight_layout()
    return fig


def mnist_figure(summary: pd.DataFrame, cases: Sequence[str], title: str,
                 paper: pd.DataFrame | None = None, runs: pd.DataFrame | None = None):
    """The MNIST results figure from a summary (``case``, ``split``, ``mean``, ``std``; one
    row per case and split): ours with the std over seeds as error bars (the Δ panel's from
    ``runs``, the per-run rows, :func:`delta_std`), and the paper's value of each case
    (``paper``: same columns, e.g. the appendix's ground-truth table) as a black mark where the
    paper has one."""
    wide = summary.pivot(index="case", columns="split", values="mean").reindex(list(cases))
    err = (summary[summary.split == "contaminated"].set_index("case")["std"]
           if "std" in summary else None)
    theirs = (paper.pivot_table(index="case", columns="split", values="mean")
              if paper is not None and len(paper) else None)
    return plot_metric_and_delta(wide, title, err=err, paper=theirs,
                                 delta_err=delta_std(runs, ["case"]) if runs is not None else None)


def chance_line(ax, level: float, text: str = "chance") -> None:
    """A dashed grey horizontal line at the chance ``level`` on ``ax``, in its legend as
    ``text``: where a page speaks of chance, its figure shows where chance lies."""
    ax.axhline(level, ls="--", color="gray", lw=1, label=text)


def tick_label(key: object) -> str:
    """An axis tick or legend entry as the reader sees it: each line of ``key`` named by
    :func:`.labels.label` (``"TAP\\nteacher_10"`` -> ``"TAP\\n10% teacher"``); No XS
    needs no "no teacher" beneath it."""
    lines = [label(line) for line in str(key).split("\n")]
    if label(no_xs()) in lines:
        lines = [line for line in lines if line != label(NO_TEACHER)]
    return "\n".join(lines)


def read_label(table: str | Path, missing: str | None = None) -> str:
    """The provenance label written beside a table (``<name>.json``), else ``missing`` (default: a
    note that the table has none)."""
    meta = Path(table).with_suffix(".json")
    label = json.loads(meta.read_text()).get("label", "") if meta.exists() else ""
    return label or missing or f"{Path(table).name}: no provenance recorded"


def normalisation_findings(table: pd.DataFrame) -> str:
    """One sentence per (method, λ) of the normalisation ablation: the permuted-decoy accuracy of
    the equations as written beside the released code's form at the same λ."""
    def acc(row: pd.DataFrame) -> str:
        if row.empty or row.iloc[0]["status"] != "ok":
            return "did not converge"
        return f"{row.iloc[0]['permuted']:.3f}"

    lines = []
    for (method, lam), grp in table.groupby(["method", "lam"], sort=False):
        eq, rel = grp[grp.form == "equations"], grp[grp.form == "released"]
        lines.append(f"- {label(method)} at λ = {lam_text(lam)}: permuted-decoy accuracy "
                     f"{acc(eq)} with the equations as written, {acc(rel)} with the released "
                     "code's form.")
    return "\n".join(lines)

"""The book layer shared by the chapter notebooks: their opening, their status record, and the
committed paper-profile results shown beside the quick ones.

Every chapter starts the same way: parse papermill's string parameters, quiet the logs, build the
profile's protocol with the notebook's overrides, find the results root and say which settings
ran. ``open_chapter(globals(), "mnist", "mnist")`` does that and returns a :class:`Chapter`;
``chapter.finish(...)`` writes ``results/<profile>/tables/status_<name>.json``, which
``scripts/build_book.py`` turns into the intro's table of what was reproduced (and, from the
tables the chapter wrote, the page's download links).

A page opens with its point, not its parameters: ``ch.opening(found)`` displays two or three
sentences, what the paper claims in this chapter (:data:`.openings.CLAIMS`) and what this build
found (computed by the chapter's function in :mod:`.openings`), which
``scripts/run_notebook.py`` moves right under the title; the parameters cells are removed from
the page, and their values as run stay one click away in the folded settings
(:meth:`Chapter.show_settings`).
"""

from __future__ import annotations

import json
import logging
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, MutableMapping

import pandas as pd

from . import openings, report, table_display
from .profile_notes import label_noise_text
from ..experiments import protocols
from ..experiments.chapter_plans import chapter_cases, chapter_datasets, chapter_models
from ..experiments.store import asked_keys
from .params import PARAMETERS, parse_params

PROTOCOLS = ("mnist", "medical", None)
MEDICAL_KEYS = ("seeds", "epochs", "batch_size", "image_size", "source", "stripe_models")
OPENING = "tapkit_opening"  # the metadata key that marks a page's opening among its outputs
TITLE_MARK = "tapkit_title_mark"  # the opening's: what the page's title adds (the stand-in's)


@dataclass
class Chapter:
    """One executed chapter: its name, profile, protocol settings and results root."""

    name: str
    profile: str
    settings: Any
    root: Path
    device: str = "cpu"
    datasets: tuple[str, ...] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)  # papermill's, as run

    def show_settings(self, sections: Mapping[str, Any] | None = None, **extra: Any) -> None:
        """The page's settings, folded (:func:`show_profile`): ``sections`` (default: the
        profile's settings), ``extra`` named sections, and the notebook's parameters as this run
        had them (papermill's injected values included), which the page does not show otherwise."""
        if sections is None:
            sections = {"settings": self.settings.as_dict() if self.settings else {}}
        show_profile(self.profile, {**sections, **extra,
                                    PAPERMILL_SECTION: dict(self.parameters)})

    def opening(self, found: str) -> None:
        """The page's opening: what the paper claims in this chapter and what this build found
        (``found``, computed by the chapter's function in :mod:`.openings`). Displayed as Markdown
        marked ``OPENING`` in its metadata, which ``scripts/run_notebook.py`` moves under the
        title; on the digits stand-in its ``TITLE_MARK`` makes the title say so too (issue 39:
        "Knowledge distillation on PNEU and KNEE (digit stand-in)")."""
        from IPython.display import Markdown, display

        from .medical import STANDIN_TITLE

        standin = self.data()[1]
        display(Markdown(openings.paragraph(self.name, self.profile, found, standin,
                                            self.calibration())),
                metadata={OPENING: True, TITLE_MARK: STANDIN_TITLE if standin else ""})

    def calibration(self) -> str:
        """How this chapter's Decoy-MNIST labels were calibrated, for its first sentence (the
        quick profile's recorded-label noise, :func:`.profile_notes.label_noise_text`); ""
        elsewhere."""
        from ..experiments.protocols import Protocol

        if (not isinstance(self.settings, Protocol)
                or "decoy-mnist" not in self.settings.experiments):
            return ""
        noise = getattr(self.settings.source_for("decoy-mnist"), "label_noise", 0.0)
        return f"on Decoy-MNIST with {label_noise_text(noise)}" if noise else ""

    def data(self) -> tuple[str, bool | None]:
        """What this chapter ran on, and whether that is a stand-in for the paper's data (None:
        no data set, e.g. timed steps)."""
        from . import medical
        from ..experiments.protocols import Protocol
        from ..sources import MEDICAL_EXPERIMENTS

        if not isinstance(self.settings, Protocol):
            return "none: timed steps on random tensors", None
        if set(self.settings.experiments) <= set(MEDICAL_EXPERIMENTS):
            return ("; ".join(medical.data_name(self.settings, e) for e in self.datasets),
                    medical.is_standin(self.settings))
        # typed: the quick profile's calibration shows (``embedded:label_noise=0.05``)
        source = self.settings.source_for(self.settings.settings().experiment)
        return f"MNIST digits (source `{source}`)", False

    def finish(self, data: str | None = None, standin: bool | None = None,  # None: from data()
               seeds: Iterable[int] | None = None, status: str = "ran", note: str = "") -> Path:
        """Record that this chapter ran to its end: ``status_<name>.csv/.json`` in the tables
        (``data`` and ``standin`` default to what :meth:`data` says), with the names of the tables
        it wrote (:func:`.report.written_tables`), which the book offers for download, and in the
        JSON its parameters as run and the keys of the runs it asked the store for (``runs``,
        :func:`tapkit.experiments.store.asked_keys`: ``tests/test_chapter_plans.py`` checks them
        against the chapter's plan in a built book)."""
        if seeds is None:
            seeds = getattr(self.settings, "seeds", ())
        described, is_standin = self.data()
        data = described if data is None else data
        standin = is_standin if standin is None else standin
        record = {"chapter": self.name, "profile": self.profile, "data": data,
                  "standin": standin, "seeds": [int(s) for s in seeds], "status": status,
                  "note": note, "tables": self.tables()}
        row = pd.DataFrame([{**record, "seeds": ", ".join(map(str, record["seeds"])),
                             "tables": ", ".join(record["tables"])}])
        as_run = {k: v for k, v in self.parameters.items()
                  if v is None or isinstance(v, (str, int, float, bool, list, dict))}
        return report.write_table(row, self.root, f"status_{self.name}",
                                  {**record, "parameters": as_run, "runs": asked_keys()})

    def tables(self) -> list[str]:
        """The names of the tables this chapter wrote under its results root (status records
        left out), in the order written."""
        folder = self.root / "tables"
        return [p.stem for p in report.written_tables()
                if p.parent.resolve() == folder.resolve() and not p.stem.startswith("status_")]


def open_chapter(namespace: MutableMapping[str, Any], name: str, protocol: str | None = "mnist",
                 datasets: Iterable[str] | None = (), notes: bool = True,
                 show: bool = False) -> Chapter:
    """The opening of a chapter notebook, from its ``globals()``: parameters parsed in place
    (``methods`` None: the chapter's rows, :func:`tapkit.experiments.chapter_plans.chapter_cases`;
    a medical chapter's ``models`` None: its architectures, :func:`.chapter_plans.chapter_models`),
    logging at WARNING, the ``protocol`` ("mnist", "medical" or None) of ``profile`` with the
    notebook's non-None overrides, the results root (``results`` or ``<repository>/results``),
    the device (``device``, resolved), for medical chapters the CPU threads and the stand-in notes
    of ``datasets`` (None: the chapter's own, :func:`chapter_datasets`, written back to the
    notebook's ``datasets``), and with ``show`` the settings line (:meth:`Chapter.show_settings`)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; expected one of {list(PROTOCOLS)}")
    # a notebook's imports may shadow a parameter's name (``from tapkit import models``)
    params = {k: v for k, v in namespace.items()
              if k in PARAMETERS and not isinstance(v, types.ModuleType)}
    from_param = "datasets" in params and datasets is params["datasets"]
    parse_params(params)
    if from_param:  # the notebook's own parameter, as parsed
        datasets = params["datasets"]
    if "methods" in params and params["methods"] is None:  # the chapter's, from the registry
        params["methods"] = chapter_cases(name)
    if protocol == "medical" and "models" in params and params["models"] is None:
        params["models"] = chapter_models(name)  # the chapter's, from the model registry
    namespace.update(params)
    logging.basicConfig(level=logging.WARNING)
    table_display.install()  # every table the chapter shows: labels, no NaN, texts uncut
    profile = namespace.get("profile")
    if profile is None:
        raise ValueError("the notebook has no `profile` parameter")
    if datasets is None:
        datasets = list(chapter_datasets(name, profile))
        if from_param:
            namespace["datasets"] = datasets
    settings = None
    if protocol == "mnist":
        settings = protocols.mnist(profile, **{k: namespace.get(k)
                                               for k in ("seeds", "epochs", "source")})
    elif protocol == "medical":
        grids = namespace.get("grids")
        settings = protocols.medical(profile, **{k: namespace.get(k) for k in MEDICAL_KEYS},
                                     search=grids and {m: _grid(g) for m, g in grids.items()})
        _medical_notes(settings, datasets, notes, namespace.get("models"))
    root = protocols.results_root(profile, namespace.get("results")
                                  or report.repo_root() / "results")
    from ..results import resolve_device

    ch = Chapter(name, profile, settings, root, resolve_device(namespace.get("device", "auto")),
                 tuple(datasets), dict(params))
    if show:
        ch.show_settings()
    return ch


def _grid(grid):
    """A ``grids`` parameter's value: one λ list, or lists per architecture."""
    if isinstance(grid, dict):
        return {model: tuple(lams) for model, lams in grid.items()}
    return tuple(grid)


PAPERMILL_SECTION = "parameters (papermill, as run)"


def show_profile(profile: str, sections: Mapping[str, Any]) -> None:
    """A page's settings, folded under one line that names the profile: a reader who re-runs the
    chapter needs every setting, one who reads it does not need a paragraph of them. A setting
    that maps keys to values (a per-experiment or per-architecture one) is a small table of its
    own, never a dict; papermill's parameters stay JSON, as a re-run passes them."""
    from html import escape

    from IPython.display import HTML, display

    def code(value: Any) -> str:
        return f"<code>{escape(json.dumps(value, ensure_ascii=False, default=str))}</code>"

    def cell(value: Any, nested: bool) -> str:
        return table(value, nested) if nested and isinstance(value, Mapping) and value else code(value)

    def table(value: Mapping, nested: bool) -> str:  # left-aligned, as the theme centres tables
        rows = "".join(f"<tr><td>{escape(str(k))}</td><td>{cell(v, nested)}</td></tr>"
                       for k, v in value.items())
        return f'<table style="margin: 0">{rows}</table>'

    def block(name: str, value: Any) -> str:
        if not isinstance(value, Mapping):
            return f"<p>{code(value)}</p>"
        return table(value, nested=name != PAPERMILL_SECTION)

    body = "".join(f"<p><b>{escape(str(name))}</b></p>{block(name, value)}"
                   for name, value in sections.items())
    display(HTML(f"<details><summary><b>Profile <code>{escape(profile)}</code></b>: the settings "
                 f"of this page</summary>{body}</details>"))


def _medical_notes(settings, datasets: Iterable[str], notes: bool,
                   models: Iterable[str] | None = None) -> None:
    from IPython.display import HTML, display

    from . import medical

    medical.set_threads(settings)
    for experiment in datasets:
        display(HTML(medical.standin_note(settings, experiment, models)))
    if notes:
        display(HTML(medical.override_note(settings, models)))


def committed_tables(root: str | Path, pattern: str) -> list[tuple[str, str, pd.DataFrame]]:
    """``(name, label, table)`` of every committed paper-profile table matching ``pattern``
    (``<results>/paper/tables/<pattern>.csv``) beside this profile's ``root``; the label (profile,
    hardware, tapkit commit) comes from the table's provenance file."""
    found = []
    for path in sorted((Path(root).parent / "paper" / "tables").glob(f"{pattern}.csv")):
        found.append((path.stem, report.read_label(path, "profile paper · hardware not recorded"),
                      pd.read_csv(path)))
    return found


def by_split(table: pd.DataFrame) -> pd.DataFrame:
    """A committed medical table as the pages show it: one row per (model, case), one column per
    test split, the mean."""
    return table.pivot_table(index=["model", "case"], columns="split", values="mean")


def show_committed(chapter: Chapter, patterns: Iterable[str], how_to: str,
                   shape=None) -> int:
    """Display the committed paper-profile tables matching ``patterns`` beside this chapter's,
    each labelled with its profile and hardware, or say none is committed and ``how_to`` make
    them. ``shape`` turns a table into what is shown (e.g. a pivot). Returns how many were shown."""
    from IPython.display import Markdown, display

    if chapter.profile == "paper":
        display(Markdown("This page *is* the paper profile: its tables above are the ones that "
                         "get committed under `results/paper/`."))
        return 0
    shown = 0
    for pattern in patterns:
        for name, label, table in committed_tables(chapter.root, pattern):
            display(Markdown(f"*{name} — committed paper-profile result: {label}*"))
            display(shape(table) if shape is not None else table)
            shown += 1
    if not shown:
        display(Markdown(f"No paper-profile results for this page are committed yet "
                         f"(`results/paper/tables/`): {how_to}"))
    return shown


def medical_figure(ch: Chapter, summary: pd.DataFrame, experiment: str, models, methods,
                   title: str, name: str, caveat: bool = False,
                   runs: pd.DataFrame | None = None, caption: str | None = None,
                   left: Mapping[tuple[str, str], str] | None = None) -> None:
    """The paper's medical figure for ``summary`` (saved as ``figures/<name>.png`` and shown;
    ``runs``, the per-run rows, give the Δ panel its error bars; ``caption``, e.g. the
    provenance, in italics under it),
    followed by the findings computed from it, the cells the profile leaves out and why (``left``;
    None: the protocol's ``not_run``) (and, with ``caveat``, the stand-in's caveat)."""
    import matplotlib.pyplot as plt
    from IPython.display import Markdown, display

    from . import medical

    untrained = medical.untrained(ch.settings)
    metric = medical.task_metric(experiment)
    if left is None:
        left = medical.left_out(ch.settings, experiment, models, methods)
    artifact = "stripe" if "stripe" in name else "tag"
    paper = medical.paper_summary(experiment, artifact) if experiment in medical.DATASETS else None
    fig = medical.plot_results(summary, metric, models, methods, title, untrained, paper,
                               medical.constant_score(experiment)  # on the balanced stand-in
                               if medical.is_standin(ch.settings) else None, runs, artifact)
    report.save_figure(fig, ch.root, name)
    plt.show()
    if caption:
        display(Markdown(f"*{caption}*"))
    display(Markdown(medical.findings(summary, metric, models, methods, untrained, left, runs,
                                      artifact)))
    if left:
        display(Markdown(medical.left_out_note(left)))
    if caveat and medical.is_standin(ch.settings):
        display(Markdown(medical.standin_caveat(ch.settings, models, experiment)))

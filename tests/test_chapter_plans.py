"""Each training chapter's notebook asks the results store for exactly its plan's runs
(:data:`tapkit.experiments.chapter_plans.PLANS`), which ``tapkit sweep`` and ``scripts/gpu.py``
also run. Two ways:

* **In a built book, every chapter, at no cost** (:func:`check_built_chapter`): each chapter's
  status record lists the keys its kernel asked the store for
  (:func:`tapkit.experiments.store.asked_keys`), and they are compared with the plan built from
  the book's own store (its λ choices, its teachers), read only. ``make test`` checks the smoke
  book its browser tests build (``tests/test_browser.py``); with ``TAPKIT_NO_BUILD=1``, as
  ``.ci/run`` runs the tests after ``make book``, or ``TAPKIT_BOOK_DIR``, the tests here check
  that book.
* **A notebook run into an empty folder** (``TAPKIT_PLAN_NOTEBOOKS=1``): the notebook runs with
  the ``smoke`` profile, and the runs it stored (every run it asked for: the store trains what it
  lacks) are compared with the plan's for the same parameters, built afterwards from the same
  folder. A notebook run costs 7-220 s on a busy CPU (about 25 minutes for all nine)."""

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tapkit.experiments import chapter_plans, planner, setting1
from tapkit.experiments.executors import records_frame
from tapkit.experiments.store import ResultStore
from tapkit.experiments.cells import Annotation

ROOT = Path(__file__).resolve().parents[1]
ALL = os.environ.get("TAPKIT_PLAN_NOTEBOOKS") == "1"  # every chapter, not only the λ search
BOOK_DIR = os.environ.get("TAPKIT_BOOK_DIR")  # as the browser tests: a built book to read
BUILT = BOOK_DIR is not None or os.environ.get("TAPKIT_NO_BUILD") == "1"
PROTOCOL_PARAMETERS = ("seeds", "epochs", "source")  # a notebook's parameters its protocol takes

# chapter: (notebook, papermill parameters, the plan's options for the same parameters)
CHAPTERS = {
    "lambda_search": ("lambda_search", {}, {}),
    "mnist": ("mnist", {}, {}),
    "teachers": ("teachers", {}, {}),
    "distillation": ("distillation", {}, {}),
    "pneu": ("medical_gt", {"experiment": "pneu"}, {}),
    "knee": ("medical_gt", {"experiment": "knee"}, {}),
    "extra_architectures": ("extra_architectures", {}, {}),
    "medical_teachers": ("medical_teachers", {}, {}),
    "medical_distillation": ("medical_distillation", {}, {}),
}


def stored_keys(results: Path) -> set[str]:
    """The keys of every run with a record in the store ``results/runs``."""
    return {p.parent.name for p in (results / "runs").glob("*/metrics.json")}


def planned_keys(chapter: str, results: Path, **options) -> set[str]:
    """The keys of the chapter's smoke plan with ``options``, teachers included (the store trains
    a student's teacher first, :func:`tapkit.experiments.planner.waves`)."""
    p = chapter_plans.protocol_for(chapter, "smoke")
    cells = chapter_plans.planned(chapter, p, results, chapter_plans.runner(results, "cpu"),
                                  **options)
    return {cfg.key() for wave in planner.waves(chapter_plans.configs(cells)) for cfg in wave}


def test_every_training_chapter_has_a_plan_and_a_case_here():
    assert set(CHAPTERS) == set(chapter_plans.PLANS)


def test_a_plan_is_cells_whose_tables_split_the_chapter(tmp_path):
    p = chapter_plans.protocol_for("teachers", "smoke")
    cells = chapter_plans.PLANS["teachers"](p, tmp_path)
    # smoke: one seed, teachers 10% and 1%, TAP at τ 0.01 only, no RRR/RBR with teacher masks
    assert [(c.table, c.method, c.annotation, c.tau) for c in cells] == [
        ("teacher_performance", "none", Annotation.TEACHER_10, None),
        ("teacher_performance", "none", Annotation.TEACHER_1, None),
        ("mnist_teacher", "tap", Annotation.TEACHER_10, 0.01),
        ("mnist_teacher", "tap", Annotation.TEACHER_1, 0.01),
        ("mnist_teacher", "tap", Annotation.RANDOM, None),
        ("mnist_teacher", "tap", Annotation.GROUND_TRUTH, None),
        ("mnist_teacher", "none", Annotation.NONE, None)]
    assert cells[2].cfg.teacher == cells[0].cfg and cells[3].cfg.teacher == cells[1].cfg
    # smoke, as quick: TAP's students at Setting 1's λ (no search choice here: the paper's 1e-3)
    assert cells[2].lam == 1e-3 and cells[5].lam == 1e-3
    tap = chapter_plans.part(cells, "mnist_teacher")
    found = chapter_plans.columns(tap[1:3], "annotation", "tau")
    assert found["annotation"] == ["teacher_1", "random"] and found["tau"][0] == 0.01
    assert math.isnan(found["tau"][1])  # random masks take no τ


def test_protocol_for_puts_setting2_on_the_teachers_seeds():
    assert chapter_plans.protocol_for("mnist", "quick").seeds == (0, 1, 2)
    assert chapter_plans.protocol_for("teachers", "quick").seeds == (0, 1)  # two of Setting 1's three
    assert chapter_plans.protocol_for("teachers", "smoke").seeds == (0,)
    assert chapter_plans.protocol_for("teachers", "quick", seeds=[4]).seeds == (4,)
    with pytest.raises(ValueError, match="unknown chapter"):
        chapter_plans.protocol_for("mnsit", "quick")


@pytest.mark.parametrize("chapter", [
    pytest.param(c, marks=() if ALL else pytest.mark.skip(
        reason="a notebook run of 7-220 s: set TAPKIT_PLAN_NOTEBOOKS=1 to check it (every "
               "built book's chapters are checked at no cost: the smoke book's in "
               "test_browser.py, CI's with TAPKIT_NO_BUILD=1)"))
    for c in CHAPTERS])
def test_the_notebook_asks_the_store_for_its_plans_runs(chapter, tmp_path):
    notebook, params, options = CHAPTERS[chapter]
    results = tmp_path / "results"
    args = [a for name, value in {**params, "results": str(results)}.items()
            for a in ("-p", name, value)]
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "run_notebook.py"),
                           str(ROOT / "notebooks" / f"{notebook}.py"), str(tmp_path / "out.ipynb"),
                           "--profile", "smoke", *args], capture_output=True, text=True,
                          timeout=900, cwd=ROOT, env=_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    asked = stored_keys(results / "smoke")
    assert asked, "the notebook stored no run"
    assert asked == planned_keys(chapter, results / "smoke", **options)


def _env() -> dict:
    return {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT), "TQDM_DISABLE": "1"}


# -- in a built book ------------------------------------------------------------------------------

def built_results() -> Path:
    """``results/<profile>`` of the built book: the repository's (``make book``'s ``PROFILE``,
    default quick) or, with ``TAPKIT_BOOK_DIR``, the one beside that book folder
    (``scripts/smoke_book.py``'s layout)."""
    if BOOK_DIR is None:
        return ROOT / "results" / os.environ.get("PROFILE", "quick")
    found = sorted((Path(BOOK_DIR).resolve().parent / "results").glob("*/tables/status_mnist.json"))
    if len(found) != 1:
        pytest.fail(f"expected one profile's results beside {BOOK_DIR}, found {found}")
    return found[0].parent.parent


def recorded_options(chapter: str, tables: Path) -> dict:
    """Plan options the book recorded: the random masks' coverage per τ, which the Setting-2
    chapter computed from its teachers' saliency and wrote with its table (recomputing it costs
    ~30 CPU-seconds; ``test_protocols.py`` checks the computation)."""
    if chapter != "medical_teachers":
        return {}
    meta = json.loads((tables / "medical_teacher.json").read_text())
    return {"coverage": {e: {float(tau): c for tau, c in by_tau.items()}
                         for e, by_tau in meta["coverage"].items()}}


def read_only(runs: Path):
    """A plan's ``run`` that reads the built book's store and never trains."""
    store = ResultStore(runs)

    def run(configs):
        configs = list(configs)
        records = [store.load(cfg) for cfg in configs]
        missing = [planner.label(c) for c, r in zip(configs, records) if r is None]
        assert not missing, f"the built book's store lacks {len(missing)} planned runs: {missing[:4]}"
        return records_frame(records)
    return run


def check_built_chapter(chapter: str, results: Path, tmp_path: Path) -> None:
    """The runs ``chapter``'s notebook asked the store for in the book built into ``results``
    (``results/<profile>``; its status record) are exactly its plan's, built from that store
    read only, in ``tmp_path`` (a λ search writes its choice table there)."""
    status = json.loads((results / "tables" / f"status_{chapter}.json").read_text())
    assert "runs" in status, "the book was built before chapters recorded their runs: rebuild it"
    params = status["parameters"]
    overrides = {k: params[k] for k in PROTOCOL_PARAMETERS if params.get(k) is not None}
    (tmp_path / "runs").symlink_to(results / "runs")
    shutil.copytree(results / "tables", tmp_path / "tables")
    p = chapter_plans.protocol_for(chapter, status["profile"], **overrides)
    cells = chapter_plans.planned(chapter, p, tmp_path, read_only(tmp_path / "runs"),
                                  **CHAPTERS[chapter][2],
                                  **recorded_options(chapter, results / "tables"))
    planned = {cfg.key(): cfg for wave in planner.waves(chapter_plans.configs(cells)) for cfg in wave}
    asked = set(status["runs"])
    assert asked, "the chapter asked the store for no run"
    unasked = [planner.label(planned[k]) for k in sorted(set(planned) - asked)]
    unplanned = sorted(asked - set(planned))
    assert not unasked and not unplanned, (
        f"planned but not asked for: {unasked[:4]} ({len(unasked)}); asked for but not planned "
        f"(keys in {results / 'runs'}): {unplanned[:4]} ({len(unplanned)})")


@pytest.mark.skipif(not BUILT, reason="reads a built book's results store: TAPKIT_NO_BUILD=1 after "
                                      "`make book` (.ci/run), or TAPKIT_BOOK_DIR; `make test` "
                                      "checks its smoke book in tests/test_browser.py")
@pytest.mark.parametrize("chapter", list(CHAPTERS))
def test_the_built_books_notebooks_asked_the_store_for_their_plans_runs(chapter, tmp_path):
    check_built_chapter(chapter, built_results(), tmp_path)


def test_a_notebooks_methods_none_is_its_chapters_cases_from_the_registry(tmp_path):
    """Notebooks leave ``methods`` None; the chapter opening resolves it through one function
    (:func:`chapter_plans.chapter_cases`, read from the method registry), the same tuple the
    chapter's plan takes by default, so the notebook asks for its plan's runs."""
    import inspect
    import re

    from tapkit.book import chapter

    ns = {"profile": "smoke", "methods": "None", "results": str(tmp_path)}
    chapter.open_chapter(ns, "mnist", "mnist")
    assert ns["methods"] == ["base", "none", "rrr", "rbr", "tap"]
    ns = {"profile": "smoke", "methods": None, "results": str(tmp_path)}
    chapter.open_chapter(ns, "extra_architectures", None)
    assert ns["methods"] == ["base", "none", "tap"]
    ns = {"profile": "smoke", "methods": "['none', 'tap']", "results": str(tmp_path)}
    chapter.open_chapter(ns, "visual", None)
    assert ns["methods"] == ["none", "tap"]  # a notebook's own list is kept
    assert chapter_plans.chapter_cases("visual") == ["none", "rrr", "rbr", "tap"]
    assert chapter_plans.chapter_cases("distillation") == ["kd", "at", "jt"]
    assert chapter_plans.chapter_cases("speed_memory") is None  # its bench protocol's methods
    # each plan's default rows are the chapter's resolution of methods=None
    for name, option in (("mnist", "cases"), ("pneu", "cases"), ("knee", "cases"),
                         ("extra_architectures", "cases"), ("distillation", "methods")):
        plan = chapter_plans.PLANS[name]
        default = inspect.signature(getattr(plan, "func", plan)).parameters[option].default
        # None: read from the registry when the plan is built (setting1.cases)
        rows = setting1.cases() if default is None else default
        assert list(rows) == chapter_plans.chapter_cases(name)
    # and no notebook names a method list of its own: methods = None where it has the parameter
    for path in sorted((ROOT / "notebooks").glob("*.py")):
        cell = path.read_text().split('# %% tags=["parameters"]\n', 1)[-1].split("\n# %%", 1)[0]
        found = re.search(r"^methods = (.*?)(\s+#.*)?$", cell, re.M)
        assert found is None or found.group(1) == "None", path.name


def _make_prerequisites() -> dict[str, set[str]]:
    """Each notebook's normal prerequisites in the Makefile (``$(X)/a.ipynb ...: $(X)/b.ipynb``;
    order-only ones, after ``|``, are lane order, not data)."""
    deps: dict[str, set[str]] = {}
    for line in (ROOT / "Makefile").read_text().splitlines():
        targets, colon, rest = line.partition(":")
        if not colon or not targets.startswith("$(X)/"):
            continue
        names = re.findall(r"\$\(X\)/(\w+)\.ipynb", rest.split("|")[0])
        for target in re.findall(r"\$\(X\)/(\w+)\.ipynb", targets):
            deps.setdefault(target, set()).update(names)
    return deps


def test_the_makefile_runs_first_what_each_chapter_reads():
    """A chapter's ChapterSpec.reads (the λ choice or runs it reads, which ``tapkit sweep``
    orders by) is a prerequisite of its notebook in the Makefile, so ``make -j`` never runs a
    chapter before what it reads."""
    deps = _make_prerequisites()
    assert deps["mnist"] >= {"lambda_search"} and deps["medical_teachers"] >= {"pneu", "knee"}
    for name, spec in chapter_plans.CHAPTER_SPECS.items():
        assert set(spec.reads) <= deps.get(name, set()), name
    with pytest.raises(ValueError, match="already registered"):
        chapter_plans.register_chapter(chapter_plans.CHAPTER_SPECS["mnist"])
    with pytest.raises(ValueError, match="reads unregistered"):
        chapter_plans.register_chapter(chapter_plans.ChapterSpec(
            "mine", chapter_plans.mnist, "mnist", reads=("nowhere",)))


def test_a_plan_trains_nothing_and_asks_for_its_stages_first(tmp_path):
    """Plans are pure: the PNEU plan of a profile that searches λ raises until its stage (the λ
    search) has run and written its choice; prepared through a runner, the search's configs go
    to the runner first and the plan then reads the choice. Chapters without stages declare
    none, and the teachers' chapter asks for its teachers."""
    p = chapter_plans.protocol_for("pneu", "smoke")
    with pytest.raises(chapter_plans.StageNotRun, match="lambda_choice_pneu_tag"):
        chapter_plans.PLANS["pneu"](p, tmp_path)
    assert not (tmp_path / "runs").exists()  # nothing trained, nothing written
    stages = chapter_plans.CHAPTER_SPECS["pneu"].stages(p, tmp_path)
    # the tags' search, and the stripe appendix's (the quick and smoke profiles: ResNet-18)
    assert [s.name for s in stages] == ["lambda_choice_pneu_tag", "lambda_choice_pneu_stripe"]
    asked = []

    def made_up(configs):  # the search's records, λ 1e-2 best: no training
        asked.append([c.key() for c in configs])
        return pd.DataFrame({"method": [c.method for c in configs],
                             "lam": [c.lam for c in configs], "status": "ok",
                             "val_loss": [abs(math.log10(c.lam) + 2) for c in configs]})

    cells = chapter_plans.planned("pneu", p, tmp_path, made_up)
    assert asked[0] == [c.cfg.key() for c in stages[0].cells]
    assert (tmp_path / "tables" / "lambda_choice_pneu_tag.csv").exists()
    assert {c.table for c in cells} == {"lambda_choice_pneu_tag", "pneu_gt",
                                        "lambda_choice_pneu_stripe", "pneu_stripe"}
    assert chapter_plans.CHAPTER_SPECS["mnist"].stages(p, tmp_path) == []
    t = chapter_plans.protocol_for("medical_teachers", "smoke")
    teachers = chapter_plans.CHAPTER_SPECS["medical_teachers"].stages(t, tmp_path)
    assert {c.table for c in teachers[0].cells} == {"medical_teacher_performance"}
    with pytest.raises(chapter_plans.StageNotRun, match="teacher"):
        chapter_plans.PLANS["medical_teachers"](t, tmp_path)

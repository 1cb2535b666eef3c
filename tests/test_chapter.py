"""The book layer: the chapters' shared opening, status records, committed paper-profile tables,
the intro's generated table, and progress bars switched off for the book."""

from __future__ import annotations

import re

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pytest
from tqdm import tqdm

from tapkit import progress
from tapkit.book import chapter, openings, report
from tapkit.book.build_time import ChapterTime
from tapkit.experiments import protocols
from tapkit.experiments.store import ResultStore
from tapkit.book.params import ParameterError

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_open_chapter_parses_papermill_strings_and_builds_the_profile(tmp_path):
    ns = {"profile": "smoke", "seeds": "[3]", "epochs": "2", "source": "embedded",
          "results": str(tmp_path), "device": "cpu", "other": "[1]"}
    ch = chapter.open_chapter(ns, "mnist", "mnist")
    assert ns["seeds"] == [3] and ns["epochs"] == 2 and ns["other"] == "[1]"
    assert ch.settings.seeds == (3,) and ch.settings.epochs == 2
    assert ch.root == tmp_path / "smoke" and ch.device == "cpu"
    assert ch.settings.search == {"tap": (1e-3,)}  # the smoke profile's one-value search


def test_open_chapter_medical_takes_grids_as_its_search(tmp_path):
    ns = {"profile": "quick", "grids": "{'tap': [1e-4, 1e-3]}", "image_size": "48",
          "results": str(tmp_path)}
    ch = chapter.open_chapter(ns, "pneu", "medical", ["pneu"], notes=False)
    assert ch.settings.search == {"tap": (1e-4, 1e-3)} and ch.settings.image_size == 48
    assert ch.data() == ("stand-in built from embedded MNIST digits, not PNEU", True)
    folder = tmp_path / "pneu_folder"  # a real-data source: named, and not a stand-in
    real = chapter.open_chapter({"profile": "quick", "source": str(folder),
                                 "results": str(tmp_path)}, "pneu", "medical", ["pneu"],
                                notes=False)
    assert real.data() == (f"PNEU ({folder})", False)
    ns = {"profile": "quick", "grids": "{'tap': {'resnet18': [1e-2]}}", "results": str(tmp_path)}
    s = chapter.open_chapter(ns, "pneu", "medical", ["pneu"], notes=False).settings
    assert s.search == {"tap": {"resnet18": (1e-2,)}}  # grids per architecture
    assert s.grid("tap", "resnet18") == (1e-2,) and s.grid("tap", "densenet121") == ()


def test_a_medical_chapters_models_none_is_its_registry_role(tmp_path, monkeypatch):
    """``models=None`` in a medical notebook is the chapter's architectures from the model
    registry, read when the chapter opens: the paper's three, the appendix chapter's two, and a
    model registered after import with a role is among them; a given list is kept."""
    from torch import nn

    from tapkit import models

    def opened(name: str, given=None) -> list:
        ns = {"profile": "quick", "models": given, "results": str(tmp_path)}
        chapter.open_chapter(ns, name, "medical", ["pneu"], notes=False)
        return ns["models"]

    assert opened("pneu") == ["vgg16", "resnet18", "densenet121"]
    assert opened("extra_architectures") == ["efficientnet_b0", "mobilenet_v2"]
    assert opened("overlap", "['resnet18']") == ["resnet18"]
    monkeypatch.setattr(models, "_REGISTRY", dict(models._REGISTRY))
    models.register_model("tiny", ("relu",), role=models.Role.MAIN)(
        lambda num_classes, in_channels: nn.Sequential(nn.Conv2d(in_channels, 4, 3), nn.ReLU()))
    assert opened("visual") == ["vgg16", "resnet18", "densenet121", "tiny"]


def test_open_chapter_rejects_bad_parameters_and_protocols(tmp_path):
    with pytest.raises(ParameterError, match="profile"):
        chapter.open_chapter({"profile": "fast"}, "mnist")
    with pytest.raises(ValueError, match="unknown protocol 'cifar'"):
        chapter.open_chapter({"profile": "quick"}, "mnist", "cifar")


def test_finish_writes_a_status_record_and_the_intro_table_reads_it(tmp_path):
    ch = chapter.open_chapter({"profile": "smoke", "results": str(tmp_path)}, "mnist", "mnist")
    asked = ch.settings.config(method="tap", lam=0.5, seed=7)
    assert ResultStore(tmp_path / "runs").load(asked) is None  # asked for, not stored
    ch.finish()
    record = json.loads((tmp_path / "smoke" / "tables" / "status_mnist.json").read_text())
    runs = record.pop("runs")
    assert asked.key() in runs and len(set(runs)) == len(runs)  # every key asked, once
    assert record == {"chapter": "mnist", "profile": "smoke", "standin": False, "seeds": [0],
                      "status": "ran", "note": "", "tables": [],
                      "data": "MNIST digits (source `embedded:label_noise=0.05`)",
                      "parameters": {"profile": "smoke", "results": str(tmp_path)}}
    times = {"mnist": ChapterTime(412.4, "Setting 1 runs", 380.0), "pneu": None}
    table = _script("build_book").status_table(["mnist", "pneu"], tmp_path / "smoke" / "tables",
                                                "smoke", times)
    lines = table.strip().splitlines()
    assert lines[2] == ("| {doc}`notebooks/mnist` | smoke | MNIST digits (source `embedded:label_noise=0.05`) "
                        "(real) | 0 | ran | 412 s (Setting 1 runs: 380 s) |")
    assert lines[3] == "| {doc}`notebooks/pneu` | smoke | — | — | **not run** | — |"
    assert "ran 6.9 minutes" in lines[-1]  # 412.4 s; the chapter without a time adds nothing


def test_toc_chapters_are_the_notebook_pages_in_order():
    names = _script("build_book").chapters(ROOT / "_toc.yml")
    assert names[:2] == ["method", "data"] and names[-2:] == ["report", "comparisons"]
    # the book's chapters are exactly the pages the Makefile executes, each once
    make = (ROOT / "Makefile").read_text()
    executed = re.search(r"^NOTEBOOKS := (.*?)\n\S", make, re.S | re.M).group(1)
    assert sorted(names) == sorted(executed.replace("\\", " ").split())
    assert "pneu" in names and "knee" in names and len(names) == len(set(names))
    # each chapter's part, for the first page's count of verdicts per part, in the book's order
    parts = _script("build_book").parts(ROOT / "_toc.yml")
    assert list(parts) == names
    assert parts["pneu"] == parts["mnist"] == "Setting 1: ground-truth annotations"
    assert parts["distillation"] == "Setting 2: teacher annotations"


def test_committed_tables_are_labelled_and_shown_beside_this_profile(tmp_path):
    quick = tmp_path / "quick"
    ch = chapter.Chapter("report", "quick", None, quick)
    assert chapter.committed_tables(quick, "compare_*") == []
    assert chapter.show_committed(ch, ["compare_*"], "run it on a GPU.") == 0
    df = pd.DataFrame({"model": ["resnet18"], "mean": [0.91]})
    report.write_table(df, tmp_path / "paper", "compare_pneu_gt",
                       {"label": "profile paper · NVIDIA H100 · tapkit 0.1 (abc1234)"})
    report.write_table(df, tmp_path / "paper", "compare_knee_gt")  # no provenance file
    found = chapter.committed_tables(quick, "compare_*")
    assert [(name, label) for name, label, _ in found] == [
        ("compare_knee_gt", "profile paper · hardware not recorded"),
        ("compare_pneu_gt", "profile paper · NVIDIA H100 · tapkit 0.1 (abc1234)")]
    assert found[1][2]["mean"].tolist() == [0.91]
    assert chapter.show_committed(ch, ["compare_pneu_*", "compare_knee_*"], "") == 2
    paper = chapter.Chapter("report", "paper", None, tmp_path / "paper")
    assert chapter.show_committed(paper, ["compare_*"], "") == 0


def test_progress_bars_follow_tqdm_disable(monkeypatch, capsys):
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    assert progress.disabled(True) is False and progress.disabled(False) is True
    monkeypatch.setenv("TQDM_DISABLE", "1")
    assert progress.disabled(True) is True
    for _ in tqdm(range(3), disable=progress.disabled(True)):
        pass
    assert "it/s" not in capsys.readouterr().err
    monkeypatch.setenv("TQDM_DISABLE", "0")
    assert progress.disabled(True) is False


def test_smoke_profile_trims_every_protocol():
    assert "smoke" in protocols.PROFILES
    quick, smoke = protocols.medical("quick"), protocols.medical("smoke")
    assert smoke.epochs == 1 < quick.epochs and smoke.source == "embedded"
    assert smoke.per_class["pneu"] < quick.per_class["pneu"]
    # every smoke run is one epoch (VGG-16 too, at the quick profile's quarter width), and its λ
    # search one value per grid
    from tapkit.experiments import medical_plans

    runs = medical_plans.medical_runs(smoke, "knee", medical_plans.ARCHITECTURES,
                                      None, lambdas={"tap": 1.0, "rrr": 1.0})
    assert {r.cfg.epochs for r in runs} == {1} and {r.cfg.per_class for r in runs} == {3}
    from tapkit.experiments.setting1 import case_config

    vgg = case_config(smoke, "knee", "vgg16", "none", None, 0)  # not run, but configured
    assert (vgg.model, vgg.epochs) == ("vgg16_quarter", 1)
    grids = [smoke.grid(m, a) for m in ("tap", "rrr", "rbr") for a in medical_plans.ARCHITECTURES]
    assert max(map(len, grids)) == 1
    assert protocols.mnist("smoke").epochs == 1 and protocols.bench("smoke").steps == 1


def test_a_displayed_title_becomes_the_executed_notebooks_first_cell():
    nbformat = pytest.importorskip("nbformat")
    v4 = nbformat.v4
    title = "# Setting 1 on KNEE\n\nThe paper's KNEE figure."
    cell = v4.new_code_cell("display(Markdown(...))", outputs=[
        v4.new_output("display_data", {"text/markdown": title, "text/plain": "<Markdown>"}),
        v4.new_output("display_data", {"text/markdown": "*a caption*"})])
    nb = v4.new_notebook(cells=[v4.new_code_cell("experiment = 'knee'"), cell])
    promote = _script("run_notebook").promote_title
    assert promote(nb) is True
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source == title
    assert [o["data"]["text/markdown"] for o in nb.cells[2].outputs] == ["*a caption*"]
    assert promote(nb) is False and len(nb.cells) == 3  # a notebook with a title is left alone
    nbformat.validate(nb)


def test_settings_are_folded_under_one_line_naming_the_profile(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    chapter.show_profile("quick", {"settings": {"seeds": (0, 1, 2), "note": "a < b"}, "λ": 1e-3})
    html = shown[0].data
    assert html.startswith("<details><summary><b>Profile <code>quick</code></b>")
    assert "<td>seeds</td><td><code>[0, 1, 2]</code></td>" in html
    assert "a &lt; b" in html and "<b>λ</b></p><p><code>0.001</code>" in html
    # a per-experiment setting is a small table, never a dict; papermill's parameters stay JSON
    shown.clear()
    chapter.show_profile("quick", {"settings": {"per_class": {"pneu": 300, "knee": 100}},
                                   chapter.PAPERMILL_SECTION: {"lambdas": {"tap": 0.01}}})
    html = shown[0].data
    assert ('<td>per_class</td><td><table style="margin: 0"><tr><td>pneu</td><td><code>300</code></td></tr>'
            "<tr><td>knee</td><td><code>100</code></td></tr></table>") in html
    assert "<td>lambdas</td><td><code>{&quot;tap&quot;: 0.01}</code></td>" in html


def test_by_split_puts_each_splits_mean_in_its_own_column():
    table = pd.DataFrame({"model": ["resnet18"] * 3 + ["vgg16"], "case": ["tap"] * 4,
                          "split": ["clean", "swapped", "contaminated", "clean"],
                          "mean": [0.9, 0.7, 0.95, 0.5], "std": [0.1] * 4})
    shown = chapter.by_split(table)
    assert list(shown.columns) == ["clean", "contaminated", "swapped"]
    assert shown.loc[("resnet18", "tap")].tolist() == [0.9, 0.95, 0.7]
    assert shown.loc[("vgg16", "tap"), "clean"] == 0.5
    assert pd.isna(shown.loc[("vgg16", "tap"), "swapped"])


def test_an_mnist_chapters_first_sentence_names_the_calibrated_labels(tmp_path):
    quick = chapter.open_chapter({"profile": "quick", "results": str(tmp_path)}, "mnist", "mnist")
    text = openings.paragraph("mnist", "quick", "found.", quick.data()[1], quick.calibration())
    assert "**This build** (profile `quick`, on Decoy-MNIST with 5% of the training labels " \
           "recorded as another digit" in text
    paper = chapter.open_chapter({"profile": "paper", "results": str(tmp_path)}, "mnist", "mnist")
    assert paper.calibration() == ""  # full MNIST, every label as recorded

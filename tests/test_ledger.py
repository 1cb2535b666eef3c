"""The cost ledger (tapkit.book.ledger): what each cell of a build cost, from a generated store,
and which claims read it, asked of the report's judges on the paper's own per-run tables."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tapkit.book.ledger import CellKey, cell_costs, cell_rows, readers, run_costs, without
from tapkit.book.report import write_table
from tapkit.config import TrainConfig

from paper_summaries import META, setting1_runs

ROOT = Path(__file__).resolve().parents[1]


def _store(root, runs):
    """``runs``: (config, seconds) written as finished runs of ``root/runs``."""
    for cfg, seconds in runs:
        folder = root / "runs" / cfg.key()
        folder.mkdir(parents=True)
        (folder / "metrics.json").write_text(json.dumps({"config": cfg.to_dict(),
                                                         "seconds": seconds}))


def test_each_run_is_costed_once_under_its_cell(tmp_path):
    pneu = TrainConfig(experiment="pneu", model="resnet18")
    teacher = pneu.replace(data="holdout", clean_fraction=0.1)
    _store(tmp_path, [
        (pneu.replace(data="clean"), 10.0),                                  # Base
        (pneu, 20.0), (pneu.replace(seed=1), 22.0),                          # No XS, two seeds
        (pneu.replace(method="tap", lam=1e-2), 30.0),                        # Setting 1's TAP
        (pneu.replace(method="tap", lam=1e-2, annotation="teacher", teacher=teacher,
                      clean_fraction=0.1), 31.0),                            # a Setting-2 student
        (pneu.replace(method="kd", teacher=teacher, clean_fraction=0.1), 5.0),
        (teacher, 4.0),
        (TrainConfig(method="rrr", lam=1e-3), 7.0),                          # Decoy-MNIST
        (pneu.replace(artifact="stripe", seed=2), 8.0),
        (pneu.replace(model="vgg16_quarter", method="tap", lam=3e-2), 9.0)])  # as VGG-16
    costs = cell_costs(run_costs(tmp_path)).set_index(
        ["experiment", "artifact", "model", "case", "annotation"])
    assert costs.loc[("pneu", "tag", "resnet18", "none", "none"), ["runs", "seeds", "seconds"]
                     ].tolist() == [2, 2, 42.0]
    assert costs.loc[("pneu", "tag", "resnet18", "base", "none"), "seconds"] == 10.0
    assert costs.loc[("pneu", "tag", "resnet18", "tap", "ground_truth"), "seconds"] == 30.0
    assert costs.loc[("pneu", "tag", "resnet18", "tap", "teacher_10"), "seconds"] == 31.0
    assert costs.loc[("pneu", "tag", "resnet18", "kd", "teacher_10"), "seconds"] == 5.0
    assert costs.loc[("pneu", "tag", "resnet18", "teacher", "teacher_10"), "seconds"] == 4.0
    assert costs.loc[("mnist", "tag", "two_layer_cnn", "rrr", "ground_truth"), "seconds"] == 7.0
    assert costs.loc[("pneu", "stripe", "resnet18", "none", "none"), "seconds"] == 8.0
    assert costs.loc[("pneu", "tag", "vgg16", "tap", "ground_truth"), "seconds"] == 9.0
    assert costs["seconds"].sum() == pytest.approx(146.0)
    assert costs["seconds"].is_monotonic_decreasing  # the dearest first


def test_a_cells_rows_are_dropped_from_every_table_and_nothing_else(tmp_path):
    tables = tmp_path / "build" / "tables"
    tables.mkdir(parents=True)
    runs = setting1_runs("pneu")
    runs.to_csv(tables / "pneu_gt_runs.csv", index=False)
    runs.to_csv(tables / "pneu_stripe_runs.csv", index=False)
    students = pd.DataFrame({"experiment": ["pneu", "pneu", "knee"],
                             "model": ["densenet121"] * 3, "method": ["rrr"] * 3,
                             "annotation": ["ground_truth", "teacher_10", "ground_truth"]})
    students.to_csv(tables / "medical_teacher.csv", index=False)
    cell = CellKey("pneu", "tag", "densenet121", "rrr", "ground_truth")
    assert cell_rows(runs, "pneu_gt_runs", cell).sum() == 5
    assert cell_rows(runs, "knee_gt_runs", cell).sum() == 0     # another data set's table
    out = without(tables, cell, tmp_path / "less") / "tables"
    less = pd.read_csv(out / "pneu_gt_runs.csv")
    assert len(less) == len(runs) - 5
    assert not ((less["model"] == "densenet121") & (less["case"] == "rrr")).any()
    assert len(pd.read_csv(out / "pneu_stripe_runs.csv")) == len(runs)  # the tag's cell only
    kept = pd.read_csv(out / "medical_teacher.csv")
    assert kept["annotation"].tolist() == ["teacher_10", "ground_truth"]  # the student, KNEE's
    assert len(pd.read_csv(tables / "pneu_gt_runs.csv")) == len(runs)    # the build untouched


def test_the_judges_say_which_claims_read_a_cell(tmp_path):
    # the paper's Setting-1 runs written as one build's: its DenseNet-121 RRR on PNEU is the
    # re-emergence case (F1 0.994 -> 0.429) and nothing on KNEE reads it; a cell the build never
    # trained is read by no claim
    for e in ("pneu", "knee"):
        write_table(setting1_runs(e), tmp_path, f"{e}_gt_runs", {**META, "origin": "paper"})
    rrr = CellKey("pneu", "tag", "densenet121", "rrr", "ground_truth")
    base = CellKey("knee", "tag", "resnet18", "base")
    absent = CellKey("mnist", "tag", "two_layer_cnn", "none")
    found = readers(tmp_path, [rrr, base, absent])
    assert "rrr_spurious_densenet_pneu" in found[rrr]
    assert not any("knee" in claim for claim in found[rrr])
    assert any("knee" in claim for claim in found[base])
    assert not any("pneu" in claim for claim in found[base])
    assert found[absent] == []


def test_the_script_prints_the_ledger_of_a_build_and_refuses_a_folder_that_is_not_one(tmp_path,
                                                                                      capsys):
    import runpy
    main = runpy.run_path(str(ROOT / "scripts" / "cost_ledger.py"))["main"]
    with pytest.raises(SystemExit):
        main([str(tmp_path)])
    assert "give a built profile's results folder" in capsys.readouterr().err
    write_table(setting1_runs("pneu"), tmp_path, "pneu_gt_runs", {**META, "origin": "paper"})
    pneu = TrainConfig(experiment="pneu", model="densenet121", image_size=64)
    _store(tmp_path, [(pneu.replace(method="rrr", lam=0.1), 200.0),
                      (pneu.replace(method="rrr", lam=0.1, seed=1), 190.0),
                      (TrainConfig(method="rbr", lam=1.0), 60.0)])   # no table holds MNIST's
    assert main([str(tmp_path), "--out", str(tmp_path / "ledger.md")]) == 0
    lines = (tmp_path / "ledger.md").read_text().splitlines()
    assert lines[2].startswith("| pneu densenet121 rrr | 2 | 2 | 390 | ")
    assert "rrr_spurious_densenet_pneu" in lines[2]
    assert lines[3] == "| mnist two_layer_cnn rbr | 1 | 1 | 60 | **none** |"
    assert "60 CPU-s (13%) in cells no claim reads" in " ".join(lines)

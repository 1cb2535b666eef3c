"""The committed GPU results beside the paper's numbers (tapkit.book.paper_profile): generated
committed tables and a lease record under ``tmp_path/paper``, read from the quick profile's root
``tmp_path/quick`` as the pages do."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tapkit.book import paper_profile

LEASE = ("one H100 lease: Table 1 (78 s), then Setting 1 until the command's 565-s limit: Base "
         "and No XS finished on all five seeds; RRR and RBR were still training and are not "
         "stored. TAP's export missed its runs.")
DEVICE = "cuda: NVIDIA H100 80GB HBM3"


def _write(path: Path, frame: pd.DataFrame | None = None, meta: dict | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if frame is not None:
        frame.to_csv(path, index=False)
    if meta is not None:
        path.with_suffix(".json").write_text(json.dumps(meta))


def _mnist(tables: Path) -> None:
    """Base on five seeds, No XS on five, RRR on three; RBR and TAP not run."""
    summary = [("base", "contaminated", 0.981, 0.002, 5), ("base", "permuted", 0.980, 0.003, 5),
               ("base", "clean", 0.982, 0.001, 5),
               ("none", "contaminated", 0.990, 0.001, 5), ("none", "permuted", 0.800, 0.010, 5),
               ("none", "clean", 0.600, 0.020, 5),
               ("rrr", "contaminated", 0.970, 0.004, 3), ("rrr", "permuted", 0.960, 0.005, 3),
               ("rrr", "clean", 0.961, 0.006, 3)]
    _write(tables / "mnist_gt.csv",
           pd.DataFrame(summary, columns=["case", "split", "mean", "std", "count"]).assign(dnc_runs=0),
           {"label": "profile paper", "settings": {"seeds": [0, 1, 2, 3, 4]},
            "not_run": {"rbr": "5 of 5 runs not stored", "tap": "5 of 5 runs not stored"}})
    # per-seed No XS: Δ = permuted − contaminated = −0.19, −0.20, −0.18
    runs = pd.DataFrame({"case": "none", "seed": [0, 1, 2], "status": "ok",
                         "contaminated": [0.99, 0.99, 0.99], "permuted": [0.80, 0.79, 0.81],
                         "clean": [0.6, 0.6, 0.6]})
    _write(tables / "mnist_gt_runs.csv", runs)


def _speed(tables: Path) -> None:
    cols = ["model", "method", "status", "it_per_s", "peak_mem_mb", "speed_ratio", "speed_ratio_lo",
            "speed_ratio_hi", "mem_ratio", "mem_ratio_lo", "mem_ratio_hi"]
    rows = [("vgg16_authors", "none", "ok", 60.0, 1600.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
            ("vgg16_authors", "tap", "ok", 51.0, 1612.0, 0.85, 0.84, 0.86, 1.0075, 1.0, 1.01),
            ("vgg16_authors", "rrr", "ok", 9.0, 3600.0, 0.15, 0.14, 0.16, 2.25, None, None),
            ("densenet121", "none", "ok", 20.0, 2000.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
            ("densenet121", "rbr", "ok", 2.5, 7000.0, 0.125, 0.11, 0.14, 3.5, None, None),
            ("densenet121", "none_again", "ok", 19.8, 2000.0, 0.99, 0.95, 1.03, 1.0, 1.0, 1.0),
            ("two_layer_cnn", "none", "ok", 500.0, 200.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
            ("two_layer_cnn", "tap", "ok", 330.0, 200.0, 0.66, 0.62, 0.70, 1.0, 1.0, 1.0)]
    table = pd.DataFrame(rows, columns=cols)
    stored = [{"model": m, "method": meth, "batch_size": 256 if m == "two_layer_cnn" else 16,
               "image_size": 28 if m == "two_layer_cnn" else 224} for m, meth, *_ in rows]
    _write(tables / "speed_memory.csv", table,
           {"label": "profile paper", "provenance": {"device": DEVICE}, "rows": stored,
            "options": {"rrr": {"scale": "released"}, "rbr": {"variant": "released"},
                        "tap": {"norm": "l2sq", "pooling": "cumulative"}}})


@pytest.fixture
def committed(tmp_path):
    paper = tmp_path / "paper"
    _mnist(paper / "tables")
    _speed(paper / "tables")
    (paper / "gpu_provenance.json").write_text(json.dumps({
        "provenance": {"device": DEVICE, "torch": "2.11.0+cu130", "tapkit": "0.1.0",
                       "git_commit": "8afbcae4dda54f72989fa27cff073acf8ae5a892"},
        "setting1": {"lease": LEASE, "runs": 13, "seconds_per_run": 139.4,
                     "not_run": {"rbr": "5 of 5 runs not stored", "tap": "5 of 5 runs not stored"}},
        "wall_s": {"setting1_partial": 478.0, "table1": 78.3, "total": 87.0}}))
    return tmp_path / "quick"


def _no_missing_values(table: pd.DataFrame) -> None:
    """No NaN, no "nan"/"None" text, and no cell the page would cut ("...")."""
    cells = [str(v) for v in table.to_numpy().ravel()] + [str(i) for i in table.index]
    assert not table.isna().any().any()
    assert not [c for c in cells if "nan" in c.lower() or "none" in c.lower().split()], cells
    assert max(map(len, cells)) <= paper_profile.CELL_WIDTH
    with pd.option_context("display.max_colwidth", paper_profile.CELL_WIDTH):
        assert "..." not in table.to_html()


def test_provenance_line_names_the_gpu_torch_and_wall_time(committed):
    setting1 = paper_profile.provenance_line(committed, "setting1")
    assert "GPU: NVIDIA H100 80GB HBM3" in setting1 and "cuda:" not in setting1
    assert "torch 2.11.0+cu130" in setting1 and "tapkit 0.1.0 (8afbcae)" in setting1
    assert "478 s wall time (partial" in setting1 and "13 runs stored" in setting1
    table1 = paper_profile.provenance_line(committed, "table1")
    assert "Table 1 (speed and memory): 78 s wall time" in table1
    assert "the authors' released losses" in table1 and "RBR variant=released" in table1
    assert paper_profile.wall_seconds({"wall_s": {"setting1_partial": 478.0}}, "setting1") == [
        (478.0, "partial")]
    assert paper_profile.wall_seconds({}, "table1") == []


def test_provenance_line_of_a_stage_several_leases_ran(committed):
    """A later lease that trained only Setting 1: Table 1 keeps its own lease's commit, and
    Setting 1 names every lease's wall time and the commits its runs were trained at."""
    path = committed.parent / "paper" / "gpu_provenance.json"
    record = json.loads(path.read_text())
    first = record["provenance"]
    record.update({"provenance": {**first, "git_commit": "8c05fe1" + "0" * 33},
                   "table1": {"rows": 20, "provenance": first},
                   "wall_s": {**record["wall_s"], "setting1": 490.1}})
    record["setting1"]["label"] = "profile paper · cuda: x · tapkit 0.1.0 (8afbcae, 8c05fe1)"
    path.write_text(json.dumps(record))
    setting1 = paper_profile.provenance_line(committed, "setting1")
    assert "Setting 1 (Decoy-MNIST): 2 leases of 478, 490 s wall time" in setting1
    assert "tapkit 0.1.0 (8afbcae, 8c05fe1)" in setting1
    assert "tapkit 0.1.0 (8afbcae)" in paper_profile.provenance_line(committed, "table1")


def test_mnist_table_sets_ours_beside_the_papers_with_reasons_for_missing_cases(committed):
    table = paper_profile.mnist_beside_paper(committed)
    assert list(table.index) == ["Base", "No XS", "RRR", "RBR", "TAP"]
    assert list(table.columns) == [f"{s} ({w})" for s in ("contaminated", "permuted", "clean")
                                   for w in ("ours, GPU", "paper")]
    assert table.loc["No XS", "permuted (ours, GPU)"] == "0.800 ± 0.010"
    assert table.loc["No XS", "permuted (paper)"] == "0.819 ± 0.006"   # tex line 760
    assert table.loc["Base", "clean (ours, GPU)"] == "0.982 ± 0.001"
    assert table.loc["RRR", "clean (ours, GPU)"] == "0.961 ± 0.006 (3 of 5 seeds)"
    # not run: the reason (table's not_run and the lease's clause) in ours, the paper's number kept
    assert table.loc["RBR", "permuted (ours, GPU)"] == "not run here (5 of 5 runs not stored)"
    assert table.loc["RBR", "permuted (paper)"] == "0.982 ± 0.001"
    assert table.loc["TAP", "clean (ours, GPU)"] == "not run here (5 of 5 runs not stored)"
    assert table.loc["TAP", "clean (paper)"] == "0.979 ± 0.002"
    _no_missing_values(table)
    # the long reason adds the lease's clause that names the case
    assert paper_profile.not_run_reason(committed, "rbr") == (
        "5 of 5 runs not stored: RRR and RBR were still training and are not stored")
    assert paper_profile.not_run_reason(committed, "tap") == (
        "5 of 5 runs not stored: TAP's export missed its runs")


def test_a_case_missing_from_not_run_takes_the_lease_clause(committed):
    meta = committed.parent / "paper" / "tables" / "mnist_gt.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "not_run": {}}))
    (committed.parent / "paper" / "gpu_provenance.json").write_text(json.dumps(
        {"setting1": {"lease": LEASE}}))
    table = paper_profile.mnist_beside_paper(committed)
    assert table.loc["TAP", "contaminated (ours, GPU)"] == (
        "not run here (TAP's export missed its runs)")
    assert table.loc["TAP", "contaminated (paper)"] == "0.983 ± 0.001"


def test_no_xs_delta_accuracy_ours_and_the_papers(committed):
    d = paper_profile.mnist_delta(committed)
    assert d["ours"] == pytest.approx(0.800 - 0.990)
    assert d["paper"] == pytest.approx(0.819 - 0.995) == pytest.approx(-0.176)
    line = paper_profile.mnist_delta_line(committed)
    assert "ours −0.190" in line and "the paper's −0.176" in line
    assert "over 3 seeds: std 0.010, from −0.200 to −0.180" in line
    missing = paper_profile.mnist_delta_line(committed, "tap")
    assert "the paper's −0.004" in missing and "not run here (5 of 5 runs not stored" in missing
    note = paper_profile.mnist_lease_note(committed)
    assert note.startswith("Not run on the GPU: RBR, TAP.") and LEASE in note


def test_speed_table_is_architecture_by_method_beside_the_papers_ratios(committed):
    table = paper_profile.speed_beside_paper(committed)
    vgg = "VGG-16 (authors' head)"
    assert list(table.index) == [
        (vgg, "No XS"), (vgg, "TAP"), (vgg, "RRR"),
        ("DenseNet-121", "No XS"), ("DenseNet-121", "RBR"), ("DenseNet-121", "No XS, measured again"),
        ("two-layer CNN (batch 256, 28 px)", "No XS"), ("two-layer CNN (batch 256, 28 px)", "TAP")]
    speed, mem = "it/s ÷ No XS (ours, 95% interval)", "memory ÷ No XS (ours, 95% interval)"
    assert table.loc[(vgg, "TAP"), speed] == "0.850 [0.840, 0.860]"
    assert table.loc[(vgg, "TAP"), "it/s ÷ No XS (paper)"] == f"{11.8 / 12.1:.3f} (11.8 it/s)"
    assert table.loc[(vgg, "RRR"), mem] == "2.250 (one pass)"
    assert table.loc[(vgg, "RRR"), "memory ÷ No XS (paper)"] == f"{9.7 / 4.4:.3f} (9.7 GB)"
    assert table.loc[(vgg, "No XS"), speed] == "1 (reference: 60.0 it/s)"
    assert table.loc[(vgg, "No XS"), "it/s ÷ No XS (paper)"] == "1 (reference: 12.1 it/s)"
    dense_rbr = table.loc[("DenseNet-121", "RBR")]
    assert dense_rbr[speed] == "0.125 [0.110, 0.140]" and dense_rbr["peak memory MB (ours)"] == "7000"
    assert dense_rbr["it/s ÷ No XS (paper)"] == "OOM on the paper's RTX 3080 (10 GB)"
    cnn = table.loc[("two-layer CNN (batch 256, 28 px)", "TAP")]
    assert cnn["it/s ÷ No XS (paper)"] == "not in the paper's Table 1"
    _no_missing_values(table)


def test_densenet_rbr_line_says_it_fits_on_the_h100_with_its_peak(committed):
    line = paper_profile.densenet_rbr_line(committed)
    assert "out of memory (OOM) on its RTX 3080 (10 GB)" in line
    assert "NVIDIA H100 80GB HBM3" in line and "**fits**" in line
    assert "peak of 7000 MB" in line and "6.8 GiB, 3.50× No XS" in line and "2.50 it/s" in line
    assert "No XS: the paper's 4.4 GB, ours 2000 MB" in line


def test_nothing_committed_still_shows_the_papers_numbers(tmp_path):
    quick = tmp_path / "quick"
    assert "no paper-profile results are committed" in paper_profile.provenance_line(quick, "setting1")
    table = paper_profile.mnist_beside_paper(quick)
    assert table.loc["No XS", "contaminated (paper)"] == "0.995 ± 0.001"
    assert table.loc["No XS", "contaminated (ours, GPU)"] == "not run here (nothing committed)"
    _no_missing_values(table)
    assert paper_profile.mnist_delta(quick)["ours"] is None
    assert "the paper's −0.176; ours not run here" in paper_profile.mnist_delta_line(quick)
    assert paper_profile.mnist_lease_note(quick) == "No GPU lease has committed Setting 1 yet."
    speed = paper_profile.speed_beside_paper(quick)
    assert speed.loc[("DenseNet-121", "TAP"), "it/s ÷ No XS (paper)"] == f"{12.0 / 11.6:.3f} (12.0 it/s)"
    assert speed.loc[("DenseNet-121", "RBR"), "memory ÷ No XS (paper)"].startswith("OOM")
    _no_missing_values(speed)
    assert "no paper-profile results" in paper_profile.densenet_rbr_line(quick)

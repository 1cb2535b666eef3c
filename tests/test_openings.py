"""Pages that open with their point: each chapter's opening sentences computed from its results
(hand-made tables with known numbers), the parameters cells removed from the executed notebook
and the opening moved under the title (scripts/run_notebook.py), the settings block listing
papermill's parameters, and each chapter's tables linked for download (scripts/build_book.py)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pandas as pd
import pytest
import torch

from tapkit.book import chapter, medical, openings, openings_medical, report
from tapkit.book.origin import DataOrigin
from tapkit.maps import Maps

ROOT = Path(__file__).resolve().parents[1]
nbformat = pytest.importorskip("nbformat")
v4 = nbformat.v4


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _runs(values: dict[str, list[tuple[float, float]]]) -> pd.DataFrame:
    """A run table: per case, one (contaminated, permuted) pair per seed."""
    return pd.DataFrame([{"case": case, "seed": seed, "status": "ok", "contaminated": c,
                          "permuted": p, "clean": c}
                         for case, pairs in values.items() for seed, (c, p) in enumerate(pairs)])


def _summary(rows: dict[tuple, tuple[float, float]], keys: list[str], count: int = 1):
    """A summary table: per key tuple, the contaminated and permuted means."""
    out = []
    for key, (c, p) in rows.items():
        for split, v in (("contaminated", c), ("permuted", p), ("clean", c)):
            out.append({**dict(zip(keys, key)), "split": split, "mean": v, "std": 0.01,
                        "count": count, "dnc_runs": 0})
    return pd.DataFrame(out)


# --------------------------------------------------------------------------- the sentences

def test_every_chapter_of_the_toc_has_a_claim():
    names = _script("build_book").chapters(ROOT / "_toc.yml")
    assert sorted(names) == sorted(openings.CLAIMS)
    text = openings.paragraph("mnist", "smoke", "no XS did x.", standin=False)
    assert text.startswith("**The paper:** On Decoy-MNIST") and "**This build** (profile `smoke`): No XS did x." in text
    assert "stand-in" in openings.paragraph("pneu", "quick", "y", standin=True)
    with pytest.raises(ValueError, match="CLAIMS"):
        openings.paragraph("cifar", "quick", "z")


def test_an_opening_shows_the_first_finding_and_the_verdict_and_folds_the_rest():
    rest = "No XS +0.908; " + "TAP +0.020, " * 15 + "RRR +0.1."  # 35 words
    found = (f"PNEU: precision 2.2% (e.g. 0.4× random; one seed). {rest} "
             "The reproduction report's verdict: not judged here (one seed: no interval).")
    text = openings.paragraph("medical_teachers", "quick", found, standin=True)
    shown, _, folded = text.partition("<details")
    # the first sentence ends at the first ". " outside brackets, not at "e.g."
    assert shown.rstrip().endswith(
        "**This build** (profile `quick`, on the digits stand-in for the paper's images): PNEU: "
        "precision 2.2% (e.g. 0.4× random; one seed). The reproduction report's verdict: not "
        "judged here (one seed: no interval).")
    assert f"What else this build measured</summary>\n\n{rest}\n\n</details>" in folded
    # a short rest stays in view, before the verdict
    short = openings.paragraph("mnist", "quick", "A. B c. The reproduction report's verdict: x.")
    assert "<details" not in short
    assert short.endswith(": A. B c. The reproduction report's verdict: x.")
    # one clause and no verdict: nothing to fold
    assert "<details" not in openings.paragraph("lambda_search", "quick", "the search chose 1e-2.")
    assert openings.headline("a; b. c. d") == ("a; b.", "c. d")
    assert openings.headline(". a") == (".", "a")


def test_mnist_opening_reads_the_runs_and_the_reports_verdicts(tmp_path):
    def found(runs: pd.DataFrame) -> str:
        report.write_table(runs, tmp_path, "mnist_gt_runs", {"data": "MNIST"})
        return openings.mnist_found(runs, tmp_path)

    runs = _runs({"none": [(0.98, 0.50), (0.97, 0.52)], "tap": [(0.97, 0.95), (0.96, 0.96)],
                  "rrr": [(0.97, 0.96), (0.97, 0.95)]})
    text = found(runs)
    # means over two seeds: No XS 0.975 -> 0.510; TAP 0.955 permuted, RRR 0.955
    assert text.startswith("No XS's accuracy goes from 0.975 to 0.510 when the decoys are permuted")
    assert "TAP reaches 0.955 and RRR 0.955." in text
    # the report's claims of the chapter, as the report judges them: No XS learns the decoy;
    # paired TAP - RRR (-0.01, +0.01), mean 0, spans -0.02: inconclusive; the claims that need
    # RBR or Base are not run
    from tapkit.book.claim_specs import claims_table
    table = claims_table(tmp_path).set_index("id")
    assert table.loc["decoy_learned_mnist", "verdict"] == "reproduced"
    assert table.loc["tap_matches_rrr_mnist", "verdict"] == "inconclusive"
    assert "*reproduced* for “No XS learns the decoy on MNIST”" in text
    assert "*inconclusive* for “TAP matches RRR on MNIST" in text
    assert "not run" in text and "Base not run" in text  # the insensitivity claim names Base
    one = found(_runs({"none": [(0.9, 0.8)], "tap": [(0.9, 0.9)]}))
    assert "not judged here" in one and "fewer than two seeds" in one


def test_medical_opening_signs_knee_mae_so_that_more_is_worse(tmp_path):
    from tapkit.book.claim_specs import claims_table
    from tapkit.book.report import write_table

    rows = {("resnet18", "none"): (1.0, 1.5), ("resnet18", "tap"): (1.0, 1.1),
            ("densenet121", "none"): (0.1, 0.6), ("vgg16", "none"): (2.0, 2.0)}
    runs = pd.DataFrame([{"model": m, "case": c, "seed": 0, "status": "ok", "contaminated": a,
                          "permuted": b, "clean": a, "val_constant": 1.2}
                         for (m, c), (a, b) in rows.items()])
    write_table(runs, tmp_path, "knee_gt_runs", {"data": "the digits stand-in for KNEE",
                                                 "origin": "stand-in",
                                                 "left_out": {"resnet18/rrr": "over budget"}})
    text = openings_medical.medical_found(_summary(rows, ["model", "case"]), "knee", tmp_path,
                                          skip=["vgg16"])
    # MAE: permuted - contaminated (DenseNet-121 +0.500); VGG-16 untrained is left out of the
    # numbers and named; a cell whose one run did not learn the task (MAE 1.0 against a
    # constant's 1.2) has no mean, only the flag
    flag = " (did not learn the task)"
    assert text.startswith("MAE added when the tags are permuted (more means more use of the "
                           f"tag): No XS — ResNet-18{flag}, DenseNet-121 +0.500; TAP — "
                           f"ResNet-18{flag}." + openings_medical.flagged_note())
    # one seed: no paired interval to judge
    assert "Not trained in this profile: VGG-16." in text
    # contaminated MAE 1.0 against a constant's 1.2 is a sixth of the way to 0: neither learned
    # the task
    assert ("not judged here (KNEE ResNet-18: fewer than two seeds where the preconditions hold: "
            "No XS did not learn the task (contaminated MAE 1.000)") in text
    # the page quotes the report's verdicts; for RRR's cell left out it points to its own list
    # of the cells left out, where the report gives the whole reason
    report = claims_table(tmp_path).set_index("id")
    assert report.loc["rrr_rbr_spurious_knee", "reason"] == \
        "left out by this profile: KNEE ResNet-18 RRR: over budget"
    assert report.loc["rrr_rbr_spurious_knee", "reason"] not in text
    assert ("*not run* for “RRR and RBR each let the tag re-emerge on some architecture, "
            "looking as well as TAP and Base” (left out by this profile; why: “Cells left out of "
            "this profile”, below)") in text
    # a page whose table holds no run gives its numbers and no verdict
    write_table(runs.iloc[:0], tmp_path, "pneu_gt_runs", {"data": "PNEU", "origin": "paper"})
    pneu = openings_medical.medical_found(_summary({("resnet18", "none"): (0.9, 0.3)},
                                                   ["model", "case"]), "pneu", tmp_path)
    assert pneu.startswith("F-score lost when the tags are permuted") and "No XS — ResNet-18 +0.600" in pneu
    assert openings_medical.signed(-0.0001) == "0.000" and openings_medical.signed(-0.1) == "-0.100"


def test_speed_opening_gives_ranges_and_both_claims():
    ratios = pd.DataFrame({"model": ["resnet18"] * 3 + ["densenet121"] * 3,
                           "method": ["tap", "rrr", "rbr"] * 2,
                           "speed_ratio": [0.98, 0.40, 0.15, 0.96, 0.50, 0.12],
                           "mem_ratio": [1.00, 1.50, 1.60, 1.02, 1.40, 2.0]})
    for col in ("speed_ratio", "mem_ratio"):  # intervals of ±0.005 over paired rounds
        ratios[f"{col}_lo"], ratios[f"{col}_hi"] = ratios[col] - 0.005, ratios[col] + 0.005
    # the two-layer CNN, timed beside Table 1's deep CNNs as context, is not in the ranges
    cnn = pd.DataFrame({"model": ["two_layer_cnn"] * 2, "method": ["tap", "rrr"],
                        "speed_ratio": [0.50, 0.90], "mem_ratio": [1.3, 1.9]})
    text = openings.speed_found(pd.concat([ratios, cnn], ignore_index=True), "cpu")
    assert text.startswith("TAP trains at ×0.96–0.98 of No XS's speed with ×1.00–1.02 of its peak "
                           "memory on Table 1's 2 deep CNNs; RRR at ×0.40–0.50 and RBR at ×0.12–0.15 "
                           "of its speed.")
    assert "*reproduced* for “TAP keeps at least 0.95" in text and "“RRR and RBR train slower" in text
    # an interval straddling 0.95 (a busy machine) is named as such, not dropped from the sentence
    ratios.loc[3, "speed_ratio_lo"] = 0.90  # DenseNet-121 TAP
    text = openings.speed_found(ratios, "cpu")
    assert "*inconclusive* for “TAP keeps at least 0.95" in text
    assert "*reproduced* for “RRR and RBR train slower" in text


def test_report_opening_counts_every_verdict():
    table = pd.DataFrame({"claim": ["a", "b", "c", "d"],
                          "verdict": ["reproduced", "inconclusive", "not run", "not testable here"]})
    text = openings.report_found(table)
    assert text.startswith("the table below holds 4 claims: 1 *reproduced*, "
                           "1 *inconclusive*, 1 *not testable here*, 1 *not run*.")
    assert "“b”" not in text and text.endswith("and, for a claim not judged, why.")
    # the claims not reproduced are named, three at most
    failed = pd.DataFrame({"claim": list("abcde"), "verdict": ["not reproduced"] * 5})
    assert openings.report_found(failed).endswith(
        "Not reproduced: “a”; “b”; “c”; and 2 more.")
    # a claim that is a sentence keeps one full stop, after the quote
    one = pd.DataFrame({"claim": ["TAP is fast."], "verdict": ["not reproduced"]})
    assert openings.report_found(one).endswith("Not reproduced: “TAP is fast”.")


def test_distillation_and_normalisation_openings(tmp_path):
    kd = _summary({("no teacher", "none"): (0.98, 0.60), ("teacher_10", "tap"): (0.97, 0.95),
                   ("teacher_10", "kd"): (0.97, 0.61)}, ["teacher", "method"])
    text = openings.distillation_found(kd)
    assert text == ("No XS loses 0.380 accuracy when the decoys are permuted; TAP (10% teacher) "
                    "0.020, KD (10% teacher) 0.360. Clearly less than No XS (by more than 0.01): "
                    "TAP (10% teacher), KD (10% teacher).")
    # with the store, the report's verdicts on the page's claims: JT's step 3x KD's, AT's and
    # TAP's (rounds 0-3, paired), its memory 1.25x theirs
    from tapkit.book.report import write_table

    cost = pd.DataFrame([{"method": m, "round": r, "seconds": base * (1 + 0.01 * r),
                          "peak_mem_mb": mem}
                         for m, base, mem in (("none", 0.05, 50.0), ("kd", 0.1, 80.0),
                                              ("at", 0.1, 80.0), ("tap", 0.1, 80.0),
                                              ("jt", 0.3, 100.0))
                         for r in range(4)])
    write_table(cost, tmp_path, "mnist_kd_cost", {"data": "MNIST"})
    judged = openings.distillation_found(kd, tmp_path)
    assert judged.startswith(text + " The reproduction report's verdict: *reproduced* for “JT's")
    table = pd.DataFrame({"method": ["tap"] * 4, "lam": [1e-3, 1e-3, 1e-2, 1e-2],
                          "form": ["equations", "released"] * 2, "status": ["ok"] * 4,
                          "permuted": [0.80, 0.85, 0.70, 0.90]})
    assert openings.normalisation_found(table).endswith(
        "TAP at λ = 1e-2 (0.700 with the equations, 0.900 with the released form, +0.200). So the "
        "same λ does not give the same model.")


def test_data_opening_reads_the_label_off_the_patch():
    from types import SimpleNamespace

    from tapkit.data import MNIST_MEAN, MNIST_STD

    def split(labels, values):
        x = torch.full((len(labels), 1, 4, 4), -MNIST_MEAN / MNIST_STD)
        mask = torch.zeros_like(x)
        mask[:, :, :2, :2] = 1
        for i, v in enumerate(values):   # the patch's brightness, on [0, 255]
            x[i, :, :2, :2] = (v / 255 - MNIST_MEAN) / MNIST_STD
        return SimpleNamespace(x=x, y=torch.tensor(labels), mask=mask)

    train = split([0, 1, 0, 1], [255, 230, 255, 230])     # brightness reveals the label
    permuted = split([0, 1, 0, 1], [230, 230, 255, 255])  # half match
    text = openings.data_found(train, permuted)
    assert text.startswith("read off the patch's brightness alone, the label is right for 100.0% "
                           "of the Decoy-MNIST training images and 50.0% of the permuted")
    assert "(chance 50%); each mask marks 4 of 16 pixels." in text


def test_visual_opening_measures_the_maps_on_the_tag():
    mask = torch.zeros(1, 1, 4, 4)
    mask[..., :2, :2] = 1                               # a quarter of the image
    on = torch.zeros(1, 1, 4, 4)
    on[..., 0, 0] = 1                                   # all mass on the tag
    act_on, act_off = torch.tensor([[[[1.0, 0], [0, 0]]]]), torch.tensor([[[[0, 0], [0, 1.0]]]])
    found = {"No XS": Maps(on, {"l1": act_on}, torch.ones(1, 2)),
             "TAP": Maps(1 - mask, {"l1": act_off}, torch.ones(1, 2))}
    assert openings_medical.mask_share(found["No XS"], mask) == {"input gradient": 1.0,
                                                                 "activations": 1.0}
    text = openings_medical.visual_found((mask, {"TAP": found["TAP"]}), {("pneu", "m"): (mask, found)})
    assert text == ("on the Figure-1 image the tag covers 25.0% of the pixels and holds 0% of TAP's "
                    "input gradient and 0% of its activations. In 1 of the 1 appendix panels with "
                    "both, TAP's activations put less of their mass on the tags than No XS's.")


# --------------------------------------------------------------------------- the chapter

def test_settings_list_the_parameters_and_the_opening_is_marked(tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append((obj, kw)))
    ch = chapter.open_chapter({"profile": "smoke", "seeds": "[3]", "results": str(tmp_path)},
                              "mnist", "mnist", show=True)
    html = shown[0][0].data
    assert "<b>parameters (papermill, as run)</b>" in html
    assert "<td>seeds</td><td><code>[3]</code></td>" in html   # parsed from papermill's string
    ch.opening("TAP did well.")
    md, kw = shown[1]
    assert kw == {"metadata": {chapter.OPENING: True, chapter.TITLE_MARK: ""}}  # MNIST: no mark
    assert md.data.endswith("TAP did well.")


def test_finish_records_the_tables_the_chapter_wrote(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "_WRITTEN", [])
    ch = chapter.open_chapter({"profile": "smoke", "results": str(tmp_path)}, "mnist", "mnist")
    report.write_table(pd.DataFrame({"a": [1]}), ch.root, "mine", {"label": "x"})
    report.write_table(pd.DataFrame({"a": [2]}), tmp_path / "elsewhere", "not_mine")
    report.write_table(pd.DataFrame({"a": [3]}), ch.root, "mine")        # rewritten: listed once
    ch.finish()
    record = json.loads((ch.root / "tables" / "status_mnist.json").read_text())
    assert record["tables"] == ["mine"]


# --------------------------------------------------------------------------- the executed notebook

def _executed(mark: str = "", title: str = "# Title"):
    opening = v4.new_output("display_data", {"text/markdown": "**The paper:** x. **This build**: y.",
                                              "text/plain": "<Markdown>"},
                            metadata={chapter.OPENING: True, chapter.TITLE_MARK: mark})
    return v4.new_notebook(cells=[
        v4.new_markdown_cell(f"{title}\n\nThe chapter's prose."),
        v4.new_code_cell("profile = 'quick'", metadata={"tags": ["parameters"]}),
        v4.new_code_cell("profile = 'smoke'", metadata={"tags": ["injected-parameters"]}),
        v4.new_code_cell("ch = open_chapter(...)", metadata={"tags": ["hide-input"]}),
        v4.new_code_cell("ch.opening(...)\nch.finish();", metadata={"tags": ["hide-input"]},
                         outputs=[opening])])


def test_run_notebook_removes_parameters_and_puts_the_opening_under_the_title():
    rn = _script("run_notebook")
    nb = _executed()
    assert rn.hide_parameters(nb) == 2
    assert rn.place_opening(nb) is True
    assert [c.source.splitlines()[0] for c in nb.cells[:3]] == [
        "# Title", "**The paper:** x. **This build**: y.", "The chapter's prose."]
    assert nb.cells[1].cell_type == "markdown" and nb.cells[1].metadata.tags == ["opening"]
    removed = [c.source for c in nb.cells if "remove-cell" in c.metadata.get("tags", [])]
    assert removed == ["profile = 'quick'", "profile = 'smoke'", "ch.opening(...)\nch.finish();"]
    assert rn.place_opening(nb) is False                      # moved once
    nbformat.validate(nb)
    # a chapter on the digits stand-in says so in its title, once
    nb = _executed(medical.STANDIN_TITLE, "# Knowledge distillation on PNEU")
    rn.place_opening(nb)
    assert nb.cells[0].source == "# Knowledge distillation on PNEU (digit stand-in)"
    nb = _executed(medical.STANDIN_TITLE, "# Setting 1 on PNEU (digit stand-in)")
    rn.place_opening(nb)
    assert nb.cells[0].source == "# Setting 1 on PNEU (digit stand-in)"


def test_build_book_links_a_chapters_tables_under_its_opening(tmp_path):
    bb = _script("build_book")
    tables = tmp_path / "results" / "smoke" / "tables"
    tables.mkdir(parents=True)
    (tables / "mnist_gt.csv").write_text("case,mean\ntap,0.9\n")
    (tables / "mnist_gt.json").write_text('{"label": "x"}')
    (tables / "mnist_gt_runs.csv").write_text("case,seed\ntap,0\n")
    (tables / "status_mnist.json").write_text(json.dumps({"tables": ["mnist_gt", "mnist_gt_runs",
                                                                     "gone"]}))
    files = bb.chapter_tables(tables, "mnist")
    assert [f.name for f in files] == ["mnist_gt.csv", "mnist_gt.json", "mnist_gt_runs.csv"]
    assert bb.chapter_tables(tables, "pneu") == []             # no status record: nothing
    nb = _executed()
    rn = _script("run_notebook")
    rn.place_opening(nb)
    path = tmp_path / "book" / "mnist.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    bb.add_downloads(path, files)
    opening = nbformat.read(path, as_version=4).cells[1].source
    assert opening.endswith(
        "**Tables of this page** (CSV; their provenance as JSON): "
        "{download}`mnist_gt.csv <tables/mnist/mnist_gt.csv>` "
        "({download}`provenance <tables/mnist/mnist_gt.json>`) · "
        "{download}`mnist_gt_runs.csv <tables/mnist/mnist_gt_runs.csv>`")
    assert (tmp_path / "book" / "tables" / "mnist" / "mnist_gt.json").read_text() == '{"label": "x"}'


def test_medical_opening_names_the_seeds_that_did_not_learn_the_task():
    # PNEU F1: a constant predictor scores 0.667; seed 1's TAP run is at 0.68 on its own
    # (contaminated) split, 4% of the way to perfect (LEARNED_SHARE 25%): flagged, not hidden
    runs = pd.DataFrame([{"model": "densenet121", "case": c, "seed": s, "status": "ok",
                          "contaminated": a, "permuted": b, "clean": a, "val_constant": 0.667}
                         for c, s, a, b in [("none", 0, 0.95, 0.30), ("none", 1, 0.96, 0.35),
                                            ("tap", 0, 0.93, 0.90), ("tap", 1, 0.68, 0.70)]])
    assert openings_medical.unlearned(runs, "pneu") == {("densenet121", "tap"): ((1,), 2)}
    assert openings_medical.unlearned(runs.iloc[:2], "pneu") == {}
    assert openings_medical.unlearned(None, "pneu") == {}
    summary = _summary({("densenet121", "none"): (0.955, 0.325),
                        ("densenet121", "tap"): (0.805, 0.80)}, ["model", "case"])
    text = openings_medical.extra_found({"pneu": summary}, {"pneu": runs})
    assert text == ("metric lost when the tags are permuted (more means more use of the tag): "
                    "PNEU F-score: No XS — DenseNet-121 +0.630, TAP — DenseNet-121 +0.030 (seed 1 "
                    "did not learn the task)." + openings_medical.flagged_note())
    # seed 1, a constant's F-score both ways (-0.02), is not averaged in: with it, +0.005 would
    # pass for keeping off the tag; the summary's means still hold it
    assert "+0.005" not in text


def test_setting2_medical_openings_flag_students_that_did_not_learn_the_task(tmp_path):
    from tapkit.book.claim_specs import claims_table
    from tapkit.book.report import write_table

    # PNEU F1, one seed: No XS reads the tag (0.99 -> 0.07); the 10%-teacher TAP student
    # predicts a constant (0.65 on every split, a constant's 0.667), so its 0.000 is flagged, not
    # shown as keeping off the tag; the random-mask student learned (0.90) and is not flagged
    cells = [("none", "none", 0.99, 0.07), ("tap", "teacher_10", 0.65, 0.65),
             ("tap", "random", 0.90, 0.88)]
    runs = pd.DataFrame([{"experiment": "pneu", "model": "resnet18", "method": m,
                          "annotation": a, "tau": 0.01, "seed": 0, "status": "ok",
                          "contaminated": c, "permuted": q, "clean": c, "val_constant": 0.667}
                         for m, a, c, q in cells])
    summary = _summary({("pneu", "resnet18", m, a, 0.01): (c, q) for m, a, c, q in cells},
                       ["experiment", "model", "method", "annotation", "tau"])
    quality = pd.DataFrame({"experiment": ["pneu"], "annotator": ["teacher_10"], "tau": [0.01],
                            "precision": [0.02], "recall": [0.07], "tag_coverage": [0.05]})
    meta = {"data": {"pneu": "the digits stand-in for PNEU"}, "origin": "stand-in",
            "settings": {"seeds": [0]}}
    write_table(summary, tmp_path, "medical_teacher", meta)
    write_table(quality, tmp_path, "medical_annotation_quality", meta)
    text = openings_medical.medical_teachers_found(quality, summary, tmp_path, runs)
    assert text.startswith(
        "PNEU: teacher masks' precision 2.0%–2.0% against random's 5.0%; F-score lost when the "
        "tags are permuted: No XS +0.920, TAP (10% teacher) (did not learn the task), "
        "TAP (random masks) +0.020." + openings_medical._FLAGGED)
    # the report's verdicts, with why they are not judged: the teacher's masks are no better than
    # random (precision 0.02 against the tags' 0.05), its student collapsed, one seed; the page
    # quotes the first two reasons and counts the others (its numbers above flag the collapse)
    report = claims_table(tmp_path).set_index("id")
    assert report.loc["teacher_pneu_works", "reason"].startswith(
        "PNEU: the masks of the 10% teacher mark the tags no better than random ones "
        "(precision 0.40× a random mask's at τ 0.01")
    for claim in ("annotation_better_than_random", "teacher_pneu_works", "tau_recall_precision",
                  "random_masks_fail"):
        assert report.loc[claim, "verdict"] == "not testable here"
        assert report.loc[claim, "chapter"] == "medical_teachers"
    assert "one seed: no interval" in text
    assert re.search(r"; \d+ more in the reproduction report\)", text)
    # without the per-run frame the numbers flag nothing (the summary's means cannot tell)
    numbers = openings_medical.medical_teachers_found(quality, summary, tmp_path).split(
        "The reproduction report")[0]
    assert "did not learn" not in numbers
    # the distillation page: KD's student collapsed, AT's learned
    kd = pd.DataFrame([{"experiment": "pneu", "model": "resnet18", "teacher": t, "method": m,
                        "seed": 0, "status": "ok", "contaminated": c, "permuted": q, "clean": c,
                        "val_constant": 0.667}
                       for t, m, c, q in [("no teacher", "none", 0.99, 0.07),
                                          ("teacher_10", "kd", 0.66, 0.66),
                                          ("teacher_10", "at", 0.94, 0.80)]])
    kd_summary = _summary({(r.experiment, r.model, r.teacher, r.method): (r.contaminated, r.permuted)
                           for r in kd.itertuples()}, ["experiment", "model", "teacher", "method"])
    assert openings_medical.medical_kd_found(kd_summary, kd) == (
        "what each student's metric loses when the tags are permuted (more means more use of the "
        "tag): PNEU ResNet-18 (F-score): No XS +0.920, KD (10% teacher) (did not learn the "
        "task), AT (10% teacher) +0.140." + openings_medical._FLAGGED)
    # with its table written, the page quotes the report's verdicts on its claims, with the
    # same reasons: KD's student collapsed (0.66 against a constant's 0.667), one seed
    write_table(kd_summary, tmp_path, "medical_kd", meta)
    text = openings_medical.medical_kd_found(kd_summary, kd, tmp_path)
    report = claims_table(tmp_path).set_index("id")
    assert report.loc["kd_pneu_jt_kd_fail", "verdict"] == "not testable here"
    # (and the 10% teacher's masks, which TAP's students compared with it trained on, no better
    # than random ones)
    assert "PNEU ResNet-18 KD (10% teacher) did not learn the task (contaminated F1 0.660" in \
        report.loc["kd_pneu_jt_kd_fail", "reason"]
    assert text.startswith(openings_medical.medical_kd_found(kd_summary, kd)) and \
        "PNEU ResNet-18 KD (10% teacher) did not learn the task" in text
    assert report.loc["kd_knee_jt_kd_poor", "verdict"] == "not run"  # PNEU's students only


def test_extra_opening_says_once_when_no_run_learned_the_task():
    # every No XS and TAP run at a constant's F-score (0.667 contaminated, 0.667 permuted)
    rows = {(m, c): (0.667, 0.667) for m in ("efficientnet_b0", "mobilenet_v2")
            for c in ("none", "tap")}
    runs = pd.DataFrame([{"model": m, "case": c, "seed": 0, "status": "ok", "contaminated": a,
                          "permuted": b, "clean": a, "val_constant": 0.667}
                         for (m, c), (a, b) in rows.items()])
    text = openings_medical.extra_found({"pneu": _summary(rows, ["model", "case"])}, {"pneu": runs})
    assert text == ("metric lost when the tags are permuted (more means more use of the tag): "
                    "PNEU F-score: no run of EfficientNet-B0 or MobileNet-v2 learned the task, so "
                    "their 0.000 says nothing about the tag.")


def test_the_teachers_opening_quotes_the_reports_verdict_with_its_precondition(tmp_path):
    """The teachers page and the report judge "TAP's accuracy does not depend on the quality of
    annotations" the same way: the 1% teacher's masks, whose precision on the decoy is 0.92× a
    random mask's (under 1.5×), leave it not testable on both, the teacher's name and lift said
    where the reader meets it."""
    from tapkit.book import claim_table
    from tapkit.experiments.cells import Annotation

    rows = [(Annotation.GROUND_TRUTH.value, "tap", None, 0.960),
            (Annotation.TEACHER_10.value, "tap", 0.01, 0.955),
            (Annotation.TEACHER_1.value, "tap", 0.01, 0.950),
            (Annotation.RANDOM.value, "tap", 0.01, 0.950),
            (Annotation.NONE.value, "none", None, 0.810)]
    summary = pd.DataFrame([{"method": m, "annotation": a, "tau": t, "split": "permuted",
                             "mean": mean, "std": 0.002, "count": 3} for a, m, t, mean in rows])
    quality = pd.DataFrame([{"annotator": a, "rule": "quantile", "tau": 0.01, "precision": p,
                             "lift": lift}
                            for a, p, lift in (("teacher_10", 0.05, 2.5),
                                               ("teacher_1", 0.019, 0.92),
                                               ("random (GT coverage)", 0.020, 1.0))])
    report.write_table(summary, tmp_path, "mnist_teacher", {"threshold": "quantile"})
    report.write_table(quality, tmp_path, "annotation_quality")
    text = openings.teachers_found(quality, summary, tmp_path)
    assert ("the 1% teacher's masks mark the decoy no better than random ones (precision 0.92×"
            in text) and "*reproduced*" not in text
    row = claim_table.claims_table(tmp_path).set_index("id").loc["mnist_annotation_robust"]
    assert row.verdict == "not testable here" and "precision 0.92×" in row.reason

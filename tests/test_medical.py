"""The deep-CNN chapters' pieces: the overlap metric, the PNEU/KNEE folder loaders, the digits
stand-in, the medical run lists, and the visual-comparison figure."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

import dataclasses

from tapkit import data, maps, metrics
from tapkit.book import medical
from tapkit.experiments import protocols, setting1
from tapkit.models import build_model


# ----------------------------------------------------------------------------- overlap metric

def test_overlap_on_a_hand_made_map():
    # 4 x 4 map: the top quartile (4 of 16 pixels by |value|) is (0,0), (0,1), (1,0) and (3,3);
    # a negative value counts by magnitude.
    m = torch.zeros(1, 1, 4, 4)
    m[0, 0, 0, 0], m[0, 0, 0, 1], m[0, 0, 1, 0], m[0, 0, 3, 3] = 5.0, 4.0, -3.0, 2.0
    m[0, 0, 2, 2] = 1.0
    mask = torch.zeros(1, 1, 4, 4)
    mask[0, 0, 0, :] = 1.0         # spurious: the top row (4 px) ...
    mask[0, 0, 1, :2] = 1.0        # ... and two more: 6 px, 3 of them in the top quartile
    recall, precision = metrics.overlap(m, mask)
    assert recall == pytest.approx(3 / 6)
    assert precision == pytest.approx(3 / 4)
    assert metrics.overlap_counts(m, mask) == (3, 6, 4)


def test_overlap_sums_channels_and_upsamples_a_small_map():
    # 2 x 2 activation [[1, 0], [0, 0]] split over two channels; bilinear upsampling to 4 x 4 makes
    # the top-left 2 x 2 block the four largest values (1, .75, .75, .5625).
    act = torch.zeros(1, 2, 2, 2)
    act[0, 0, 0, 0], act[0, 1, 0, 0] = 0.25, 0.75
    mask = torch.zeros(1, 1, 4, 4)
    mask[0, 0, :2, :2] = 1.0
    mask[0, 0, 0, 2:] = 1.0        # 6 spurious pixels, 4 of them in the top quartile
    recall, precision = metrics.overlap(act, mask)
    assert recall == pytest.approx(4 / 6)
    assert precision == pytest.approx(1.0)


def test_overlap_by_layer_pools_counts_over_batches():
    torch.manual_seed(0)
    model = build_model("two_layer_cnn", 2, 3, image_size=28).model.eval()
    x = torch.randn(5, 3, 28, 28)
    mask = torch.zeros(5, 1, 28, 28)
    mask[:, :, :6, :10] = 1.0
    layers = ["relu1", "relu2"]
    whole = maps.overlap_by_layer(model, x, mask, layers, batch_size=5)
    pieces = maps.overlap_by_layer(model, x, mask, layers, batch_size=2)
    assert list(whole) == ["ig", "act1", "act2"]
    for name in whole:
        assert pieces[name] == pytest.approx(whole[name])
        assert all(0.0 <= v <= 1.0 for v in whole[name])
    found = maps.explain(model, x, layers)
    assert whole["ig"] == pytest.approx(metrics.overlap(found.input_grad, mask))


# ----------------------------------------------------------------------------- folder loaders

def _image(path, width=60, height=40, seed=0):
    """A non-square grey image: the centre square is 200, the left margin 0, the right 100, so a
    wrong crop shows."""
    arr = np.full((height, width), 200, np.uint8)
    margin = (width - height) // 2
    arr[:, :margin] = 0
    arr[:, width - margin:] = 100
    arr[height // 2, width // 2] = 190 + seed % 10
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(arr).save(path)


def _pneu_folder(tmp_path, train=10, test=3):
    root = tmp_path / "chest_xray"
    for split, n in (("train", train), ("test", test)):
        for cls in ("NORMAL", "PNEUMONIA"):
            for i in range(n):
                _image(root / split / cls / f"img{i}.jpeg", seed=i)
    return tmp_path


def _knee_folder(tmp_path, train=10, test=2):
    root = tmp_path / "kneeKL224"
    for split, n in (("train", train), ("val", 1), ("test", test)):
        for grade in range(5):
            for i in range(n):
                _image(root / split / str(grade) / f"k{i}.png", width=40, height=56, seed=i)
    return tmp_path


def test_load_image_centre_crops_a_non_square_image(tmp_path):
    _image(tmp_path / "wide.png", width=60, height=40)
    out = data.load_image(tmp_path / "wide.png", 20)
    assert out.shape == (20, 20)
    assert np.abs(out - 200).max() <= 12        # only the centre square (no 0 or 100 margins)
    arr = np.zeros((50, 30), np.uint8)
    arr[10:40] = 255                             # tall image: rows 10..39 are the centre square
    Image.fromarray(arr).save(tmp_path / "tall.png")
    assert data.load_image(tmp_path / "tall.png", 15).min() == 255


def test_pneu_folder_loads_the_medical_protocol(tmp_path):
    task, splits = data.pneu(_pneu_folder(tmp_path), seed=0, size=32)
    assert (task.name, task.num_classes, task.in_channels, task.image_size, task.metric) == \
        ("pneu", 2, 3, 32, "f1")
    assert splits["train"].x.shape == (18, 3, 32, 32)      # 20 training images, 10% to validation
    assert len(splits["val"]) == 2
    for name in ("test_contaminated", "test_permuted", "test_clean"):
        assert splits[name].x.shape == (6, 3, 32, 32)
        assert set(splits[name].y.tolist()) == {0, 1}
    assert splits["test_clean"].mask.sum() == 0
    assert (splits["train"].mask.flatten(1).sum(1) > 0).all()   # every training image is tagged


def test_pneu_reached_through_load_experiment_with_a_folder_source(tmp_path):
    task, splits = data.load_experiment("pneu", source=str(_pneu_folder(tmp_path)), image_size=32)
    assert task.name == "pneu" and len(splits["test_clean"]) == 6


def test_knee_folder_loads_five_grades_and_stripes(tmp_path):
    task, splits = data.knee(_knee_folder(tmp_path), size=32, artifact="stripe")
    assert (task.name, task.num_classes, task.metric) == ("knee", 5, "mae")
    assert set(splits["test_clean"].y.tolist()) == {0, 1, 2, 3, 4}
    assert splits["train"].x.shape[1:] == (3, 32, 32)
    # a stripe runs the full height of the image
    assert (splits["train"].mask[:, 0].sum(1) % 32 == 0).all()


def test_missing_folder_raises_a_clear_error(tmp_path):
    with pytest.raises(data.DataNotFoundError, match="Expected layout: chest_xray"):
        data.pneu(tmp_path / "nowhere", size=32)
    with pytest.raises(data.DataNotFoundError, match="kneeKL224"):
        data.knee(tmp_path, size=32)


def test_malformed_folders_raise_clear_errors(tmp_path):
    root = tmp_path / "chest_xray"
    _image(root / "train" / "NORMAL" / "a.jpeg")
    with pytest.raises(data.DataNotFoundError, match="missing folder .*PNEUMONIA"):
        data.pneu(tmp_path, size=32)
    (root / "train" / "PNEUMONIA").mkdir()
    with pytest.raises(data.DataNotFoundError, match=r"no \*\.jpeg files"):
        data.pneu(tmp_path, size=32)


# ----------------------------------------------------------------------------- digits stand-in

@pytest.fixture(scope="module")
def standin():
    return {task: data.digits_standin(task, seed=0, size=32, per_class=20)
            for task in ("pneu", "knee")}


@pytest.mark.parametrize("task,classes", [("pneu", 2), ("knee", 5)])
def test_standin_shapes_and_classes(standin, task, classes):
    info, splits = standin[task]
    assert (info.num_classes, info.in_channels, info.image_size) == (classes, 3, 32)
    assert info.metric == ("f1" if classes == 2 else "mae")
    assert len(splits["train"]) + len(splits["val"]) == 20 * classes
    assert splits["train"].x.shape[1:] == (3, 32, 32)
    for split in splits.values():
        assert set(split.y.tolist()) <= set(range(classes))
        assert split.mask.shape == (len(split), 1, 32, 32)
    assert set(splits["test_clean"].y.tolist()) == set(range(classes))


@pytest.mark.parametrize("task", ["pneu", "knee"])
def test_standin_masks_lie_exactly_on_the_tags(standin, task):
    _, splits = standin[task]
    tagged, clean = splits["train"], splits["train_clean"]
    changed = (tagged.x != clean.x).any(1, keepdim=True)
    assert not (changed & (tagged.mask == 0)).any()          # nothing changes outside the mask
    for i in range(len(tagged)):
        rows, cols = torch.nonzero(tagged.mask[i, 0], as_tuple=True)
        box = tagged.mask[i, 0, rows.min():rows.max() + 1, cols.min():cols.max() + 1]
        assert box.all()                                       # one solid box ...
        assert changed[i, 0, rows.min():rows.max() + 1, cols.min():cols.max() + 1].any()
        corner_r = rows.min() <= 2 or rows.max() >= 29        # ... in a corner
        corner_c = cols.min() <= 2 or cols.max() >= 29
        assert corner_r and corner_c
        assert rows.max() - rows.min() + 1 >= data.MIN_TAG_PX - 1   # legible at 32 px
    assert splits["test_clean"].mask.sum() == 0


def test_standin_test_size_is_a_setting_of_its_own(standin):
    # default: max(per_class // 4, 10) test digits per class, as before
    assert len(standin["pneu"][1]["test_clean"]) == 2 * 10
    _, splits = data.digits_standin("knee", seed=0, size=32, per_class=20, test_per_class=30)
    assert len(splits["test_clean"]) == len(splits["test_permuted"]) == 5 * 30
    assert np.bincount(splits["test_clean"].y.numpy()).tolist() == [30] * 5
    # through the protocol: the quick profile's 100 (PNEU) / 60 (KNEE) test digits per class
    s = protocols.medical("quick")
    cfg = medical.case_config(s, "knee", "resnet18", "none", None, 0)
    assert (cfg.per_class, cfg.test_per_class) == (100, 60)
    # it is part of the config's hash
    assert cfg.key() != cfg.replace(test_per_class=None).key()


def test_standin_rejects_an_unknown_task():
    with pytest.raises(ValueError, match="unknown stand-in task"):
        data.digits_standin("chest", size=32, per_class=2)


# ----------------------------------------------------------------------------- run lists

def test_medical_runs_use_the_paper_lambdas_and_batchnorm_eval_for_rbr():
    s = medical.chapter_settings("quick", not_run={})  # every cell, at the paper's λ
    runs = medical.medical_runs(s, "pneu", ["vgg16", "resnet18"], setting1.cases())
    by = {(r.model, r.method): r.cfg for r in runs}
    # VGG-16 and ResNet-18 on five seeds (the quick profile's model_seeds), but Base on the
    # first and ResNet-18's RRR on three (its case_seeds)
    assert s.seeds == (0, 1, 2, 3, 4)
    assert len(runs) == len(setting1.cases()) * (5 + 5) - (4 + 4) - 2
    assert [r.seed for r in runs if r.model == "resnet18" and r.method == "tap"] == [0, 1, 2, 3, 4]
    assert [r.seed for r in runs if r.model == "resnet18" and r.method == "base"] == [0]
    assert by["resnet18", "tap"].lam == 1e-3 and by["resnet18", "rbr"].lam == 1e7
    assert by["vgg16", "tap"].lam == 1e-7
    assert all(by[m, c].options.batchnorm == "running" for m in ("resnet18", "vgg16")
               for c in ("rrr", "rbr"))
    assert by["resnet18", "base"].data == "clean" and by["resnet18", "base"].method == "none"
    assert by["resnet18", "none"].data == "contaminated"
    vgg = s.model_overrides["vgg16"]
    assert by["vgg16", "none"].epochs == vgg["epochs"] and by["resnet18", "none"].epochs == s.epochs
    assert by["vgg16", "none"].model == "vgg16_quarter" and by["vgg16", "none"].lr == 3e-4
    stripe = medical.medical_runs(s, "knee", ["resnet18"], ["tap"], "stripe")
    assert stripe[0].cfg.artifact == "stripe" and stripe[0].cfg.lam == 1e-3


def test_medical_runs_accept_lambda_overrides_and_extra_architectures():
    s = medical.chapter_settings("quick", epochs=1)
    assert s.model_overrides == {}
    runs = medical.medical_runs(s, "knee", ["resnet18", "mobilenet_v2"], ["tap"],
                                lambdas={"resnet18": {"tap": 0.5}})
    assert [(r.cfg.lam, r.seed) for r in runs] == [(0.5, s) for s in range(5)] + [(1e-5, 0)]
    assert medical.has_batchnorm("mobilenet_v2") and not medical.has_batchnorm("vgg16")
    with pytest.raises(ValueError, match="unknown case"):
        medical.case_config(s, "pneu", "resnet18", "jt", 1.0, 0)


def test_standin_note_and_names_say_what_the_data_is():
    s = protocols.medical("quick")
    assert "not PNEU" in medical.data_name(s, "pneu")
    assert "Stand-in data, not KNEE" in medical.standin_note(s, "knee")
    # each stand-in says how tall its tags are: KNEE's calibrated 14 px, PNEU's the default
    assert "tags 14 px tall" in medical.standin_note(s, "knee")
    assert "tags at least 10 px tall" in medical.standin_note(s, "pneu")
    # the sizes the chapter's architectures train at: the appendix architectures' own (32 px,
    # 28 digits per class), the main chapters' otherwise; VGG-16 (at 64 px as the others on
    # PNEU since 2026-11-30) is named only where it trains at a size of its own
    extra = medical.standin_note(s, "pneu", ["efficientnet_b0", "mobilenet_v2"])
    assert "32×32 px, 28 images per class for training and validation, 100 per class" in extra
    main = medical.standin_note(s, "pneu", ["vgg16", "resnet18", "densenet121"])
    assert "64×64 px, 300 images per class for training and validation, 100 per class" in main
    assert "VGG-16" not in main and "32×32" not in main
    own = dataclasses.replace(s, model_overrides={"vgg16": {"image_size": 32}})
    assert "VGG-16: 32×32 px" in medical.standin_note(own, "pneu", ["vgg16", "resnet18"])
    real = dataclasses.replace(s, source="/data/knee")
    assert medical.data_name(real, "knee").startswith("KNEE")
    assert "stand-in" not in medical.standin_note(real, "knee").lower()


# ----------------------------------------------------------------------------- visual comparison

def test_plot_maps_draws_a_grid_with_the_tag_marked():
    from matplotlib.patches import Rectangle

    torch.manual_seed(0)
    x = torch.randn(2, 3, 28, 28)
    mask = torch.zeros(2, 1, 28, 28)
    mask[:, :, 1:7, 2:14] = 1.0
    layers = ["relu1", "relu2"]
    explained = {name: maps.explain(build_model("two_layer_cnn", 2, 3, image_size=28).model.eval(),
                                    x, layers) for name in ("No XS", "TAP")}
    fig = maps.plot_maps(x, mask, explained, ["act 1", "act 2"], title="tiny")
    axes = fig.axes
    assert len(axes) == 2 * 2 * (2 + len(layers))            # images x models rows, 4 columns
    assert all(any(isinstance(p, Rectangle) for p in ax.patches) for ax in axes)
    assert axes[1].get_title() == "input gradient"
    with pytest.raises(ValueError, match="empty"):
        maps.plot_maps(x, mask, {}, ["act 1"])
    with pytest.raises(ValueError, match="do not match"):
        maps.plot_maps(x, mask, explained, ["only one"])
    matplotlib.pyplot.close(fig)


def _untrained_quick():
    """The quick profile with nothing trained: no epochs, four test digits a class, and a
    pretrained start of no epochs on two digits a class (its weights still travel through the
    store, as in the chapters)."""
    s = medical.chapter_settings("quick", epochs=0, seeds=[0], per_class={"pneu": 12, "knee": 12})
    return dataclasses.replace(s, test_per_class={"pneu": 4, "knee": 4},
                               pretraining=dataclasses.replace(s.pretraining, epochs=0,
                                                               per_class=2))


def test_trained_reads_a_stored_model_without_initialising_it(tmp_path):
    s = _untrained_quick()
    run = medical.medical_runs(s, "pneu", ["resnet18"], ["none"])[0]
    model, task, splits = medical.trained(run, tmp_path)
    assert task.name == "pneu-standin" and not model.training
    stored = torch.load(tmp_path / "runs" / run.cfg.key() / "model.pt", weights_only=True)
    assert all(torch.equal(stored[k], v) for k, v in model.state_dict().items())
    frame = medical.overlap_frame([run], tmp_path, max_images=4)
    assert set(frame.layer) == {"ig", "act1", "act2", "act3", "act4"}
    assert frame.value.between(0, 1).all()


def test_overlap_images_are_spread_over_a_split_ordered_by_class():
    from tapkit.experiments.medical_maps import spread
    y = torch.arange(3).repeat_interleave(4)  # 0000 1111 2222, as the test splits are ordered
    assert spread(12, 6).tolist() == [0, 2, 4, 7, 9, 11]
    assert y[spread(12, 6)].bincount().tolist() == [2, 2, 2]  # the first 6 would be 4 + 2 + 0
    assert spread(12, None).tolist() == spread(12, 50).tolist() == list(range(12))
    with pytest.raises(ValueError, match="positive number of images"):
        spread(12, 0)


# ----------------------------------------------------------------------------- quick profile cells

def test_quick_profile_leaves_cells_out_with_a_reason_and_searches_per_architecture():
    s = protocols.medical("quick")
    runs = medical.medical_runs(s, "pneu", medical.ARCHITECTURES, setting1.cases(), lambdas={"tap": 1.0, "rrr": 1.0})
    # five seeds of each ResNet-18 cell, four of DenseNet-121's (three on KNEE), five of
    # VGG-16's (its quarter width, PNEU only) without its RRR and RBR
    assert [r.seed for r in runs if r.model == "resnet18" and r.method == "none"] == [
        0, 1, 2, 3, 4]
    assert [r.seed for r in runs if r.model == "densenet121" and r.method == "none"] == [
        0, 1, 2, 3]
    knee = medical.medical_runs(s, "knee", ["densenet121"], ["tap"], lambdas={"tap": 1.0})
    assert [r.seed for r in knee] == [0, 1, 2]
    assert sorted({(r.method, r.seed) for r in runs if r.model == "vgg16"}) == [
        ("base", 0), *((c, seed) for c in ("none", "tap") for seed in range(5))]
    assert medical.run_models(s, "pneu", medical.ARCHITECTURES, setting1.cases()) == [
        "vgg16", "resnet18", "densenet121"]
    assert medical.run_models(s, "knee", medical.ARCHITECTURES, setting1.cases()) == [
        "resnet18", "densenet121"]
    # RRR on every one of DenseNet-121's four seeds and the first three of ResNet-18's five
    # (case_seeds by architecture)
    assert sorted(r.seed for r in runs if (r.model, r.method) == ("densenet121", "rrr")) == [
        0, 1, 2, 3]
    assert sorted(r.seed for r in runs if (r.model, r.method) == ("resnet18", "rrr")) == [
        0, 1, 2]
    runs = [r for r in runs if r.seed == 0]
    assert [(r.model, r.method) for r in runs] == [
        ("vgg16", "base"), ("vgg16", "none"), ("vgg16", "tap"),
        ("resnet18", "base"), ("resnet18", "none"), ("resnet18", "rrr"), ("resnet18", "tap"),
        ("densenet121", "base"), ("densenet121", "none"), ("densenet121", "rrr"),
        ("densenet121", "tap")]
    assert {r.model: r.cfg.epochs for r in runs} == {"vgg16": 4, "resnet18": 3, "densenet121": 3}
    assert {r.model: r.cfg.image_size for r in runs} == {
        "vgg16": 64, "resnet18": 64, "densenet121": 64}
    left = medical.left_out(s, "pneu", medical.ARCHITECTURES, setting1.cases())
    assert sorted(left) == sorted([("vgg16", "rrr"), ("vgg16", "rbr"), ("resnet18", "rbr"),
                                   ("densenet121", "rbr")])
    # KNEE leaves both RRRs out: ResNet-18's did not learn the task at 14-px tags, and
    # DenseNet-121's four PNEU seeds are what the budget holds
    # and VGG-16 (no TAP λ kept its quarter width off KNEE's tag while it learned)
    knee_left = medical.left_out(s, "knee", medical.ARCHITECTURES, setting1.cases())
    assert sorted(knee_left) == sorted(
        [*left, ("resnet18", "rrr"), ("densenet121", "rrr"),
         *((("vgg16", c) for c in ("base", "none", "tap")))])
    assert "double backward" in left["vgg16", "rrr"] and "no TAP λ" in knee_left["vgg16", "none"]
    # not_run may be keyed by experiment first
    by_exp = dataclasses.replace(s, not_run={"knee": {"resnet18": {"tap": "why"}}})
    assert medical.left_out(by_exp, "knee", ["resnet18"], ["tap"]) == {("resnet18", "tap"): "why"}
    assert medical.left_out(by_exp, "pneu", ["resnet18"], ["tap"]) == {}
    # one reason for an architecture leaves every case of it out
    whole = dataclasses.replace(s, not_run={"resnet18": "why"})
    assert medical.left_out(whole, "knee", ["resnet18"], ["base", "tap"]) == {
        ("resnet18", "base"): "why", ("resnet18", "tap"): "why"}
    assert s.grid("rrr", "resnet18") == (0.1,) and s.grid("rrr", "vgg16") == ()
    # one grid for every architecture still works (the paper's, or a -p grids override)
    assert dataclasses.replace(s, search={"tap": (1e-3,)}).grid("tap", "vgg16") == (1e-3,)


def test_search_findings_flag_a_near_chance_choice():
    import pandas as pd
    from tapkit.experiments import plans

    # ResNet-18 TAP on the PNEU stand-in, measured (docs/standin-research.md): λ = 1 has the
    # lowest val_loss but its training loss stayed at ln 2
    search = pd.DataFrame({"model": ["resnet18"] * 3, "method": ["tap"] * 3,
                           "lam": [1e-2, 1e-1, 1.0], "val_loss": [1.119, 0.846, 0.682],
                           "task_loss_last": [0.21, 0.55, 0.69], "contaminated": [0.922, 0.581, 0.681],
                           "permuted": [0.566, 0.522, 0.676], "clean": [0.783, 0.578, 0.685],
                           "status": ["ok"] * 3})
    choice = plans.choose_lambdas(search, ["model", "method"])
    text = medical.search_findings(search, choice, "pneu")
    assert "λ = 1 " in text and "near-chance" in text
    assert medical.search_table(search, choice).chosen.tolist() == ["", "", "✓"]
    assert "within 5% of ln 2" in text and "no better than a constant" not in text  # 0.685 > 2/3
    # the clean-score criterion alone: KNEE DenseNet-121 TAP λ 0.1, measured (clean MAE 1.283)
    knee = pd.DataFrame({"model": ["densenet121"], "method": ["tap"], "lam": [0.1],
                         "val_loss": [1.363], "task_loss_last": [1.222], "contaminated": [1.277],
                         "permuted": [1.343], "clean": [1.283], "status": ["ok"]})
    text = medical.search_findings(knee, plans.choose_lambdas(knee, ["model", "method"]), "knee")
    assert "clean MAE (1.283) is no better than a constant prediction's (1.200)" in text
    assert "ln 5" not in text
    # λ 1e-3 / 1e-2, measured: 1e-2 is chosen and learned the digits (clean F1 0.783)
    good = pd.DataFrame({"model": ["resnet18"] * 2, "method": ["tap"] * 2, "lam": [1e-3, 1e-2],
                         "val_loss": [4.627, 1.119], "task_loss_last": [0.04, 0.21],
                         "contaminated": [0.995, 0.922], "permuted": [0.021, 0.566],
                         "clean": [0.710, 0.783], "status": ["ok"] * 2})
    fine = medical.search_findings(good, plans.choose_lambdas(good, ["model", "method"]), "pneu")
    assert "λ = 1e-2 " in fine and "near-chance" not in fine
    assert medical.constant_score("knee") == pytest.approx(1.2)  # always grade 2 on grades 0-4


# ----------------------------------------------------------------------------- overlap chapter tables

def _overlap_rows():
    """overlap_beside_paper-shaped rows: PNEU, ResNet-18, No XS and TAP, recall at ig/act1/act2."""
    rows = []
    for case, values, paper in (("none", (0.6, 0.5, 0.4), (0.7, None, 0.5)),
                                ("tap", (0.3, 0.1, 0.2), (0.25, 0.05, 0.1))):
        for layer, ours, p in zip(("ig", "act1", "act2"), values, paper):
            rows.append({"dataset": "PNEU", "model": "resnet18", "case": case, "metric": "recall",
                         "layer": layer, "ours": ours, "paper": p})
    rows.append({"dataset": "KNEE", "model": "resnet18", "case": "tap", "metric": "recall",
                 "layer": "ig", "ours": 0.9, "paper": 0.2})
    return pd.DataFrame(rows).astype({"paper": float})


def test_overlap_table_prints_ours_with_the_papers_per_layer():
    from tapkit.book import overlap_tables

    table = overlap_tables.overlap_table(_overlap_rows(), "recall", "pneu", ["resnet18", "vgg16"],
                                         ["none", "tap"], ["ig", "act2"],
                                         left={("vgg16", "tap"): "not in the quick profile"})
    assert list(table.columns) == ["ig", "act2"]
    assert table.loc[("ResNet-18", "No XS")].tolist() == ["0.60 (0.70)", "0.40 (0.50)"]
    assert table.loc[("ResNet-18", "TAP")].tolist() == ["0.30 (0.25)", "0.20 (0.10)"]
    assert table.loc[("VGG-16", "TAP")].tolist() == ["not run", "not run"]
    assert table.loc[("VGG-16", "No XS")].isna().all()          # neither run nor left out
    act1 = overlap_tables.overlap_table(_overlap_rows(), "recall", "pneu", ["resnet18"], ["none"],
                                        ["act1"])
    assert act1.loc[("ResNet-18", "No XS"), "act1"] == "0.50 (–)"   # the paper gives none


def test_mean_recall_averages_a_case_over_layers_per_dataset_and_model():
    from tapkit.book import overlap_tables

    rows = _overlap_rows()
    tap = overlap_tables.mean_recall(rows, "tap", ["act1", "act2"])
    assert tap.to_dict() == {("PNEU", "resnet18"): pytest.approx(0.15)}
    assert overlap_tables.mean_recall(rows, "tap", ["ig"]).to_dict() == {
        ("KNEE", "resnet18"): 0.9, ("PNEU", "resnet18"): 0.3}
    shown = overlap_tables.committed_view(rows)
    assert shown.loc[("PNEU", "resnet18", "none"), ("recall", "act2")] == 0.4


# ----------------------------------------------------------------------------- visual chapter

def test_visual_figure_shows_the_chapters_models_on_the_same_test_images(tmp_path):
    from tapkit.book import chapter, visual

    s = _untrained_quick()
    ch = chapter.Chapter("visual", "quick", s, tmp_path, "cpu", ("pneu",))
    shown = visual.explained(ch, "pneu", "resnet18", ["none", "tap"], 3, image_seed=1)
    run = medical.medical_runs(s, "pneu", ["resnet18"], ["none"])[0]
    model, _, splits = medical.trained(run, tmp_path)
    test = splits["test_contaminated"]
    idx = np.sort(np.random.default_rng(1).choice(len(test), 3, replace=False))
    assert torch.equal(shown.images, test.x[idx]) and torch.equal(shown.masks, test.mask[idx])
    assert list(shown.maps) == ["No XS", "TAP"]
    expected = maps.explain(model, test.x[idx], medical.overlap_layers("resnet18"))
    torch.testing.assert_close(shown.maps["No XS"].input_grad, expected.input_grad)
    assert list(shown.maps["TAP"].activations) == ["layer1", "layer2", "layer3", "layer4"]
    assert shown.label.startswith("profile quick · cpu")
    masks, found = visual.figure(ch, "pneu", "resnet18", ["none"], 3, "visual_test", "Test",
                                 image_seed=1)
    assert torch.equal(masks, test.mask[idx]) and list(found) == ["No XS"]
    assert (tmp_path / "figures" / "visual_test.png").stat().st_size > 1000
    matplotlib.pyplot.close("all")


def test_seed_table_gives_intervals_and_the_paired_difference_to_no_xs():
    # reliance (F-score lost when the tags are swapped): No XS 0.6, 0.5, 0.4; TAP 0.05, 0.06,
    # 0.04; paired No XS - TAP 0.55, 0.44, 0.36: mean 0.45, sd 0.0954, half-width 4.303 * 0.0954
    # / sqrt(3) = 0.237
    runs = pd.DataFrame({"model": ["resnet18"] * 6 + ["vgg16"] * 2,
                         "case": ["none"] * 3 + ["tap"] * 3 + ["none", "tap"],
                         "seed": [0, 1, 2, 0, 1, 2, 0, 0], "status": "ok", "contaminated": 0.95,
                         "permuted": [0.35, 0.45, 0.55, 0.90, 0.89, 0.91, 0.5, 0.88],
                         "clean": 0.9})
    t = medical.seed_table(runs, "pneu").set_index(["architecture", "method"])
    assert t.loc[("ResNet-18", "No XS"), "reliance on the tag"] == "0.500 [0.252, 0.748] (3 seeds)"
    assert t.loc[("ResNet-18", "TAP"), "No XS − this reliance (paired)"] == \
        "0.450 [0.213, 0.687] (3 seeds)"
    assert t.loc[("VGG-16", "TAP"), "seeds"] == 1 and "no interval" in t.loc[("VGG-16", "TAP"),
                                                                            "clean F-score"]


def test_a_collapsed_seed_is_named_and_not_averaged_into_taps_reliance():
    # PNEU F-score, a constant scores 0.667: TAP's seed 2 predicts one (0.667 both ways), so it
    # loses nothing when the tags are permuted; averaged in, TAP's Δ would read -0.027 (the
    # three seeds' means 0.856 -> 0.829), over the two that learned it reads -0.040
    runs = pd.DataFrame({"model": "resnet18", "case": ["none"] * 3 + ["tap"] * 3,
                         "seed": [0, 1, 2] * 2, "status": "ok", "val_constant": 0.667,
                         "contaminated": [0.95] * 5 + [0.667],
                         "permuted": [0.35, 0.45, 0.55, 0.90, 0.92, 0.667],
                         "clean": [0.9] * 5 + [0.667]})
    summary = pd.DataFrame([{"model": "resnet18", "case": c, "split": sp, "mean": g[sp].mean()}
                            for c, g in runs.groupby("case")
                            for sp in ("contaminated", "permuted", "clean")])
    text = medical.findings(summary, medical.task_metric("pneu"), ["resnet18"], ["none", "tap"],
                            runs=runs)
    assert "TAP -0.040 (clean 0.900; seed 2 did not learn the task and is left out)" in text
    assert "-0.027" not in text
    assert "TAP -0.027 (clean 0.822)" in medical.findings(summary, medical.task_metric("pneu"),
                                                          ["resnet18"], ["none", "tap"])
    # a No XS that learned the task in no seed (F1 0: one class) is not said to ignore the tag
    flat = runs.assign(contaminated=0.0, permuted=0.0, clean=0.0)
    flat_summary = summary.assign(mean=0.0)
    text = medical.findings(flat_summary, medical.task_metric("pneu"), ["resnet18"],
                            ["none", "tap"], runs=flat)
    assert "it did not learn the task in any seed" in text and "did not learn the tag" not in text
    # the stripe appendix's findings speak of the stripe; the cells its stripe cases leave out
    # (quick: Base, RRR and RBR) are named with that reason, not their tag cells' (RBR's cost)
    quick = protocols.medical("quick")
    left = medical.stripe_left_out(quick, "pneu", ["resnet18"], setting1.cases())
    assert left == dict.fromkeys([("resnet18", c) for c in ("base", "rrr", "rbr")],
                                 setting1.STRIPES_FEWER)
    narrow = dataclasses.replace(quick, stripe_cases=("none", "tap", "rbr"))
    assert "RBR costs" in medical.stripe_left_out(narrow, "pneu", ["resnet18"],
                                                  setting1.cases())[("resnet18", "rbr")]
    text = medical.findings(summary, medical.task_metric("pneu"), ["resnet18"],
                            setting1.cases(), left=left, artifact="stripe")
    assert "when the stripes are permuted (Δ -0.500): it learned the stripe" in text
    assert "Not run here: Base, RRR, RBR." in text and "tag" not in text
    t = medical.seed_table(runs, "pneu").set_index(["architecture", "method"])
    # reliance 0.05 and 0.03: mean 0.040, t(1) 12.706 * 0.01414 / sqrt(2) = 0.127
    assert t.loc[("ResNet-18", "TAP"), "reliance on the tag"] == "0.040 [-0.087, 0.167] (2 seeds)"
    assert t.loc[("ResNet-18", "TAP"), "seeds"] == 3  # the clean score still reads all three
    assert "seed 2: TAP did not learn the task" in t.loc[("ResNet-18", "TAP"),
                                                         "not judged (precondition)"]
    import matplotlib
    matplotlib.use("Agg")
    fig = medical.plot_results(summary, medical.task_metric("pneu"), ["resnet18"], ["none", "tap"],
                               "t", runs=runs)
    # the Δ panel's bars: No XS -0.50, TAP -0.040 (not the three seeds' -0.027)
    assert [round(b.get_height(), 3) for b in fig.axes[1].patches] == [-0.5, -0.04]
    matplotlib.pyplot.close(fig)


def test_a_cell_not_run_keeps_the_papers_number_beside_not_run():
    """Issue 39: the paper's number stays visible where ours did not run, never NaN."""
    import pandas as pd

    ours = pd.DataFrame([{"model": "resnet18", "case": "none", "split": sp, "mean": 0.9,
                          "std": 0.01} for sp in ("contaminated", "permuted", "clean")])
    paper = pd.DataFrame([{"model": m, "case": "none", "split": sp, "mean": v, "std": 0.002}
                          for m, v in (("resnet18", 0.95), ("vgg16", 0.986))
                          for sp in ("contaminated", "permuted", "clean")])
    both = medical.report.beside(ours, paper, ["model", "case", "split"])
    table = medical.wide_table(both, ["vgg16", "resnet18"], ["none", "tap"],
                               {("vgg16", "none"): "too slow here", ("vgg16", "tap"): "too slow here",
                                ("resnet18", "tap"): "not on this data"}, paper)
    vgg, res = table.loc[("VGG-16", "No XS")], table.loc[("ResNet-18", "No XS")]
    assert vgg["permuted (ours)"] == "not run [1]" and vgg["permuted (paper)"] == "0.986 (0.002)"
    assert table.loc[("VGG-16", "TAP"), "clean (ours)"] == "not run [1]"  # one reason, one mark
    assert table.loc[("ResNet-18", "TAP"), "clean (ours)"] == "not run [2]"
    assert table.attrs["notes"] == ["too slow here", "not on this data"]
    assert not any("why" in c for c in table.columns)
    assert res["permuted (ours)"] == "0.900 (0.010)" and res["permuted (paper)"] == "0.950 (0.002)"


def test_the_per_architecture_note_names_only_the_pages_architectures():
    """The quick profile trains the appendix's two architectures on smaller data: their page
    says so, the pages of the paper's three (where they are not shown) do not; VGG-16's quarter
    width is said where VGG-16 is shown."""
    from tapkit.book import medical_notes
    from tapkit.experiments import protocols

    s = protocols.medical("quick")
    every = medical_notes.override_note(s)
    assert "EfficientNet-B0 is trained with 28 (PNEU) / 12 (KNEE) images per class" in every
    only = medical_notes.override_note(s, ["efficientnet_b0"])
    assert "EfficientNet-B0" in only and "MobileNet-v2" not in only
    assert medical_notes.override_note(s, ["resnet18", "densenet121"]) == ""
    main = medical_notes.override_note(s, ["vgg16", "resnet18", "densenet121"])
    assert "VGG-16 is <code>vgg16_quarter</code>" in main and "EfficientNet" not in main


def test_a_stand_in_page_counts_the_seeds_of_its_own_data_set():
    """The KNEE page quotes KNEE's seeds, not PNEU's: on the quick profile ResNet-18 trains five
    KNEE seeds and three PNEU ones, DenseNet-121 the reverse; RRR, which no architecture trains
    on KNEE, is not named there."""
    s = protocols.medical("quick", model_seeds={"resnet18": {"pneu": 3, "knee": 5},
                                                "densenet121": {"pneu": 5, "knee": 3}},
                          case_seeds={"base": 1, "rrr": 4})
    models = ["resnet18", "densenet121"]
    pneu = medical.standin_caveat(s, models, "pneu")
    knee = medical.standin_caveat(s, models, "knee")
    # RRR's four seeds are ResNet-18's three there: each architecture's count is named
    assert "Each cell is 5 seeds (ResNet-18: 3, Base: 1, RRR: 3 (DenseNet-121: 4))" in pneu
    assert "Each cell is 5 seeds (DenseNet-121: 3, Base: 1) of" in knee
    assert medical.budget_note(s, "knee", 60).startswith(
        "**Budget of this page**: 5 seeds (DenseNet-121: 3, Base: 1),")

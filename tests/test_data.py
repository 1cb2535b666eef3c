import gzip

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

    def patch_values(split):
        raw = split.x * data.MNIST_STD + data.MNIST_MEAN
        return (raw * split.mask).sum((1, 2, 3)) / 16 * 255

    train_vals = patch_values(s["train"])
    torch.testing.assert_close(train_vals, 255 - 25 * s["train"].y.float(), atol=1e-3, rtol=0)
    perm_vals = patch_values(s["test_permuted"])
    agree = torch.isclose(perm_vals, 255 - 25 * s["test_permuted"].y.float(), atol=1e-3).float().mean()
    assert agree < 0.3  # permuted: the patch no longer tells the label
    # same digits, same order in the three test versions
    outside = s["test_contaminated"].mask == 0
    torch.testing.assert_close(s["test_contaminated"].x[outside], s["test_clean"].x[outside])


def test_clean_holdout_is_removed_before_contamination():
    _, s = data.decoy_mnist("embedded", seed=0, clean_fraction=0.1)
    assert len(s["clean_holdout"]) == 360 and len(s["train"]) == 3240
    assert s["clean_holdout"].mask.sum() == 0

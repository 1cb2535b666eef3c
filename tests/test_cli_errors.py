"""A user's mistake ends in one line on stderr (``tapkit: error: ...``) and exit status 2, with no
traceback and nothing written; a bug keeps its traceback."""

import pytest
import torch

from tapkit import cli, losses, models


def _fails(capsys, argv):
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tapkit: error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_unknown_model_lists_the_registered_ones(capsys, tmp_path):
    line = _fails(capsys, ["train", "--model", "resnet9000", "--epochs", "1",
                           "--out", str(tmp_path / "run")])
    assert "unknown model 'resnet9000'" in line and "two_layer_cnn" in line and "vgg16" in line
    assert not (tmp_path / "run" / "metrics.json").exists()


def test_missing_data_folder(capsys, tmp_path):
    line = _fails(capsys, ["train", "--experiment", "pneu", "--source", str(tmp_path / "nowhere"),
                           "--out", str(tmp_path / "run")])
    assert "nowhere" in line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("argv", [["train", "--epochs", "-1"], ["train", "--epochs", "0"],
                                  ["bench", "--steps", "0"]])
def test_non_positive_counts_are_rejected_before_anything_runs(capsys, tmp_path, argv):
    line = _fails(capsys, argv + ["--out", str(tmp_path / "run")])
    assert "must be at least 1" in line
    assert not (tmp_path / "run").exists()


def test_unknown_method_is_one_line_listing_the_choices(capsys, tmp_path):
    line = _fails(capsys, ["train", "--method", "gradcam", "--out", str(tmp_path / "run")])
    assert "gradcam" in line and "'tap'" in line and "'kd'" not in line  # kd needs a teacher


def test_bench_image_too_small_for_the_model_is_caught_up_front(capsys, tmp_path):
    line = _fails(capsys, ["bench", "--models", "vgg16", "--methods", "none", "--image-size", "8",
                           "--out", str(tmp_path / "bench.json")])
    assert "vgg16 cannot take 8x8 images" in line
    assert not (tmp_path / "bench.json").exists()


def test_bench_rejects_a_method_that_needs_a_teacher(capsys, tmp_path):
    line = _fails(capsys, ["bench", "--models", "two_layer_cnn@2x28", "--methods", "none,kd",
                           "--out", str(tmp_path / "bench.json")])
    assert "'kd' needs one" in line


def _failing_train(exc_factory):
    def train(args):
        exc_factory()
    return train


@pytest.mark.parametrize("mistake, expected", [
    (lambda: models.validate_layers(torch.nn.Sequential(torch.nn.ReLU()), ["layer9"]),
     "unknown layer(s) ['layer9']"),
    (lambda: losses.tap([torch.ones(2, 3, 4, 4)], torch.ones(2, 4, 4)),
     "mask must be a N x 1 x H x W tensor"),
    (lambda: losses.tap([torch.ones(1, 3, 4, 4)], torch.full((1, 1, 4, 4), float("nan"))),
     "mask has NaN or infinite entries"),
])
def test_library_checks_become_one_line(capsys, monkeypatch, tmp_path, mistake, expected):
    monkeypatch.setattr(cli, "_train", _failing_train(mistake))
    line = _fails(capsys, ["train", "--out", str(tmp_path / "run")])
    assert expected in line


def test_a_bug_keeps_its_traceback(monkeypatch, tmp_path):
    def bug():
        return torch.ones(2, 3) @ torch.ones(2, 3)  # raised inside torch, not by a tapkit check
    monkeypatch.setattr(cli, "_train", _failing_train(bug))
    with pytest.raises(RuntimeError):
        cli.main(["train", "--out", str(tmp_path / "run")])
    def torch_value_error():  # a ValueError, but raised by torch: a bug in the caller, not a user's
        torch.nn.functional.cross_entropy(torch.ones(2, 3), torch.zeros(3, dtype=torch.long))
    monkeypatch.setattr(cli, "_train", _failing_train(torch_value_error))
    with pytest.raises(ValueError, match="batch_size"):
        cli.main(["train", "--out", str(tmp_path / "run")])


@pytest.mark.parametrize("argv, expected", [
    (["--chapters", "mnsit"], "unknown chapter(s) ['mnsit']"),
    (["--submitit-param", "oops"], "--submitit-param takes KEY=VALUE"),
    (["--executor", "threads:4"], "unknown executor 'threads:4'"),
])
def test_sweep_mistakes_are_one_line_before_anything_trains(capsys, tmp_path, argv, expected):
    line = _fails(capsys, ["sweep", "--results", str(tmp_path / "store")] + argv)
    assert expected in line
    assert not (tmp_path / "store" / "runs").exists()


@pytest.mark.parametrize("argv, expected", [
    (["train", "--lr", "nan"], "argument --lr: must be a finite number above 0, got nan"),
    (["train", "--lr", "inf"], "argument --lr: must be a finite number above 0, got inf"),
    (["train", "--lr", "-0.1"], "argument --lr: must be a finite number above 0, got -0.1"),
    (["train", "--lr", "0"], "argument --lr: must be a finite number above 0, got 0"),
    (["train", "--lr", "fast"], "argument --lr: invalid number value: 'fast'"),
    (["train", "--lam", "nan"], "argument --lam: must be a finite number at least 0, got nan"),
    (["train", "--lam", "-1"], "argument --lam: must be a finite number at least 0, got -1"),
    (["train", "--seed", "-1"], "argument --seed: must be at least 0, got -1"),
    (["train", "--epochs", "two"], "argument --epochs: invalid integer value: 'two'"),
    (["train", "--device", "gpu"], "unknown device 'gpu'"),
    (["train", "--device", "meta"], "device 'meta' is not supported"),
    (["train", "--device", "cuda"], "device 'cuda': torch"),
    (["train", "--device", "cuda:1"], "sees no cuda device on this machine; use --device cpu"),
    (["bench", "--device", "cuda"], "sees no cuda device"),
    (["bench", "--warmup", "-1"], "argument --warmup: must be at least 0, got -1"),
])
def test_bad_numbers_and_devices_are_one_line(capsys, monkeypatch, tmp_path, argv, expected):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # as on a machine without GPU
    line = _fails(capsys, argv + ["--out", str(tmp_path / "run")])
    assert expected in line
    assert not (tmp_path / "run").exists()


def test_a_cuda_index_beyond_the_machines_gpus_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    line = _fails(capsys, ["train", "--device", "cuda:2", "--out", str(tmp_path / "run")])
    assert "this machine has 2 CUDA device(s), cuda:0 to cuda:1" in line


def test_out_and_folder_must_be_what_they_name(capsys, tmp_path):
    file = tmp_path / "notes.txt"
    file.write_text("keep me")
    for argv in (["train", "--out", str(file)], ["train", "--out", str(file / "run")],
                 ["data", "mnist", "--folder", str(file)]):
        assert f"{file} is a file; name a folder" in _fails(capsys, argv)
    line = _fails(capsys, ["bench", "--out", str(tmp_path)])
    assert f"argument --out: {tmp_path} is a folder; name a file to write" in line
    assert file.read_text() == "keep me" and sorted(tmp_path.iterdir()) == [file]


def test_a_file_the_machine_will_not_write_is_one_line(capsys, monkeypatch, tmp_path):
    def denied():
        raise PermissionError(13, "Permission denied", "/srv/results/run/metrics.json")
    monkeypatch.setattr(cli, "_train", _failing_train(denied))
    line = _fails(capsys, ["train", "--out", str(tmp_path / "run")])
    assert line == "tapkit: error: /srv/results/run/metrics.json: Permission denied"


def test_a_model_too_deep_for_the_images_is_caught_before_training(capsys, tmp_path):
    line = _fails(capsys, ["train", "--model", "vgg16", "--out", str(tmp_path / "run")])
    assert "vgg16 cannot take 28x28 images" in line and "two_layer_cnn" in line
    assert not (tmp_path / "run").exists()

"""The paper profile end to end on a CPU, through the chapter notebooks and papermill's string
parameters, on generated data: a broken paper code path fails here, not on a lent GPU.

* Decoy-MNIST: the ``mnist`` source pointed at a folder of a few hundred generated IDX digits
  (the cache's layout), one epoch, one seed, the paper's SGD at batch 256, the paper's λ with the
  loss normalisations they were tuned on.
* PNEU (the Setting-1 medical chapter, ``-p experiment pneu``): a generated ``chest_xray`` folder, ResNet-18 with ImageNet weights supplied as a saved
  state dict in a temporary ``TORCH_HOME`` (the paper profile never falls back to random weights).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tapkit.config import TrainConfig
from tapkit.experiments import plans, protocols
from tapkit.fit import experiment_data

jupytext = pytest.importorskip("jupytext")
nbformat = pytest.importorskip("nbformat")
pm = pytest.importorskip("papermill")

ROOT = Path(__file__).resolve().parents[1]


def _execute(name: str, out_dir: Path, parameters: dict, env: dict | None = None,
             monkeypatch=None) -> None:
    """Run ``notebooks/<name>.py`` with papermill, every parameter passed as a string."""
    for key, value in (env or {}).items():
        monkeypatch.setenv(key, value)
    nb = jupytext.read(ROOT / "notebooks" / f"{name}.py")
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    src = out_dir / f"{name}.ipynb"
    nbformat.write(nb, src)
    pm.execute_notebook(str(src), str(out_dir / f"{name}.out.ipynb"),
                        parameters={k: str(v) for k, v in parameters.items()},
                        cwd=str(ROOT / "notebooks"), kernel_name="python3", progress_bar=False)


def _idx(path: Path, array: np.ndarray) -> None:
    header = bytes([0, 0, 8, array.ndim]) + b"".join(int(d).to_bytes(4, "big")
                                                     for d in array.shape)
    with gzip.open(path, "wb") as fh:
        fh.write(header + array.astype(np.uint8).tobytes())


def _mnist_folder(folder: Path, train: int = 400, test: int = 100) -> Path:
    """Gzipped IDX digits whose bright bar's row tells the label (learnable in one epoch)."""
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True)
    for stem, n in (("train", train), ("t10k", test)):
        labels = np.arange(n) % 10
        images = rng.integers(0, 60, (n, 28, 28))
        images[np.arange(n), 4 + 2 * labels, 4:24] = 255
        _idx(folder / f"{stem}-images-idx3-ubyte.gz", images)
        _idx(folder / f"{stem}-labels-idx1-ubyte.gz", labels)
    return folder


def _runs(results: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((results / "paper" / "runs").glob("*/metrics.json"))]


def _check_paper_mnist_runs(runs: list[dict], folder: Path) -> None:
    """What a paper-profile MNIST chapter run on ``folder`` (400 generated training digits) must
    have done: every case trained one epoch of the paper's SGD at batch 256 on that folder and
    converged (a diverged run, status ``dnc``, fails), with the paper's λ and the loss
    normalisations they were tuned on, and 40 of the 400 digits held out as the validation split."""
    assert sorted(r["config"]["method"] + "/" + r["config"]["data"] for r in runs) == [
        "none/clean", "none/contaminated", "rbr/contaminated", "rrr/contaminated",
        "tap/contaminated"]
    for run in runs:
        cfg = run["config"]
        assert run["status"] == "ok", f"{cfg['method']} did not converge (status {run['status']})"
        assert (cfg["optimizer"], cfg["batch_size"], cfg["epochs"]) == ("sgd", 256, 1)
        assert cfg["source"] == f"mnist:{folder}"
        assert run["epochs_done"] == 1 and run["provenance"]
    lam = {r["config"]["method"]: r["config"] for r in runs}
    # the paper's MNIST λ, each with the normalisation it was tuned on (the released code's)
    assert (lam["tap"]["lam"], lam["tap"]["options"]["norm"], lam["tap"]["options"]["pooling"]) == (
        1e-3, "l2sq", "cumulative")
    assert (lam["rrr"]["lam"], lam["rrr"]["options"]["scale"]) == (1e-3, "released")
    assert (lam["rbr"]["lam"], lam["rbr"]["options"]["variant"]) == (1e4, "released")
    # 10% of the 400 generated digits (4 of each digit's 40) are the validation split, apart
    # from the 360 the runs train on
    _, splits = experiment_data(TrainConfig.from_dict(lam["tap"]))
    assert len(splits["val"].y) == 40 and len(splits["train"].y) == 360
    assert np.bincount(splits["val"].y.numpy(), minlength=10).tolist() == [4] * 10


def test_paper_profile_mnist_chapter_runs_end_to_end(tmp_path):
    folder = _mnist_folder(tmp_path / "mnist")
    results = tmp_path / "results"
    _execute("mnist", tmp_path, {"profile": "paper", "source": f"mnist:{folder}", "epochs": "1",
                                 "seeds": "[0]", "results": results, "device": "cpu"})
    _check_paper_mnist_runs(_runs(results), folder)
    assert (results / "paper" / "tables").is_dir()


def test_a_diverged_paper_mnist_run_fails_the_check(tmp_path):
    """The records the chapter writes for the paper profile's five cases on generated digits,
    made here without training; the check passes them, and fails them when one run diverged."""
    folder = _mnist_folder(tmp_path / "mnist")
    s = protocols.mnist("paper", source=f"mnist:{folder}", epochs=1, seeds=[0])
    configs = plans.mnist_configs(s, ["base", "none", "rrr", "rbr", "tap"],
                                  {"rrr": 1e-3, "rbr": 1e4, "tap": 1e-3})
    runs = [{"config": c.to_dict(), "status": "ok", "epochs_done": 1, "provenance": {"cpu": "x"}}
            for c in configs]
    _check_paper_mnist_runs(runs, folder)
    runs[3] = {**runs[3], "status": "dnc"}
    with pytest.raises(AssertionError, match="rbr did not converge"):
        _check_paper_mnist_runs(runs, folder)


def _pneu_folder(root: Path, per_class: int = 10, test: int = 4) -> Path:
    rng = np.random.default_rng(1)
    for split, n in (("train", per_class), ("test", test)):
        for label, cls in enumerate(("NORMAL", "PNEUMONIA")):
            for i in range(n):
                arr = rng.integers(0, 80, (48, 56)).astype(np.uint8)
                arr[10:38, 10 + 20 * label: 20 + 20 * label] = 220  # where the bright blob sits
                path = root / "chest_xray" / split / cls / f"img{i}.jpeg"
                path.parent.mkdir(parents=True, exist_ok=True)
                Image.fromarray(arr).save(path)
    return root


def _torch_home_with_resnet18(home: Path) -> Path:
    """ImageNet weights as torchvision expects them on disk (a random state dict stands in)."""
    import torch
    import torchvision

    weights = torchvision.models.ResNet18_Weights.DEFAULT
    target = home / "hub" / "checkpoints" / Path(weights.url).name
    target.parent.mkdir(parents=True)
    torch.manual_seed(0)
    torch.save(torchvision.models.resnet18().state_dict(), target)
    return home


def test_paper_profile_medical_chapter_runs_with_supplied_weights(tmp_path, monkeypatch):
    data = _pneu_folder(tmp_path / "data")
    home = _torch_home_with_resnet18(tmp_path / "torch")
    results = tmp_path / "results"
    _execute("medical_gt", tmp_path, {
        "experiment": "pneu", "profile": "paper", "source": data, "models": "['resnet18']", "epochs": "1",
        "seeds": "[0]", "image_size": "32", "grids": "{'tap': [1e-6, 1e-3]}",
        "stripe_models": "[]", "results": results, "device": "cpu"},
        env={"TORCH_HOME": str(home)}, monkeypatch=monkeypatch)
    runs = _runs(results)
    main = [r for r in runs if r["config"]["method"] != "tap" or r["config"]["lam"] != 1e-6]
    assert {r["config"]["model"] for r in runs} == {"resnet18"}
    assert all(r["weights"] != "random" and "fallback" not in r["weights"] for r in runs)
    assert all(r["config"]["pretrained"] and not r["config"]["weights_fallback"] for r in runs)
    assert all(r["config"]["image_size"] == 32 and r["config"]["optimizer"] == "sgd" for r in runs)
    # the λ search tried both grid values for TAP; the chapter then trained every case
    taps = sorted(r["config"]["lam"] for r in runs if r["config"]["method"] == "tap")
    assert 1e-6 in taps and 1e-3 in taps
    assert {r["config"]["method"] for r in main} == {"none", "rrr", "rbr", "tap"}
    assert (results / "paper" / "tables" / "lambda_choice_pneu_tag.csv").exists()


def test_paper_profile_medical_chapter_without_weights_fails_with_instructions(tmp_path,
                                                                              monkeypatch):
    data = _pneu_folder(tmp_path / "data", per_class=4, test=2)
    with pytest.raises(pm.PapermillExecutionError, match="TORCH_HOME"):
        _execute("medical_gt", tmp_path, {
            "experiment": "pneu", "profile": "paper", "source": data, "models": "['resnet18']", "epochs": "1",
            "seeds": "[0]", "image_size": "64", "grids": "{'tap': [1e-3]}", "methods": "['none']",
            "stripe_models": "[]", "results": tmp_path / "results", "device": "cpu"},
            env={"TORCH_HOME": str(tmp_path / "empty")}, monkeypatch=monkeypatch)

import errno
import json
import logging
from pathlib import Path

import pytest
import torch
from torch import nn

import dataclasses

from tapkit import fit as training
from tapkit import losses, methods
from tapkit.config import TrainConfig
from tapkit.data import Split
from tapkit.experiments.executors import run_many
from tapkit.experiments.store import ResultStore
from tapkit.fit import fit
from fakes import fake_train_run


def _decoy_fixture(n=384, side=12, seed=0):
    """Noisy images whose class is a vertical (0) or horizontal (1) bar in the centre, with a
    bright 3x3 top-left patch (0 or 2) that reveals the label: a shortcut the model learns unless
    it is told to ignore the patch. The values are non-negative, as in Decoy-MNIST."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 2, (n,), generator=g)
    x = 0.3 * torch.randn(n, 1, side, side, generator=g)
    x[y == 0, 0, 3:9, 6] += 1.5
    x[y == 1, 0, 6, 3:9] += 1.5
    x[:, 0, :3, :3] = (2 * y.float())[:, None, None]
    mask = torch.zeros(n, 1, side, side)
    mask[:, :, :3, :3] = 1.0
    return Split(x, y, mask)


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.relu1 = nn.Conv2d(1, 8, 3, padding=1), nn.ReLU()
        self.conv2, self.relu2 = nn.Conv2d(8, 8, 3, padding=1), nn.ReLU()
        self.fc = nn.Linear(8 * 12 * 12, 2)

    def forward(self, x):
        return self.fc(self.relu2(self.conv2(self.relu1(self.conv1(x)))).flatten(1))


def _train(method, lam, split, epochs=8):
    torch.manual_seed(0)
    model = TinyCNN()
    cfg = TrainConfig(method=method, lam=lam, epochs=epochs, batch_size=32, lr=3e-3)
    result = fit(model, split, cfg, ("relu1", "relu2"), progress=False)
    assert result.status == "ok"
    return model.eval()


def _gradient_mass_in_mask(model, split):
    x = split.x.clone().requires_grad_(True)
    grad = losses.input_gradients(model(x), x, create_graph=False).abs()
    return ((grad * split.mask).sum() / grad.sum()).item()


def test_theorem1_tap_removes_input_gradient_mass_from_the_mask():
    """Theorem 1, measured: penalising activations over the mask drives the input gradient
    there towards zero, although TAP never computes an input gradient."""
    split = _decoy_fixture()
    plain = _gradient_mass_in_mask(_train("none", 0.0, split), split)
    with_tap = _gradient_mass_in_mask(_train("tap", 0.1, split), split)
    assert plain > 0.12  # the patch is 6% of the pixels: No XS looks there more than that
    assert with_tap < 0.25 * plain


def test_cpu_training_repeats_bit_for_bit_and_resumes(tmp_path, monkeypatch):
    split = _decoy_fixture(n=128)
    cfg = TrainConfig(method="tap", lam=0.1, epochs=2, batch_size=32)

    def weights(model):
        return [p.detach().clone() for p in model.parameters()]

    torch.manual_seed(123)
    a = TinyCNN()
    fit(a, split, cfg, ("relu1",), progress=False)
    torch.manual_seed(123)
    b = TinyCNN()
    fit(b, split, cfg, ("relu1",), progress=False)
    assert all(torch.equal(p, q) for p, q in zip(weights(a), weights(b)))
    # interrupted in its second epoch, then resumed from the checkpoint of the first
    torch.manual_seed(123)
    ckpt = tmp_path / "checkpoint.pt"
    interrupted_in_epoch_2(monkeypatch, TinyCNN(), split, cfg, ckpt)
    torch.manual_seed(999)  # a different process state must not matter
    d = TinyCNN()
    result = fit(d, split, cfg, ("relu1",), checkpoint=ckpt, progress=False)
    assert result.epochs_done == 2 and len(result.history) == 2
    assert all(torch.equal(p, q) for p, q in zip(weights(a), weights(d)))


class Interrupted(Exception):
    pass


def interrupted_in_epoch_2(monkeypatch, model, split, cfg, ckpt) -> None:
    """``fit`` stopped as a killed process would be, inside its second epoch: the checkpoint of
    the first is on disk."""
    epoch = training._epoch

    def first_only(model, opt, step, data, gen, cfg, *args):
        if args[1].epochs_done >= 1:  # args: device, the FitResult, ...
            raise Interrupted
        return epoch(model, opt, step, data, gen, cfg, *args)

    with monkeypatch.context() as m:
        m.setattr(training, "_epoch", first_only)
        with pytest.raises(Interrupted):
            fit(model, split, cfg, ("relu1",), checkpoint=ckpt, progress=False)
    assert torch.load(ckpt, weights_only=True)["epoch"] == 1


def test_no_checkpoint_is_written_after_the_last_epoch(tmp_path, monkeypatch):
    split, cfg = _decoy_fixture(n=64), TrainConfig(method="tap", lam=0.1, epochs=2, batch_size=32)
    saved = []
    monkeypatch.setattr(training, "save_torch", lambda path, obj: saved.append(obj["epoch"]))
    fit(TinyCNN(), split, cfg, ("relu1",), checkpoint=tmp_path / "checkpoint.pt", progress=False)
    assert saved == [1]  # the caller writes the model after epoch 2


@pytest.mark.parametrize("spoil", ["truncated", "another_model", "bad_generator_state"])
def test_an_unusable_checkpoint_is_moved_aside_and_the_run_starts_afresh(tmp_path, caplog, spoil,
                                                                          monkeypatch):
    """A checkpoint cut short, another model's, or one whose RNG state torch refuses: moved aside
    with one warning, and the run repeats bit for bit the run that had no checkpoint (nothing of
    the bad file, weights or optimiser state, leaks into it)."""
    split, cfg = _decoy_fixture(n=128), TrainConfig(method="tap", lam=0.1, epochs=2, batch_size=32)
    torch.manual_seed(123)
    fresh = TinyCNN()
    fit(fresh, split, cfg, ("relu1",), progress=False)
    ckpt = tmp_path / "checkpoint.pt"
    torch.manual_seed(7)
    interrupted_in_epoch_2(monkeypatch, TinyCNN(), split, cfg.replace(lr=0.5), ckpt)
    state = torch.load(ckpt, weights_only=True)
    if spoil == "truncated":
        ckpt.write_bytes(ckpt.read_bytes()[: ckpt.stat().st_size // 2])
    elif spoil == "another_model":
        torch.save({**state, "model": nn.Linear(3, 2).state_dict()}, ckpt)
    else:
        torch.save({**state, "generator": torch.zeros(3, dtype=torch.uint8)}, ckpt)
    torch.manual_seed(123)
    again = TinyCNN()
    result = fit(again, split, cfg, ("relu1",), checkpoint=ckpt, progress=False)
    assert result.status == "ok" and [h["epoch"] for h in result.history] == [1, 2]
    assert all(torch.equal(p, q) for p, q in zip(fresh.parameters(), again.parameters()))
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("checkpoint.pt.corrupt-")]) == 1
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "checkpoint.pt is unreadable" in warnings[0].getMessage()


def test_a_nan_mask_is_refused_before_training():
    split = _decoy_fixture(n=64)
    split.mask[3, 0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN or infinite"):
        fit(TinyCNN(), split, TrainConfig(method="tap", lam=1.0, epochs=1), ("relu1",),
            progress=False)


def test_non_finite_loss_ends_the_run_as_dnc(monkeypatch):
    nan = dataclasses.replace(methods.get_method("tap"), term=lambda b: torch.tensor(float("nan")))
    monkeypatch.setitem(methods._METHODS, "tap", nan)
    result = fit(TinyCNN(), _decoy_fixture(n=64), TrainConfig(method="tap", lam=1.0, epochs=3),
                 ("relu1",), progress=False)
    assert result.status == "dnc" and result.epochs_done == 1


def test_config_key_is_stable_and_sensitive():
    a = TrainConfig(method="tap", lam=1e-3)
    assert a.key() == TrainConfig(method="tap", lam=1e-3).key()
    assert a.key() != a.replace(seed=1).key() and a.key() != a.replace(lam=1e-4).key()
    assert TrainConfig.from_dict(json.loads(json.dumps(a.to_dict()))) == a
    student = TrainConfig(method="kd", lam=1.0, teacher=TrainConfig(data="holdout", clean_fraction=0.1))
    assert TrainConfig.from_dict(json.loads(json.dumps(student.to_dict()))) == student


@pytest.mark.parametrize("fields, message", [
    ({"method": "gradcam"}, "unknown XS method 'gradcam'; expected one of"),
    ({"method": "kd"}, "needs a teacher"),
    ({"optimizer": "lbfgs"}, "unknown optimizer"),
    ({"data": "dirty"}, "unknown data"),
])
def test_bad_configs_raise(fields, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(**fields)


def test_store_runs_once_then_reads_the_cache(tmp_path, monkeypatch):
    cfg = TrainConfig(epochs=1, method="tap", lam=1e-3)
    calls = []
    monkeypatch.setattr("tapkit.experiments.store.train_run", fake_train_run(calls))
    frame = run_many([cfg, cfg.replace(seed=1)], tmp_path, "cpu")
    again = run_many([cfg], tmp_path, "cpu")
    assert len(calls) == 2 and len(frame) == 2 and again.loc[0, "permuted"] == 0.5
    assert ResultStore(tmp_path).load(cfg)["config"]["lam"] == 1e-3


def test_atomic_write_leaves_no_partial_file(tmp_path):
    from tapkit.results import write_atomic

    target = tmp_path / "metrics.json"
    write_atomic(target, "old")
    with pytest.raises(TypeError):
        write_atomic(target, object())  # fails before replace
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]


def _old_fit(model, split, cfg, targets):
    """The fit loop as it was before batches came from in-memory tensors: a DataLoader."""
    from torch.utils.data import DataLoader

    torch.manual_seed(cfg.seed)
    opt = training.make_optimizer(model, cfg)
    gen = torch.Generator().manual_seed(cfg.seed)
    history = []
    for epoch in range(cfg.epochs):
        total, n = 0.0, 0
        for x, y, mask in DataLoader(split.dataset(), batch_size=cfg.batch_size, shuffle=True,
                                     generator=gen):
            task, xs = training.step_losses(model, x, y, mask, cfg, targets)
            opt.zero_grad(set_to_none=True)
            (task + cfg.lam * xs).backward()
            opt.step()
            total, n = total + task.item() * len(y), n + len(y)
        history.append(total / n)
    return history, gen.get_state()


def test_batches_are_the_dataloaders_and_leave_the_generator_alike():
    from torch.utils.data import DataLoader, TensorDataset

    from tapkit.batches import epoch_batches

    x, y = torch.arange(50.0).reshape(25, 2), torch.arange(25)
    gen_a, gen_b = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True, generator=gen_a)
    for _ in range(3):  # three epochs: the generator's state carries over identically
        ours = list(epoch_batches((x, y), 8, gen_b))
        theirs = list(loader)
        assert [len(b[1]) for b in ours] == [8, 8, 8, 1]
        assert all(torch.equal(p, q) for a, b in zip(ours, theirs) for p, q in zip(a, b))
        assert torch.equal(gen_a.get_state(), gen_b.get_state())
    assert sorted(torch.cat([b[1] for b in ours]).tolist()) == list(range(25))


def test_fit_is_bit_identical_to_the_dataloader_loop():
    split = _decoy_fixture(n=100)  # 100 = 3 batches of 32 and one of 4
    cfg = TrainConfig(method="tap", lam=0.1, epochs=2, batch_size=32, optimizer="sgd", lr=0.05)
    torch.manual_seed(5)
    old = TinyCNN()
    history, gen_state = _old_fit(old, split, cfg, ("relu1",))
    torch.manual_seed(5)
    new = TinyCNN()
    result = fit(new, split, cfg, ("relu1",), progress=False)
    assert all(torch.equal(p, q) for p, q in zip(old.parameters(), new.parameters()))
    assert [h["task_loss"] for h in result.history] == history


def test_compile_step_is_rejected_for_double_backward_and_ignored_on_cpu(monkeypatch):
    from tapkit.compiled import compiled_step

    cfg = TrainConfig(method="rrr", lam=0.1, epochs=1, batch_size=32)
    with pytest.raises(ValueError, match="double backward"):
        with compiled_step(TinyCNN(), cfg, ("relu1",)):
            pass
    monkeypatch.setattr(torch, "compile", lambda *a, **k: pytest.fail("compiled on a CPU"))
    split, cfg = _decoy_fixture(n=64), cfg.replace(method="tap")
    torch.manual_seed(0)
    a = TinyCNN()
    fit(a, split, cfg, ("relu1",), progress=False, compile_step=True)
    torch.manual_seed(0)
    b = TinyCNN()
    fit(b, split, cfg, ("relu1",), progress=False)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


@pytest.mark.parametrize("method", ["none", "tap"])
def test_compiled_step_computes_the_eager_losses_and_removes_its_hooks(method):
    """Traced by Dynamo (backend "eager": no code generation, so cheap on a CPU) with the hooks
    installed once: the losses and gradients of three steps match the eager step's."""
    from torch._dynamo.utils import counters

    from tapkit.compiled import compiled_step

    torch._dynamo.reset()
    counters.clear()
    split = _decoy_fixture(n=96)
    cfg = TrainConfig(method=method, lam=0.1, epochs=1, batch_size=32)
    torch.manual_seed(0)
    model = TinyCNN()
    with compiled_step(model, cfg, ("relu1", "relu2"), backend="eager") as step:
        for i in range(3):
            x, y, mask = (t[32 * i: 32 * (i + 1)] for t in (split.x, split.y, split.mask))
            got = step(x, y, mask)
            grads = torch.autograd.grad(got[0] + got[1], list(model.parameters()))
            want = training.step_losses(model, x, y, mask, cfg, ("relu1", "relu2"))
            assert torch.allclose(got[0], want[0]) and torch.allclose(got[1], want[1])
            assert got[1].item() > 0 if method == "tap" else got[1].item() == 0
            want_grads = torch.autograd.grad(want[0] + want[1], list(model.parameters()))
            assert all(torch.allclose(g, w, atol=1e-6) for g, w in zip(grads, want_grads))
    assert not model.relu1._forward_hooks and not model.relu2._forward_hooks
    assert counters["stats"]["unique_graphs"] >= 1 and not counters["graph_break"]  # compiled


def test_a_full_disk_is_named_and_leaves_nothing_half_written(tmp_path, monkeypatch):
    import collections

    from tapkit import results

    def full(obj, f):
        Path(f).write_bytes(b"partial")
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 74918912")

    monkeypatch.setattr(results.torch, "save", full)
    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(results.shutil, "disk_usage", lambda _p: usage(10**12, 10**12, 72 * 2**20))
    with pytest.raises(OSError, match="no space left to write model.pt: 72 MB free") as err:
        results.save_torch(tmp_path / "run" / "model.pt", {"w": torch.zeros(2)})
    assert err.value.errno == errno.ENOSPC
    assert list((tmp_path / "run").iterdir()) == []  # no model.pt, no temporary file
    # with room on the disk, torch's own error is kept
    monkeypatch.setattr(results.shutil, "disk_usage", lambda _p: usage(10**12, 0, 10**12))
    with pytest.raises(RuntimeError, match="unexpected pos"):
        results.save_torch(tmp_path / "run" / "model.pt", {"w": torch.zeros(2)})


# ------------------------------------ class weights (issue 37: the released PNEU cross-entropy)

def test_released_class_weights_are_the_normalised_inverse_frequencies():
    from tapkit.config import ClassWeights

    # the released code's PNEU counts (src/data.py load_weights): 1,214 and 3,494 of 4,708
    labels = torch.cat([torch.zeros(1214), torch.ones(3494)]).long()
    cfg = TrainConfig(class_weights=ClassWeights.RELEASED)
    w = training.class_weight_tensor(cfg, labels)
    released = torch.tensor([4708 / 1214, 4708 / 3494])
    assert torch.allclose(w, released / released.sum(), atol=1e-6)
    assert w.tolist() == pytest.approx([3494 / 4708, 1214 / 4708], abs=1e-6)  # (0.742, 0.258)
    assert training.class_weight_tensor(TrainConfig(), labels) is None  # NONE: unweighted
    with pytest.raises(ValueError, match=r"classes \[1\] have no training image"):
        training.class_weight_tensor(cfg, torch.tensor([0, 0, 2]))


def test_class_weights_keep_every_old_key_and_enter_the_key_when_set():
    from tapkit.config import ClassWeights

    plain = TrainConfig(method="tap", lam=1e-3)
    assert "class_weights" not in plain.to_dict()  # the key of a run stored before the field
    assert plain.key() == TrainConfig.from_dict(plain.to_dict()).key()
    weighted = plain.replace(class_weights="released")
    assert weighted.class_weights is ClassWeights.RELEASED
    assert weighted.to_dict()["class_weights"] == "released" and weighted.key() != plain.key()
    assert TrainConfig.from_dict(json.loads(json.dumps(weighted.to_dict()))) == weighted
    with pytest.raises(ValueError, match="unknown class_weights 'inverse'"):
        TrainConfig(class_weights="inverse")


def test_the_task_loss_and_the_validation_loss_weight_the_classes_by_hand():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(4, 2))
    x, y = torch.randn(6, 1, 2, 2), torch.tensor([0, 1, 1, 1, 0, 1])
    w = torch.tensor([0.75, 0.25])
    nll = -torch.log_softmax(model(x), dim=1).gather(1, y[:, None]).squeeze(1)
    by_hand = (w[y] * nll).sum() / w[y].sum()  # the weighted mean, as PyTorch and the released code
    cfg = TrainConfig(class_weights="released")
    task, xs = training.step_losses(model, x, y, torch.zeros_like(x), cfg, (), class_weight=w)
    assert task.item() == pytest.approx(by_hand.item(), rel=1e-6) and xs.item() == 0
    unweighted = training.step_losses(model, x, y, torch.zeros_like(x), cfg, ())[0]
    assert unweighted.item() == pytest.approx(nll.mean().item(), rel=1e-6)
    split = Split(x, y, torch.zeros_like(x))
    assert training.validation_loss(model, split, "cpu", batch_size=4, class_weight=w) == \
        pytest.approx(by_hand.item(), rel=1e-6)  # over batches: summed, then one division
    assert training.validation_loss(model, split, "cpu", batch_size=4) == \
        pytest.approx(nll.mean().item(), rel=1e-6)
    with pytest.raises(ValueError, match="3 class weights for 2 classes"):
        training.step_losses(model, x, y, torch.zeros_like(x), cfg, (),
                             class_weight=torch.ones(3))


def test_fit_trains_with_the_configs_class_weights(monkeypatch):
    seen = []
    real = training.step_losses

    def spy(*args, **kwargs):
        seen.append(kwargs.get("class_weight"))
        return real(*args, **kwargs)

    monkeypatch.setattr(training, "step_losses", spy)
    split = _decoy_fixture(n=40)
    split = Split(split.x, torch.cat([torch.zeros(10), torch.ones(30)]).long(), split.mask)
    cfg = TrainConfig(method="none", epochs=1, batch_size=20, class_weights="released")
    assert fit(TinyCNN(), split, cfg, (), progress=False).status == "ok"
    assert len(seen) == 2 and all(torch.allclose(w, torch.tensor([0.75, 0.25])) for w in seen)
    seen.clear()
    fit(TinyCNN(), split, cfg.replace(class_weights="none"), (), progress=False)
    assert seen == [None, None]


# ------------------------------------------------ did not converge (the paper's rule, L916)

def test_a_cell_is_dnc_when_more_than_half_of_its_runs_failed():
    import pandas as pd

    from tapkit.book import report

    assert [report.did_not_converge(f, 5) for f in range(6)] == [False] * 3 + [True] * 3
    assert report.did_not_converge(2, 3) and not report.did_not_converge(1, 2)
    assert not report.did_not_converge(0, 0)
    # five seeds per case: TAP two failed (reported over its three), RRR three failed (DNC),
    # RBR none converged (DNC, as before)
    status = {"tap": ["ok"] * 3 + ["dnc"] * 2, "rrr": ["ok"] * 2 + ["dnc"] * 3, "rbr": ["dnc"] * 5}
    rows = [{"case": case, "seed": i, "metric": "accuracy", "status": s,
             **dict.fromkeys(report.SPLITS, 0.5 + 0.1 * i if s == "ok" else float("nan"))}
            for case, runs in status.items() for i, s in enumerate(runs)]
    runs = pd.DataFrame(rows)
    summary = report.summarise(runs, ["case"]).set_index(["case", "split"])
    split = report.SPLITS[0]
    assert summary.loc[("tap", split), "mean"] == pytest.approx(0.6)  # 0.5, 0.6, 0.7
    assert summary.loc[("tap", split), "dnc_runs"] == 2 and not summary.loc[("tap", split), "dnc"]
    assert summary.loc[("rrr", split), "dnc"] and pd.isna(summary.loc[("rrr", split), "mean"])
    assert report.fmt(summary.loc[("rrr", split), "mean"]) == "DNC"
    assert summary.loc[("rbr", split), "dnc"]
    table = report.interval_table(runs, ["tap", "rrr", "rbr"])
    assert table.loc["tap", split] != "DNC" and table.loc["rrr", split] == "DNC"
    assert table.loc["rbr", split] == "DNC"

"""Each XS method's options as a frozen dataclass on its registry entry: their checks, the config
field that carries them, the keys they enter, old flat configs read back, and the protocols' and
the CLI's way of setting them."""

import json
import logging

import pytest

from tapkit import cli
from tapkit.config import TrainConfig, options_from_flat
from tapkit.experiments import chapter_plans, protocols
from tapkit.experiments.executors import records_frame
from tapkit.method_options import (AtOptions, JtOptions, KdOptions, MethodOptions, NoOptions,
                                   RbrOptions, RrrOptions, TapOptions)
from tapkit.methods import default_options, get_method, list_methods

TEACHER = TrainConfig(data="holdout", clean_fraction=0.1)


def _config(method: str, **fields) -> TrainConfig:
    needs = get_method(method).needs_teacher
    return TrainConfig(method=method, lam=1.0, teacher=TEACHER if needs else None, **fields)


@pytest.mark.parametrize("build, message", [
    (lambda: TapOptions(norm="l2"), r"TapOptions.norm must be one of 'l1', 'l2sq'; got 'l2'"),
    (lambda: TapOptions(pooling="max"), r"TapOptions.pooling must be one of 'independent', "
                                        r"'cumulative'; got 'max'"),
    (lambda: TapOptions(kernel_size=0), r"TapOptions.kernel_size must be an int of at least 1"),
    (lambda: TapOptions(kernel_size=3.0), r"TapOptions.kernel_size must be an int"),
    (lambda: RrrOptions(scale="paper"), r"RrrOptions.scale must be one of 'none', 'released'"),
    (lambda: RrrOptions(batchnorm="eval"), r"RrrOptions.batchnorm must be one of 'running', "
                                           r"'batch'; got 'eval'"),
    (lambda: RbrOptions(variant="half"), r"RbrOptions.variant must be one of 'full', 'released'"),
    (lambda: RbrOptions(batchnorm="train"), r"RbrOptions.batchnorm must be one of"),
    (lambda: KdOptions(temperature=0), r"KdOptions.temperature must be a finite number above 0"),
    (lambda: KdOptions(temperature=float("inf")), r"KdOptions.temperature must be a finite"),
    (lambda: JtOptions(batchnorm="eval"), r"JtOptions.batchnorm must be one of"),
    (lambda: TapOptions.from_dict({"norms": "l1"}), r"TapOptions has no field\(s\) \['norms'\]; "
                                                    r"expected some of \['norm', 'pooling', "
                                                    r"'kernel_size'\]"),
])
def test_options_check_their_values(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_options_are_frozen_and_a_temperature_is_a_float():
    with pytest.raises(AttributeError):
        TapOptions().norm = "l2sq"  # type: ignore[misc]
    assert KdOptions(4) == KdOptions(4.0) and isinstance(KdOptions(2).temperature, float)
    assert _config("kd", options=KdOptions(4)).key() == _config("kd").key()


@pytest.mark.parametrize("method", list_methods())
def test_every_method_builds_its_default_options_and_round_trips(method):
    entry = get_method(method)
    assert issubclass(entry.options, MethodOptions)
    defaults = default_options(method)
    assert type(defaults) is entry.options and entry.make_options(None) == defaults
    assert entry.options.from_dict(json.loads(json.dumps(defaults.to_dict()))) == defaults
    cfg = _config(method)
    assert cfg.options == defaults
    assert cfg.to_dict()["options"] == defaults.to_dict()
    # an input-gradient method has a BatchNorm mode, running statistics by default
    assert (getattr(defaults, "batchnorm", None) == "running") == entry.input_grad
    # another method's class is a mistake, named
    other = TapOptions() if entry.options is not TapOptions else RrrOptions()
    with pytest.raises(ValueError, match=f"method '{method}' takes {entry.options.__name__}, "
                                         f"got {type(other).__name__}"):
        _config(method, options=other)


@pytest.mark.parametrize("cfg", [
    TrainConfig(method="tap", lam=1e-3, options=TapOptions("l2sq", "cumulative", 5)),
    TrainConfig(method="rrr", lam=1e-3, options=RrrOptions("released", "batch")),
    TrainConfig(method="rbr", lam=1e4, options=RbrOptions("released")),
    TrainConfig(method="kd", lam=1.0, options=KdOptions(2.5), teacher=TEACHER),
    TrainConfig(method="jt", lam=1.0, options=JtOptions("batch"), teacher=TEACHER),
    TrainConfig(method="none", test_per_class=7, random_coverage=0.2),
])
def test_configs_round_trip_through_json_with_their_key(cfg):
    back = TrainConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert back == cfg and back.key() == cfg.key() and type(back.options) is type(cfg.options)


def test_a_key_hashes_only_its_methods_options():
    quick = protocols.mnist("quick")
    released = quick.with_overrides(options=protocols.RELEASED)
    # No XS is one run whatever the protocol would give TAP, RRR or RBR ...
    assert quick.config(method="none").key() == released.config(method="none").key()
    assert TrainConfig(method="none").to_dict()["options"] == {}
    with pytest.raises(ValueError, match="method 'none' takes NoOptions, got TapOptions"):
        TrainConfig(method="none", options=TapOptions(norm="l2sq"))
    # ... while TAP's key follows its own options, and RRR's does not follow TAP's
    tap = TrainConfig(method="tap", lam=1e-3)
    assert tap.key() != tap.replace(options=TapOptions(norm="l2sq")).key()
    assert tap.key() != tap.replace(options=TapOptions(kernel_size=5)).key()
    assert quick.config(method="tap").key() != released.config(method="tap").key()
    kd = _config("kd")
    assert kd.key() != kd.replace(options=KdOptions(temperature=2.0)).key()


def test_a_new_method_takes_its_own_defaults_unless_told():
    tap = TrainConfig(method="tap", lam=1e-3, options=TapOptions(norm="l2sq"))
    assert tap.replace(method="rrr").options == RrrOptions()
    assert tap.replace(lam=1e-2).options == TapOptions(norm="l2sq")
    assert tap.replace(method="rrr", options={"scale": "released"}).options == RrrOptions("released")


# what the code before typed options stored in a run's metrics.json (every option on every run)
OLD = {"experiment": "decoy-mnist", "model": "two_layer_cnn", "method": "tap", "lam": 0.001,
       "data": "contaminated", "annotation": "ground_truth", "teacher": None, "tau": 0.01,
       "threshold": "absolute", "saliency": "saliency", "clean_fraction": 0.0, "epochs": 5,
       "batch_size": 64, "optimizer": "adam", "lr": 0.001, "momentum": 0.9, "weight_decay": 0.0,
       "seed": 0, "source": "embedded", "image_size": None, "artifact": "tag", "per_class": None,
       "pretrained": False, "weights_fallback": True, "tap_norm": "l2sq",
       "tap_pooling": "cumulative", "rrr_scale": "released", "kernel_size": 3,
       "rbr_variant": "released", "xs_batchnorm": "eval", "kd_temperature": 4.0}


@pytest.mark.parametrize("method, batchnorm, expected", [
    ("tap", "eval", TapOptions("l2sq", "cumulative", 3)),
    ("rrr", "eval", RrrOptions("released", "running")),
    ("rrr", "train", RrrOptions("released", "batch")),
    ("rbr", "train", RbrOptions("released", "batch")),
    ("none", "train", NoOptions()),
])
def test_an_old_flat_config_reads_as_typed_options(method, batchnorm, expected):
    old = {**OLD, "method": method, "xs_batchnorm": batchnorm}
    cfg = TrainConfig.from_dict(old)
    assert cfg.options == expected and type(cfg.options) is type(expected)
    assert (cfg.method, cfg.lam, cfg.test_per_class, cfg.random_coverage) == (method, 1e-3, None,
                                                                              None)
    assert "tap_norm" not in cfg.to_dict() and TrainConfig.from_dict(cfg.to_dict()) == cfg


def test_an_old_student_and_its_teacher_read_back():
    teacher = {**OLD, "method": "none", "data": "holdout", "clean_fraction": 0.1,
               "xs_batchnorm": "train"}
    student = {**OLD, "method": "jt", "lam": 1e-7, "xs_batchnorm": "train", "teacher": teacher,
               "clean_fraction": 0.1}
    cfg = TrainConfig.from_dict(student)
    assert cfg.options == JtOptions(batchnorm="batch") and cfg.teacher.options == NoOptions()
    assert options_from_flat("kd", {"kd_temperature": 2.0, "tap_norm": "l1"}) == {"temperature": 2.0}
    with pytest.raises(ValueError, match="both options and the old flat fields"):
        TrainConfig.from_dict({**OLD, "options": {"norm": "l1"}})


def test_protocols_hand_each_method_its_options():
    with pytest.raises(ValueError, match="method 'tap' takes TapOptions, got RrrOptions"):
        protocols.mnist("quick", options={"tap": RrrOptions()})
    quick = protocols.mnist("quick")
    # quick MNIST: RBR (the paper's λ) in the released form those λ were tuned on; TAP (its own
    # search) as Definition 2 writes it
    assert quick.options_for("rbr") == RbrOptions(variant="released")
    assert quick.options_for("tap") == TapOptions() and quick.options_for("none") == NoOptions()
    assert protocols.mnist("paper").options_for("rbr") == RbrOptions(variant="released")
    assert protocols.mnist("paper").as_dict()["options"]["tap"] == {
        "norm": "l2sq", "pooling": "cumulative", "kernel_size": 3}
    # the distillation chapter's temperature reaches KD's students only
    cells = chapter_plans.distillation(protocols.mnist("smoke"), "unused", kd_temperature=2.0)
    by = {}
    for c in cells:
        by.setdefault(c.cfg.method, set()).add(c.cfg.options)
    assert by["kd"] == {KdOptions(2.0)} and by["at"] == {AtOptions()} and by["jt"] == {JtOptions()}
    plain = chapter_plans.distillation(protocols.mnist("smoke"), "unused")
    assert {c.cfg.options for c in plain if c.cfg.method == "kd"} == {KdOptions(4.0)}


def test_a_results_frame_shows_the_options_in_one_cell():
    recs = [{"status": "ok", "config": cfg.to_dict(), "provenance": {}}
            for cfg in (TrainConfig(method="tap", options=TapOptions(norm="l2sq")),
                        TrainConfig(method="none"))]
    frame = records_frame(recs)
    assert frame["options"].tolist() == ["kernel_size=3, norm=l2sq, pooling=independent", ""]
    assert "tap_norm" not in frame
    # a record read back from the store (its JSON keys sorted) reads the same as one just trained
    stored = [json.loads(json.dumps(r, sort_keys=True)) for r in recs]
    assert records_frame(stored)["options"].tolist() == frame["options"].tolist()


def test_cli_flags_set_their_methods_options(caplog):
    flags = {"tap_norm": "l2sq", "tap_pooling": None, "rrr_scale": "released",
             "rbr_variant": None, "batchnorm": "batch"}
    with caplog.at_level(logging.WARNING, logger="tapkit"):
        assert cli.method_options("rrr", flags) == {"scale": "released", "batchnorm": "batch"}
    assert "--tap-norm has no effect on method rrr" in caplog.text
    assert cli.method_options("tap", flags) == {"norm": "l2sq"}
    assert cli.method_options("none", dict.fromkeys(flags)) == {}


def test_cli_flags_come_from_the_options_dataclasses(monkeypatch, capsys):
    """A toy method registered with its own options class gets its flag with no CLI edit: a
    field of one method is ``--method-field``, a field several methods share with one type one
    ``--field`` flag for all of them, with the field's help and its Literal values as choices."""
    from dataclasses import dataclass
    from typing import Literal

    from tapkit import methods
    from tapkit.method_options import MethodOptions, _option
    from tapkit.methods import XSMethod

    @dataclass(frozen=True)
    class ToyOptions(MethodOptions):
        reduce: Literal["mean", "max"] = _option("mean", "how the toy reduces")
        batchnorm: Literal["running", "batch"] = _option("running", "as RRR's")

    monkeypatch.setattr(methods, "_METHODS", dict(methods._METHODS))
    methods.register_method(XSMethod("toy", lambda b: b.logits.abs().mean(), ToyOptions,
                                     label="Toy"))
    flags = cli.option_flags()
    assert flags["toy_reduce"] == (("toy", "reduce"),)
    assert flags["batchnorm"] == (("rrr", "batchnorm"), ("rbr", "batchnorm"), ("toy", "batchnorm"))
    assert "kd_temperature" not in flags  # KD needs a teacher: train does not offer it
    args = cli.parser().parse_args(["train", "--method", "toy", "--toy-reduce", "max",
                                    "--batchnorm", "batch", "--out", "x"])
    given = {dest: getattr(args, dest) for dest in flags}
    assert cli.method_options("toy", given) == {"reduce": "max", "batchnorm": "batch"}
    with pytest.raises(SystemExit):
        cli.parser().parse_args(["train", "--help"])
    assert "Toy: how the toy reduces" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        cli.parser().parse_args(["train", "--toy-reduce", "sum", "--out", "x"])
    assert ToyOptions(**cli.method_options("toy", given)).reduce == "max"


def test_cli_batchnorm_takes_the_losses_names(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["train", "--method", "rrr", "--batchnorm", "eval", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "'running'" in err and "'batch'" in err

"""The registries own their entries' facts: a duplicate is refused, and a method or model
registered in one place is listed, labelled and selected by kind everywhere."""

from __future__ import annotations

import pytest
from torch import nn

from tapkit import methods, models
from tapkit.book import labels
from tapkit.experiment_specs import list_experiments
from tapkit.methods import Kind, XSMethod
from tapkit.sources import Embedded


def test_a_model_registered_twice_is_refused_and_the_first_entry_kept():
    first = models.get_spec("resnet18")
    with pytest.raises(ValueError, match="already registered"):
        models.register_model("resnet18", ("layer1",))(lambda *a, **k: nn.Identity())
    assert models.get_spec("resnet18") is first


def test_a_toy_method_and_model_are_labelled_and_listed_by_kind(monkeypatch):
    monkeypatch.setattr(methods, "_METHODS", dict(methods._METHODS))
    monkeypatch.setattr(models, "_REGISTRY", dict(models._REGISTRY))
    methods.register_method(XSMethod("logit_l1", lambda b: b.logits.abs().mean(),
                                     label="Logit L1"))
    models.register_model("tiny", ("relu",), label="Tiny CNN", role=models.Role.APPENDIX)(
        lambda num_classes, in_channels: nn.Sequential(
            nn.Conv2d(in_channels, 4, 3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(num_classes)))
    # its role places it in the paper's lists: the appendix's, after the two registered there
    assert models.models_where(models.Role.APPENDIX) == ["efficientnet_b0", "mobilenet_v2", "tiny"]
    assert models.models_where(models.Role.MAIN) == ["vgg16", "resnet18", "densenet121"]
    assert methods.methods_where(kind=Kind.XS) == ["tap", "rrr", "rbr", "logit_l1"]
    assert methods.methods_where(kind=Kind.DISTILLATION) == ["kd", "at", "jt"]
    assert labels.label("logit_l1") == "Logit L1" and labels.label("tiny") == "Tiny CNN"
    assert labels.label("none") == "No XS" and labels.label("resnet18") == "ResNet-18"
    # an entry without a label is shown by its name in capitals, never as an empty string
    methods.register_method(XSMethod("plain", None))
    assert labels.label("plain") == "PLAIN"


def test_the_released_rbr_keeps_the_training_input_and_the_full_one_does_not():
    """The training step asks the registry whether the extra forward pass reuses ``x`` (the
    released RBR's influence term runs through the training pass's task loss)."""
    rbr = methods.get_method("rbr")
    assert rbr.keeps_input(rbr.make_options({"variant": "released"}))
    assert not rbr.keeps_input(rbr.make_options())
    assert not any(methods.get_method(m).keeps_input(methods.default_options(m))
                   for m in methods.list_methods() if m != "rbr")


def test_the_papers_method_its_comparators_and_released_forms_are_registry_facts(monkeypatch):
    """Which method is the paper's own, which it compares with, and the released code's options
    are entries' facts: the tables' rows, the released profile's options and the run time
    estimates read them, and a second 'proposed' method is refused."""
    from tapkit.experiments import chapter_plans, planner, protocol_base, setting1

    assert methods.proposed_method() == "tap" and methods.comparators() == ["rrr", "rbr"]
    assert methods.is_xs("rbr") and not methods.is_xs("base") and not methods.is_xs("kd")
    assert setting1.cases() == ("base", "none", "rrr", "rbr", "tap")
    assert chapter_plans.EXTRA_CASES == ("base", "none", "tap")
    assert chapter_plans.KD_METHODS == ("kd", "at", "jt")
    assert list(protocol_base.RELEASED) == ["tap", "rrr", "rbr", "kd", "at", "jt"]
    assert protocol_base.RELEASED["rbr"] == methods.get_method("rbr").released
    assert [planner.resembles(m) for m in ("kd", "at", "jt")] == ["none", "none", "rrr"]
    monkeypatch.setattr(methods, "_METHODS", dict(methods._METHODS))
    with pytest.raises(ValueError, match="proposes one method"):
        methods.register_method(XSMethod("mine", lambda b: b.logits.sum(), proposed=True))
    methods.register_method(XSMethod("logit_l1", lambda b: b.logits.abs().mean()))
    assert methods.comparators() == ["rrr", "rbr", "logit_l1"]


def test_a_method_registered_after_import_reaches_the_chapters_plans(monkeypatch, tmp_path):
    """One registry entry is all a new XS method needs: the chapters' rows are read from the
    registry when a plan is built, not copied into constants at import (issue 38)."""
    from tapkit.experiments import chapter_plans, medical_plans, protocols, setting1

    monkeypatch.setattr(methods, "_METHODS", dict(methods._METHODS))
    methods.register_method(XSMethod("logit_l1", lambda b: b.logits.abs().mean(),
                                     label="Logit L1"))
    # a comparator (not the paper's own): after RRR and RBR, before TAP, as the tables order them
    assert setting1.cases() == ("base", "none", "rrr", "rbr", "logit_l1", "tap")
    assert chapter_plans.chapter_cases("mnist") == list(setting1.cases())
    assert chapter_plans.chapter_cases("visual") == ["none", "rrr", "rbr", "logit_l1", "tap"]
    smoke = protocols.mnist("smoke")
    cells = chapter_plans.mnist(smoke, tmp_path, lambdas={"logit_l1": 0.5})
    toy = [c for c in cells if c.method == "logit_l1"]
    assert [(c.cfg.method, c.cfg.lam, c.seed) for c in toy] == [("logit_l1", 0.5, s)
                                                               for s in smoke.seeds]
    knee = medical_plans.medical_runs(protocols.medical("smoke"), "knee", ["resnet18"],
                                      lambdas={"logit_l1": 0.25})
    assert {(c.method, c.lam) for c in knee if c.method == "logit_l1"} == {("logit_l1", 0.25)}
    assert labels.label("logit_l1") == "Logit L1"


def test_profiles_are_registered_once_and_smoke_follows_quick():
    """One file per profile, each registered once: a second registration of a name is refused
    and leaves the first; the smoke profile is derived from the quick one by a function, so a
    change to quick's calibration reaches smoke's runs, while smoke's own trims stay."""
    import dataclasses

    from tapkit.experiments import protocols
    from tapkit.experiments.profiles import quick, smoke

    assert list(protocols.PROFILES) == ["quick", "paper", "smoke"]
    with pytest.raises(ValueError, match="already registered"):
        protocols.register_profile(quick.QUICK)
    assert protocols.MEDICAL["quick"] is quick.MEDICAL
    misnamed = dataclasses.replace(quick.QUICK, name="other")
    with pytest.raises(ValueError, match="named"):
        protocols.register_profile(misnamed)
    assert "other" not in protocols.PROFILES
    noisier = dataclasses.replace(quick.QUICK, medical=dataclasses.replace(
        quick.MEDICAL, embedded={"pneu": Embedded(0.2), "knee": Embedded(0.5)}))
    derived = smoke.smoke(noisier)
    assert derived.medical.embedded["pneu"].label_noise == 0.2 and derived.medical.seeds == (0,)
    assert smoke.smoke(quick.QUICK) == smoke.SMOKE == protocols._REGISTRY["smoke"]
    assert derived.medical.settings("pneu", "resnet18").epochs == 1


def test_a_methods_paper_grid_and_table1_column_come_from_its_entry(monkeypatch):
    """The paper's λ search grid (l.348) is an entry's fact: a toy comparator with one joins the
    grids the paper profile searches and Table 1's columns (after RBR, before TAP); one without
    a grid is not searched. The MNIST λ the chapters start from are the transcribed appendix
    table's row (lambdas.csv, l.562), not a second copy."""
    from tapkit.experiments import paper_tables, protocols

    monkeypatch.setattr(methods, "_METHODS", dict(methods._METHODS))
    methods.register_method(XSMethod("logit_l1", lambda b: b.logits.abs().mean(),
                                     paper_grid=(0.1, 1.0)))
    methods.register_method(XSMethod("ungridded", lambda b: b.logits.sum()))
    grids = methods.paper_grids()
    assert grids["logit_l1"] == (0.1, 1.0) and "ungridded" not in grids
    assert len(grids["tap"]) == 10 and grids["tap"][0] == pytest.approx(1e-9)
    assert grids["rbr"][-1] == pytest.approx(1e9)
    assert methods.table1_methods() == ["none", "rrr", "rbr", "logit_l1", "ungridded", "tap"]
    table = paper_tables.paper_lambda_table()
    row = table[(table.setting == "ground_truth") & (table.dataset == "MNIST")]
    assert protocols.MNIST_LAMBDAS == {r.method: float(r.mean) for r in row.itertuples()}
    assert paper_tables.lambdas_of("ground_truth", "MNIST", "resnet18") == {}


def test_an_experiment_is_one_registry_entry_that_every_lookup_reads(monkeypatch):
    """The experiment registry owns each data set's kind, paper name, label and metric: the
    sources' lists, the metric lookup (Decoy-MNIST by its config name and its tables' name
    alike), the medical plans' paper names and the pages' labels read it, and a name already
    taken — a config name or a tables' name — is refused."""
    from tapkit import data, experiment_specs as xs, metrics, sources
    from tapkit.config import TrainConfig
    from tapkit.experiments import medical_plans

    assert metrics.task_metric("decoy-mnist") is metrics.task_metric("mnist")
    assert metrics.task_metric("decoy-mnist").name == "accuracy"
    assert [metrics.task_metric(e).name for e in sources.MEDICAL_EXPERIMENTS] == ["f1", "mae"]
    assert medical_plans.DATASETS == {"pneu": "PNEU", "knee": "KNEE"}
    assert labels.label("mnist") == labels.label("decoy-mnist") == "Decoy-MNIST"
    assert sources.FOLDER_DATASETS["knee"].classes == ("0", "1", "2", "3", "4")
    monkeypatch.setattr(xs, "_EXPERIMENTS", dict(xs._EXPERIMENTS))
    for taken in ("pneu", "mnist"):
        with pytest.raises(ValueError, match="already registered"):
            xs.register_experiment(xs.ExperimentSpec(taken, xs.ExperimentKind.MEDICAL, "x", 2))
    with pytest.raises(ValueError, match="metric and classes"):
        xs.register_experiment(xs.ExperimentSpec("skin", xs.ExperimentKind.MEDICAL, "SKIN", 2,
                                                 "f1", folder=sources.FOLDER_DATASETS["knee"]))
    xs.register_experiment(xs.ExperimentSpec("skin", xs.ExperimentKind.MEDICAL, "SKIN", 2, "f1",
                                             "SKIN"))
    assert xs.paper_names(xs.ExperimentKind.MEDICAL)["skin"] == "SKIN"
    assert labels.label("skin") == "SKIN"
    with pytest.raises(ValueError, match="unknown experiment 'cifar'"):
        xs.get_experiment("cifar")
    # registered after import, read when used: a config takes it; it has no folder layout
    with pytest.raises(ValueError, match="is not read from a folder"):
        data.medical_folder("skin", "/nowhere")
    assert TrainConfig(experiment="skin").experiment == "skin"
    with pytest.raises(ValueError, match="not 'mnist'"):
        TrainConfig(experiment="mnist")


@pytest.mark.parametrize("name", list_experiments())
def test_every_registered_experiment_loads_with_its_registered_metric(name):
    """Registry-wide: each entry has a loader (tapkit.data.load dispatches by kind, tapkit.data.LOADERS)
    and the task it builds has the registry's metric and classes; the tables' name of
    Decoy-MNIST is not a config's."""
    from tapkit import data, experiment_specs as xs

    assert name in xs.list_experiments()
    task, splits = data.load_experiment(name, image_size=32, per_class=4, test_per_class=2)
    spec = xs.get_experiment(name)
    assert (task.metric, task.num_classes) == (spec.metric, spec.classes)
    assert len(splits["train"]) > 0
    with pytest.raises(ValueError, match="not 'mnist'"):
        data.load_experiment("mnist")

"""Every chapter's configs in both profiles, built without training (a broken paper profile fails
here in seconds), and the notebooks' parameter parsing."""

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from tapkit import sources
from tapkit.book import medical, params
from tapkit.data import DataNotFoundError
from tapkit.experiments import chapter_plans, medical_plans, plans, profiles, protocols, setting1
from tapkit.methods import default_options
from tapkit.experiments import setting2_plans as s2p
from tapkit.experiments.cells import Annotation
from tapkit.experiments.setting2_protocols import LambdaSource, RandomMasks
from tapkit.config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
XS = ("tap", "rrr", "rbr")


def _medical_fixture(tmp_path) -> str:
    """A folder with the PNEU and KNEE layouts (the config-time check looks at folders only)."""
    for name in ("pneu", "knee"):
        ds = sources.FOLDER_DATASETS[name]
        for split in ("train", "test"):
            for cls in ds.classes:
                (tmp_path / ds.folder / split / cls).mkdir(parents=True, exist_ok=True)
    return str(tmp_path)


def _no_training(configs: list) -> pd.DataFrame:
    """A λ search's records without training: converged, the lowest validation loss at λ 1e-2."""
    return pd.DataFrame({"method": [c.method for c in configs], "lam": [c.lam for c in configs],
                         "status": "ok", "val_loss": [abs(math.log10(c.lam) + 2) for c in configs]})


def every_config(profile: str, tmp_path) -> dict[str, list[TrainConfig]]:
    """What each chapter's plan (:data:`chapter_plans.PLANS`, as its notebook and the sweep call
    it) asks for, without training: the medical λ searches' records are made up, and so is the
    random masks' coverage (the real one is read from the trained teachers)."""
    source = "embedded" if profile != "paper" else _medical_fixture(tmp_path)
    out = {}
    for chapter in chapter_plans.PLANS:
        medical_chapter = chapter not in chapter_plans.MNIST_CHAPTERS
        p = chapter_plans.protocol_for(chapter, profile,
                                       **({"source": source} if medical_chapter else {}))
        options = ({"coverage": {e: dict.fromkeys(protocols.medical_teachers(profile).train_taus, 0.3)
                                 for e in medical_plans.DATASETS}}
                   if chapter == "medical_teachers" else {})
        out[chapter] = chapter_plans.configs(chapter_plans.planned(chapter, p, tmp_path,
                                                                   _no_training, **options))
    return out


@pytest.mark.parametrize("profile", protocols.PROFILES)
def test_every_config_of_every_chapter_builds(profile, tmp_path):
    configs = every_config(profile, tmp_path)
    for chapter, cfgs in configs.items():
        assert cfgs, chapter
        for cfg in cfgs:
            d = json.loads(json.dumps(cfg.to_dict()))  # JSON round trip, same hash
            assert TrainConfig.from_dict(d) == cfg and TrainConfig.from_dict(d).key() == cfg.key()
    s = protocols.mnist(profile)
    left = {c for _, c in plans.mnist_left_out(s, setting1.cases())}
    assert len(configs["mnist"]) == sum(len(s.seeds_for(c)) for c in setting1.cases()
                                        if c not in left)
    assert len({c.key() for c in configs["mnist"]}) == len(configs["mnist"])


def test_paper_profile_pairs_lambdas_with_their_normalisation(tmp_path):
    configs = every_config("paper", tmp_path)
    for chapter, cfgs in configs.items():
        # teachers (data="holdout") train no XS term; teachers.teacher_config resets their loss fields
        for cfg in [c for c in cfgs if c.data != "holdout"]:
            assert cfg.options == protocols.RELEASED.get(cfg.method, default_options(cfg.method)), chapter
            if cfg.method == "tap":
                assert (cfg.options.norm, cfg.options.pooling) == ("l2sq", "cumulative"), chapter
    mnist = configs["mnist"]
    assert {c.source for c in mnist} == {sources.Mnist()}
    assert {(c.epochs, c.batch_size, c.optimizer) for c in mnist} == {(50, 256, "sgd")}
    assert sorted({c.seed for c in mnist}) == [0, 1, 2, 3, 4]
    pneu = configs["pneu"]
    assert all(c.pretrained and c.image_size == 224 for c in pneu)
    assert all(isinstance(c.source, sources.MedicalFolder) for c in pneu)
    batch = {(c.model, c.method): c.batch_size for c in pneu if c.data == "contaminated"}
    assert batch["densenet121", "rbr"] == 8 and batch["densenet121", "tap"] == 16
    assert batch["resnet18", "rbr"] == 16
    assert not protocols.medical("paper").weights_fallback


def test_quick_profile_keeps_the_equations_where_it_searches_and_its_trimmed_search(tmp_path):
    configs = every_config("quick", tmp_path)
    # RRR and RBR at the paper's λ on MNIST: the released forms those λ were tuned on; every
    # other run (TAP's searched λ, the stand-ins' searched RRR) the equations as written
    paper_lambda = {(c.method, c.options) for cfgs in configs.values() for c in cfgs
                    if c.experiment == "decoy-mnist" and c.method in ("rrr", "rbr")}
    assert paper_lambda == {("rrr", protocols.RELEASED["rrr"]), ("rbr", protocols.RELEASED["rbr"])}
    assert all(c.options == default_options(c.method) for cfgs in configs.values() for c in cfgs
               if not (c.experiment == "decoy-mnist" and c.method in ("rrr", "rbr")))
    assert any(c.method == "tap" for c in configs["mnist"])
    assert [(c.method, c.lam) for c in configs["lambda_search"]] == [
        ("tap", 1e-4), ("tap", 1e-3), ("tap", 1e-2)]
    assert {c.source for c in configs["mnist"]} == {sources.Embedded(label_noise=0.05)}
    # the medical stand-in: one λ per data set for TAP on ResNet-18 (the one the guarded search
    # over 1e-3 and 1e-2 chose there), one for DenseNet-121's TAP (the one it chose) and for
    # each RRR (DenseNet-121's at ResNet-18's choice: its seed-0 run), one for VGG-16's TAP (its
    # measured λ, no search)
    quick = protocols.medical("quick")
    found = {(r.model, r.method): [] for r in medical_plans.search_runs(quick, "pneu", medical.ARCHITECTURES, XS)}
    for r in medical_plans.search_runs(quick, "pneu", medical.ARCHITECTURES, XS):
        found[r.model, r.method].append(r.lam)
    assert found == {("resnet18", "rrr"): [1e-1], ("resnet18", "tap"): [1e-2],
                     ("densenet121", "tap"): [1e-3], ("densenet121", "rrr"): [1e-1],
                     ("vgg16", "tap"): [3e-2]}
    # KNEE leaves RRR out (at its 14-px tags RRR did not learn the task), and says why; its
    # ResNet-18 TAP at KNEE's own value
    knee = medical_plans.search_runs(quick, "knee", medical.ARCHITECTURES, XS)
    assert {(r.model, r.method, r.lam) for r in knee} == {("resnet18", "tap", 1e-3),
                                                         ("densenet121", "tap", 1e-3)}
    # asked without a data set, a grid kept per data set is every data set's values (whether
    # the architecture is searched at all, and the audit's text)
    assert quick.grid("tap", "resnet18") == (1e-3, 1e-2)
    assert quick.grids("tap", "resnet18") == {"pneu": (1e-2,), "knee": (1e-3,)}
    assert "learned the task in none" in medical_plans.left_out(
        quick, "knee", ["resnet18"], XS)[("resnet18", "rrr")]
    assert ("resnet18", "rrr") not in medical_plans.left_out(quick, "pneu", ["resnet18"], XS)
    assert medical_plans.search_runs(quick, "pneu", medical.EXTRA_ARCHITECTURES, XS) == []


def test_paper_search_follows_the_paper_grid(tmp_path):
    s = protocols.mnist("paper")
    lams = {m: sorted(c.lam for c in plans.search_configs(s) if c.method == m) for m in XS}
    for m in ("tap", "rrr"):
        assert len(lams[m]) == 10 and lams[m][0] == pytest.approx(1e-9) and lams[m][-1] == 1.0
    assert len(lams["rbr"]) == 10 and lams["rbr"][0] == 1.0 and lams["rbr"][-1] == pytest.approx(1e9)
    m = protocols.medical("paper", source=_medical_fixture(tmp_path))
    runs = medical_plans.search_runs(m, "knee", medical.ARCHITECTURES, XS)
    assert {(r.model, r.method) for r in runs} == {(a, x) for a in medical.ARCHITECTURES for x in XS}
    assert len(runs) == 3 * 3 * 10 and {r.seed for r in runs} == {0}


def test_search_choice_feeds_the_medical_runs(tmp_path):
    import pandas as pd

    search = pd.DataFrame({"model": ["resnet18"] * 3, "method": ["tap"] * 3,
                           "lam": [1e-6, 1e-5, 1e-4], "val_loss": [0.9, 0.4, float("nan")],
                           "status": ["ok", "ok", "dnc"]})
    choice = plans.choose_lambdas(search, ["model", "method"])
    assert choice.lam.tolist() == [1e-5]
    (tmp_path / "tables").mkdir()
    choice.to_csv(tmp_path / "tables" / "lambda_choice_pneu_tag.csv", index=False)
    lams = medical_plans.searched_lambdas(tmp_path, "pneu", "tag", {"rrr": 0.5})
    runs = medical.medical_runs(protocols.medical("quick", seeds=[0]), "pneu", ["resnet18"],
                                ["tap", "rrr"], lambdas=lams)
    assert [r.cfg.lam for r in runs] == [1e-5, 0.5]


def test_paper_medical_without_a_folder_says_where_to_put_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TAPKIT_DATA", str(tmp_path))
    with pytest.raises(DataNotFoundError, match="-p source"):
        medical.medical_runs(protocols.medical("paper"), "pneu", ["resnet18"], ["none"])


def test_protocol_overrides_are_checked_when_built():
    with pytest.raises(ValueError, match="torchvision:/path/to/root"):
        protocols.mnist("paper", source="torchvision")
    with pytest.raises(ValueError, match="unknown setting"):
        protocols.mnist("quick", seed=[1])
    with pytest.raises(ValueError, match="unknown profile"):
        protocols.mnist("fast")
    s = protocols.mnist("paper", seeds=[7], source="torchvision:/tmp/tv")
    assert s.seeds == (7,) and s.source == sources.Torchvision("/tmp/tv")
    assert s.as_dict()["source"] == "torchvision:/tmp/tv" and s.as_dict()["seeds"] == [7]


# ----------------------------------------------------------------------------- parameters

@pytest.mark.parametrize("name,given,expected", [
    ("seeds", "[1]", [1]), ("seeds", [0, 1], [0, 1]), ("seeds", "None", None), ("seeds", 3, [3]),
    ("epochs", "2", 2), ("kd_temperature", "1e-3", 1e-3), ("profile", "paper", "paper"),
    ("lambdas", "{'tap': 1e-3}", {"tap": 1e-3}),
    ("lambdas", '{"resnet18": {"tap": 1}}', {"resnet18": {"tap": 1.0}}),
    ("grids", "{'tap': [1e-4, 1e-3]}", {"tap": [1e-4, 1e-3]}),
    ("methods", "['none', 'tap']", ["none", "tap"]), ("source", "/data/pneu", "/data/pneu"),
    ("stripe_models", '{"pneu": ["resnet18"]}', {"pneu": ["resnet18"]}),
    ("live", "True", True), ("results", None, None),
])
def test_parameters_accept_values_and_their_string_forms(name, given, expected):
    assert params.parse_param(name, given) == expected


@pytest.mark.parametrize("name,given,says", [
    ("seeds", "[1,", "seeds='[1,'"), ("seeds", "[0.5]", "list of ints"),
    ("epochs", "five", "an int"), ("profile", "fast", "['quick', 'paper', 'smoke']"),
    ("lambdas", "{'tap': 'big'}", "{'tap': 1e-3}"), ("live", "maybe", "True or False"),
    ("profile", None, "parameter profile is None"),
])
def test_a_malformed_parameter_names_itself_and_what_it_expects(name, given, says):
    with pytest.raises(params.ParameterError, match=re.escape(says)):
        params.parse_param(name, given)


def test_parse_params_rewrites_a_notebook_namespace():
    ns = {"profile": "quick", "seeds": "[1]", "lambdas": "None", "other": "[1]"}
    params.parse_params(ns)
    assert ns == {"profile": "quick", "seeds": [1], "lambdas": None, "other": "[1]"}


def test_every_notebook_parameter_is_known_and_parsed_first():
    for path in sorted((ROOT / "notebooks").glob("*.py")):
        text = path.read_text()
        cell = text.split('# %% tags=["parameters"]\n', 1)[1].split("\n# %%", 1)
        names = re.findall(r"^(\w+) = ", cell[0], flags=re.M)
        # papermill reads a parameter's line only if it has one "=" (comments included)
        assert all(line.count("=") <= 1 for line in cell[0].splitlines()), path.name
        assert names and set(names) <= set(params.PARAMETERS), (path.name, names)
        for name in names:  # the notebook's own defaults parse to themselves
            ns = {}
            exec(f"{name} = " + re.search(rf"^{name} = (.*?)(\s+#.*)?$", cell[0], re.M).group(1), ns)
            assert params.parse_param(name, ns[name]) == ns[name], (path.name, name)
        # parsed by the shared chapter opening (tapkit.book.chapter) in one of the first two cells
        assert "chapter.open_chapter(globals()" in "".join(cell[1].split("\n# %%")[:2]), path.name


def test_papermill_string_parameter_runs_the_data_chapter(tmp_path):
    """The README's `papermill ... -p seeds "[1]"`: the string reaches the notebook and is parsed."""
    jupytext = pytest.importorskip("jupytext")
    nbformat = pytest.importorskip("nbformat")
    pm = pytest.importorskip("papermill")
    nb = jupytext.read(ROOT / "notebooks" / "data.py")
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    src, out = tmp_path / "data.ipynb", tmp_path / "out.ipynb"
    nbformat.write(nb, src)
    pm.execute_notebook(str(src), str(out), parameters={"seeds": "[1]", "n_examples": "2",
                                                        "results": str(tmp_path / "results")},
                        cwd=str(ROOT / "notebooks"), kernel_name="python3", progress_bar=False)
    assert (tmp_path / "results" / "quick" / "figures" / "data_mnist.png").exists()
    # an invalid string, injected by papermill's own parameterizer, stops the chapter's opening
    # cell with the parameter named. Run here, not in a second kernel: the run above already
    # proves the kernel path (a second one cost 8 of the test's 20 s), and papermill stops at the
    # first raising cell, so its cells up to the chapter's opening are all that kernel ran
    bad = pm.parameterize.parameterize_notebook(pm.iorw.load_notebook_node(str(src)),
                                                {"seeds": "[1,"}, kernel_name="python3",
                                                language="python")
    cells = [c.source for c in bad.cells if c.cell_type == "code"]
    opening = next(i for i, c in enumerate(cells) if "chapter.open_chapter(globals()" in c)
    assert any('seeds = "[1,"' in c for c in cells[:opening]), cells[:opening]
    ns = {"__name__": "__main__"}
    with pytest.raises(params.ParameterError, match="parameter seeds='\\[1,' is not valid"):
        for code in cells[:opening + 1]:
            exec(compile(code, "<data.ipynb>", "exec"), ns)


def test_a_case_may_train_on_the_first_seeds_only():
    s = replace(protocols.mnist("quick"), case_seeds={"rbr": 1}, not_run={})
    assert s.seeds == (0, 1, 2) and s.seeds_for("rbr") == (0,) and s.seeds_for("tap") == (0, 1, 2)
    configs = plans.mnist_configs(s, ["tap", "rbr"], {"tap": 1e-3, "rbr": 1e4})
    assert [(c.method, c.seed) for c in configs] == [("tap", 0), ("tap", 1), ("tap", 2), ("rbr", 0)]
    # a notebook's seeds override: RBR keeps the first of them
    assert s.with_overrides(seeds=[5, 6]).seeds_for("rbr") == (5,)
    assert protocols.mnist("paper").seeds_for("rbr") == (0, 1, 2, 3, 4)


def test_a_case_the_profile_leaves_out_is_planned_nowhere_and_says_why():
    """A profile that leaves RBR out on Decoy-MNIST (``not_run``, with why): no chapter plans it,
    the explorer does not ask for it, and the reason is the one the pages and the report quote;
    the paper, quick and smoke profiles train it."""
    why = "RBR costs ~2x RRR a run: over this budget"
    s = replace(protocols.mnist("quick"), not_run={"two_layer_cnn": {"rbr": why}})
    cases = setting1.cases()
    left = plans.mnist_left_out(s, cases)
    assert left == {("two_layer_cnn", "rbr"): why}
    lams = {"tap": 1e-3, "rrr": 1e-3, "rbr": 1e4}
    assert "rbr" not in {c.method for c in plans.mnist_configs(s, cases, lams)}
    assert "rbr" not in {c.method for c in plans.mnist_cells(s, cases, lams)}
    assert list(plans.mnist_seed_configs(s, cases, lams, 0)) == [c for c in cases if c != "rbr"]
    for profile in ("paper", "quick", "smoke"):
        p = protocols.mnist(profile)
        assert plans.mnist_left_out(p, cases) == {}
        assert "rbr" in {c.method for c in plans.mnist_configs(p, cases, lams)}


@pytest.mark.parametrize("profile", protocols.PROFILES)
def test_medical_setting2_students_share_their_teachers_data(profile, tmp_path):
    m = protocols.medical(profile, source="embedded" if profile != "paper" else _medical_fixture(tmp_path))
    t = protocols.medical_teachers(profile)
    p = t.on_seeds(m)
    teachers_ = {c.cfg.key(): c.cfg for c in s2p.teacher_cells(p, t, "pneu")}
    assert len(teachers_) == len(t.fractions) * len(p.seeds)
    assert {c.model for c in teachers_.values()} == {"resnet18"}
    assert all(c.data == "holdout" and c.method == "none" for c in teachers_.values())
    model = t.models[0]
    lams = s2p.student_lambdas(p, t, tmp_path, "pneu", model)
    students = s2p.xs_students(p, t, "pneu", model, lams, {tau: 0.25 for tau in t.train_taus})
    per_seed_tau = len(t.fractions) + 1  # each teacher's masks, and random masks
    assert len(students) == len(t.xs_methods) * len(t.train_taus) * len(p.seeds) * per_seed_tau
    for st in students:
        if st.annotation == "random":
            assert st.cfg.annotation == "random" and st.cfg.random_coverage == 0.25
        else:  # taught by one of the teachers above, at the student's tau
            assert st.cfg.teacher.key() in teachers_ and st.cfg.tau == st.tau
    kd = s2p.kd_students(p, t, "pneu", t.kd_models[0], s2p.student_lambdas(p, t, tmp_path, "pneu", t.kd_models[0]))
    assert {st.method for st in kd} == set(t.kd_methods)
    assert all(st.cfg.teacher.key() in teachers_ for st in kd)
    # the distillation chapter's TAP and No-XS rows are the Setting-2 chapter's runs (cache hits)
    setting2 = {st.cfg.key() for st in s2p.setting2_students(p, t, "pneu", tmp_path, {tau: 0.25 for tau in t.train_taus})}
    shared = [st for st in s2p.distillation_students(p, t, "pneu", tmp_path) if st.method in ("tap", "none")]
    assert shared and all(st.cfg.key() in setting2 for st in shared)


def test_medical_setting2_lambdas_come_from_setting1_on_the_standin(tmp_path):
    p, t = protocols.medical("quick"), protocols.medical_teachers("quick")
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "lambda_choice_pneu_tag.csv").write_text(
        "model,method,lam,val_loss\nresnet18,tap,0.01,0.5\n")
    lams = s2p.student_lambdas(p, t, tmp_path, "pneu", "resnet18")
    # TAP: the search's choice above; RRR/RBR: the paper's ground-truth table for PNEU ResNet-18
    # (tex line 560: 1e-3, 1e7), not searched; KD/AT: the quick profile's kd_lambda, 1 (JT is
    # the paper profile's only)
    assert lams == {"tap": 0.01, "rrr": 1e-3, "rbr": 1e7, "kd": 1.0, "at": 1.0}
    assert s2p.student_lambdas(p, t, tmp_path, "pneu", "resnet18", {"tap": 3.0})["tap"] == 3.0
    paper = s2p.student_lambdas(protocols.medical("paper"), protocols.medical_teachers("paper"),
                                tmp_path, "pneu", "resnet18")
    # the paper's teacher-annotation λ table (tex line 573) and distillation table (line 1043),
    # PNEU ResNet-18, as printed; the search's choice does not apply to the paper's λ
    assert paper == {"tap": 1e-6, "rrr": 1e-4, "rbr": 1e2, "at": 1e0, "jt": 1e-3, "kd": 1e4}


def test_at_pairs_a_vgg16_student_with_a_resnet18_teacher_by_resolution():
    m, t = protocols.medical("paper", source="embedded"), protocols.medical_teachers("paper")
    pairs = s2p.at_pairs(m, t, "pneu", "vgg16")
    assert pairs["size"].tolist() == ["112 px", "56 px", "28 px", "14 px", "7 px"]
    assert pairs["teacher layer"].tolist() == ["–", "layer1", "layer2", "layer3", "layer4"]
    dense = s2p.at_pairs(m, t, "pneu", "densenet121")
    assert dense["size"].tolist() == dense["teacher size"].tolist()  # four stages each: 1:1


@pytest.mark.parametrize("model", ["resnet18", "densenet121", "vgg16"])
def test_the_efficiency_rows_take_each_model_as_the_quick_medical_chapters_train_it(model):
    """The speed chapter's efficiency table (issue 21) measures the settings the runs train with:
    a change of a model's image size or batch moves its row with it."""
    cfg = setting1.case_config(protocols.MEDICAL["quick"], "pneu", model, "none", None, 0)
    spec = f"{cfg.model}@{cfg.batch_size}x{cfg.image_size}"
    assert (spec, cfg.optimizer) in protocols.BENCH["quick"].efficiency
    mnist = protocols.MNIST["quick"].config(method="none")
    assert (f"two_layer_cnn@{mnist.batch_size}x28", mnist.optimizer) in profiles.quick.EFFICIENCY


def test_one_protocol_type_serves_mnist_as_the_one_experiment_one_model_case():
    """Issue 23: Decoy-MNIST and PNEU/KNEE share :class:`protocols.Protocol`. The fields MNIST
    does not set are TrainConfig's defaults, so its configs (and their keys) are those a plain
    TrainConfig of its settings gives; a protocol of several experiments asks for one by name."""
    m, d = protocols.mnist("quick"), protocols.medical("quick")
    assert type(m) is type(d) is protocols.Protocol
    cfg = m.config(method="tap", lam=1e-3, seed=1)
    assert cfg == m.config("decoy-mnist", "two_layer_cnn", method="tap", lam=1e-3, seed=1)
    plain = TrainConfig(experiment="decoy-mnist", model="two_layer_cnn", source="embedded:label_noise=0.05",
                        epochs=3, batch_size=64, optimizer="adam", lr=1e-3, method="tap",
                        lam=1e-3, seed=1)
    assert cfg.key() == plain.key()
    with pytest.raises(ValueError, match=r"several experiments \['pneu', 'knee'\]"):
        d.config(model="resnet18")
    assert d.config("pneu", "resnet18").image_size == 64 and cfg.image_size is None
    assert "image_size" not in m.as_dict() and set(m.as_dict()["options"]) == {"rrr", "rbr"}


# ----------------------------------------------------------------------------- one Setting 2

def test_one_setting2_plan_serves_mnist_and_the_medical_sets_by_its_typed_fields(tmp_path):
    """Decoy-MNIST's and PNEU's Setting 2 come from the same functions; what differs is data of
    the protocol: random masks of the patch's coverage once per seed (MNIST) or of the teachers'
    coverage at each τ (PNEU), and RRR/RBR with the first teacher only (MNIST)."""
    mnist = protocols.mnist("paper").with_overrides(seeds=[0, 1])
    tm = protocols.mnist_teachers("paper")
    lams = s2p.student_lambdas(mnist, tm, tmp_path, None, None)
    assert lams == {**protocols.MNIST_TEACHER_LAMBDAS, **protocols.MNIST_KD_LAMBDAS}
    students = s2p.xs_students(mnist, tm, "decoy-mnist", "two_layer_cnn", lams)
    random = [c for c in students if c.annotation is Annotation.RANDOM]
    assert [(c.method, c.tau, c.seed) for c in random] == [
        (m, None, seed) for m in ("tap", "rrr", "rbr") for seed in (0, 1)]
    assert all(c.cfg.random_coverage is None and c.experiment == "decoy-mnist" for c in random)
    taught = {(c.method, c.annotation) for c in students if c.annotation.is_teacher}
    assert taught == {("tap", Annotation.TEACHER_10), ("tap", Annotation.TEACHER_1),
                      ("rrr", Annotation.TEACHER_10), ("rbr", Annotation.TEACHER_10)}
    assert len(students) == 2 * (3 * 2 + 3 * 1 + 3 * 1) + len(random)  # τ, then random per seed
    assert all(c.cfg.teacher.model == "two_layer_cnn" for c in students if c.annotation.is_teacher)

    pneu, tp = protocols.medical("paper", source="embedded"), protocols.medical_teachers("paper")
    with pytest.raises(ValueError, match="teachers' coverage"):
        s2p.random_students(pneu, tp, "pneu", "resnet18", {"tap": 1.0, "rrr": 1.0, "rbr": 1.0})
    rnd = s2p.random_students(pneu, tp.with_overrides(seeds=(0,)), "pneu", "resnet18",
                              dict.fromkeys(("tap", "rrr", "rbr"), 1.0), {0.01: 0.1, 0.05: 0.2,
                                                                           0.1: 0.3})
    assert [(c.tau, c.cfg.random_coverage) for c in rnd if c.method == "tap" and c.seed == 0] == [
        (0.01, 0.1), (0.05, 0.2), (0.1, 0.3)]


def test_a_setting2_protocol_rejects_an_unknown_random_mask_or_lambda_source():
    with pytest.raises(ValueError, match=r"unknown random_masks 'uniform'.*'teachers', 'ground_truth'"):
        protocols.mnist_teachers("quick").with_overrides(random_masks="uniform")
    with pytest.raises(ValueError, match="unknown lambda_source 'tuned'"):
        protocols.medical_teachers("quick").with_overrides(lambda_source="tuned")
    t = protocols.medical_teachers("quick").with_overrides(lambda_source="paper")
    assert t.lambda_source is LambdaSource.PAPER and t.random_masks is RandomMasks.TEACHERS


def test_random_masks_cover_what_the_teachers_masks_cover_at_each_tau(monkeypatch, tmp_path):
    """The PNEU random baseline's coverage (:func:`teacher_coverage`, as the sweep computes it
    when no notebook passes it): per τ, the share of pixels ``E < τ`` (Eq. 14), averaged over
    the teachers' saliency maps. Hand-made maps stand in for the trained teachers'."""
    import torch

    t = protocols.medical_teachers("quick").with_overrides(train_taus=(0.05, 0.5))
    p = t.on_seeds(protocols.medical("quick"))  # as the chapter plans it: the teachers' seed
    maps = iter([torch.tensor([[[[0.01, 0.2], [0.6, 0.9]]]]),     # 10% teacher: 1/4, 2/4 below
                 torch.tensor([[[[0.0, 0.03], [0.04, 1.0]]]])])   # 1% teacher: 3/4, 3/4 below
    asked = []

    def saliency(cfg, runs_root, device):
        asked.append((cfg.clean_fraction, cfg.data, runs_root))
        return next(maps), None

    monkeypatch.setattr(s2p, "teacher_saliency", saliency)
    cover = s2p.teacher_coverage(p, t, "pneu", tmp_path / "runs")
    assert cover == pytest.approx({0.05: (0.25 + 0.75) / 2, 0.5: (0.5 + 0.75) / 2})
    assert asked == [(0.1, "holdout", tmp_path / "runs"), (0.01, "holdout", tmp_path / "runs")]


# ------------------------- the paper profile trains as the released code tuned λ (issue 37)

def test_paper_profile_follows_the_released_code_and_quick_keeps_the_paper_text(tmp_path):
    from tapkit.config import ClassWeights
    from tapkit.method_options import AtOptions, JtOptions, KdOptions
    from tapkit.experiments.setting2_protocols import Threshold

    configs = every_config("paper", tmp_path)
    # quantile teacher masks for every Setting-2 student with teacher masks (MNIST and medical)
    taught = [c for ch in ("teachers", "distillation", "medical_teachers", "medical_distillation")
              for c in configs[ch] if c.annotation == "teacher"]
    assert taught and {c.threshold for c in taught} == {"quantile"}
    assert protocols.MNIST_TEACHERS["paper"].threshold is Threshold.QUANTILE
    # class-weighted cross-entropy on PNEU (teachers included), nowhere else
    medical_cfgs = [c for ch in ("pneu", "knee", "medical_teachers", "medical_distillation")
                    for c in configs[ch]]
    assert {c.class_weights for c in medical_cfgs if c.experiment == "pneu"} == {ClassWeights.RELEASED}
    assert {c.class_weights for c in medical_cfgs if c.experiment == "knee"} == {ClassWeights.NONE}
    assert {c.class_weights for c in configs["mnist"]} == {ClassWeights.NONE}
    # the released VGG-16 head, as Table 1 and the quick profile
    assert "vgg16" not in {c.model for c in configs["pneu"]} and "vgg16_authors" in {
        c.model for c in configs["pneu"]}
    assert ("vgg16_authors@16x224", "sgd") in protocols.BENCH["paper"].efficiency
    # the distillation baselines as released: KD at T = 1.0, AT and JT in their released forms
    kd = {c.method: c.options for c in configs["medical_distillation"] + configs["distillation"]
          if c.method in ("kd", "at", "jt")}
    assert kd == {"kd": KdOptions(1.0), "at": AtOptions("released"),
                  "jt": JtOptions(variant="released")}

    quick = every_config("quick", tmp_path / "quick")
    # quick: the stand-ins keep Eq. 14's absolute τ; MNIST's students, trained at a λ searched
    # with ground-truth masks, take the quantile rule's comparable coverage
    rules = {ch: {c.threshold for c in quick[ch] if c.annotation == "teacher"}
             for ch in ("teachers", "medical_teachers")}
    assert rules == {"teachers": {"quantile"}, "medical_teachers": {"absolute"}}
    assert {c.class_weights for cfgs in quick.values() for c in cfgs} == {ClassWeights.NONE}
    assert {c.options for c in quick["distillation"] if c.method == "kd"} == {KdOptions(4.0)}
    assert {c.options for c in quick["medical_distillation"] if c.method == "at"} == {AtOptions()}


def test_quick_mnist_students_take_taps_searched_lambda_and_the_papers_elsewhere(tmp_path):
    """The quick MNIST Setting 2 trains TAP in Definition 2's form, whose λ the profile searched
    (the paper's teacher λ 1e-4 was tuned on the released form): TAP's students take Setting 1's
    choice, RRR/RBR and KD/AT/JT the paper's tables."""
    p, t = protocols.mnist("quick"), protocols.mnist_teachers("quick")
    assert t.lambda_source is LambdaSource.SEARCHED
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "lambda_choice.csv").write_text("method,lam\ntap,0.01\n")
    lams = s2p.student_lambdas(p, t, tmp_path, None, None)
    assert lams == {**protocols.MNIST_TEACHER_LAMBDAS, **protocols.MNIST_KD_LAMBDAS, "tap": 0.01}
    assert {c.lam for c in s2p.taught_students(p, t, "decoy-mnist", "two_layer_cnn", lams)
            if c.method == "tap"} == {0.01}
    # without a search's choice, the paper's Setting-1 λ (the search has not run yet)
    assert s2p.student_lambdas(p, t, tmp_path / "none", None, None)["tap"] == protocols.MNIST_LAMBDAS["tap"]


def test_a_setting2_plan_given_its_own_threshold_rule_uses_it(tmp_path):
    p = protocols.mnist("paper")
    t = protocols.mnist_teachers("paper")
    lams = s2p.student_lambdas(p, t, tmp_path, None, None)
    rules = {rule: {c.cfg.threshold
                    for c in s2p.taught_students(p, t, "decoy-mnist", "two_layer_cnn", lams, rule)}
             for rule in (None, "absolute", "quantile")}
    assert rules == {None: {"quantile"}, "absolute": {"absolute"}, "quantile": {"quantile"}}
    with pytest.raises(ValueError, match="unknown threshold 'median'"):
        t.with_overrides(threshold="median")
    with pytest.raises(ValueError, match="'median' is not a valid Threshold"):
        s2p.threshold_rule(t, "median")


def test_the_quick_stand_ins_carry_their_calibrated_label_noise():
    """PNEU's stand-in flips 5% of its labels, KNEE's moves half a grade (the tag follows) and
    draws its tags 14 px tall and its stripes 4 px wide: set by the profile wherever the source is
    the stand-in, also when a notebook names it."""
    quick = protocols.medical("quick")
    knee = "embedded:label_noise=0.5,tag_px=14,stripe_px=4"
    assert [str(quick.source_for(e)) for e in ("pneu", "knee")] == [
        "embedded:label_noise=0.05", knee]
    named = protocols.medical("quick", source="embedded")
    assert str(named.source_for("knee")) == knee
    # a source that names its own calibration keeps it
    own = protocols.medical("quick", source="embedded:label_noise=0.2")
    assert str(own.source_for("knee")) == "embedded:label_noise=0.2"
    cfg = setting1.case_config(quick, "pneu", "resnet18", "none", 0.0, 0)
    assert str(cfg.source) == "embedded:label_noise=0.05"
    # the paper profile's folders are untouched; the quick Decoy-MNIST records 5% of its
    # training labels wrong (its calibration), the paper profile's full MNIST none
    assert not protocols.medical("paper").embedded
    # an entry is checked for its experiment as a typed source is: no textures on Decoy-MNIST
    bad = protocols.mnist("quick").with_overrides(embedded={"decoy-mnist": sources.Embedded(texture=0.2)})
    with pytest.raises(ValueError, match="belong to the PNEU/KNEE stand-ins"):
        bad.config(seed=0)
    assert str(protocols.mnist("quick").config(seed=0).source) == "embedded:label_noise=0.05"
    assert str(protocols.mnist("paper").config(seed=0).source) == "mnist"


def test_settings_resolve_a_run_once_with_its_overrides_and_variant():
    """``Protocol.settings``: the architecture's overrides applied, every value keyed by
    experiment resolved, the registry variant named; the config built from it records the
    variant and the overridden values, and a case's own batch comes from ``case_batch``."""
    p = protocols.Protocol(
        "t", ("pneu", "knee"), ("resnet18", "vgg16"), "embedded", (0,), epochs={"pneu": 3,
        "knee": 5}, batch_size=16, optimizer="adam", lr=1e-3, image_size=64,
        per_class={"pneu": 40, "knee": 12}, model_overrides={"vgg16": {"lr": 1e-4,
        "image_size": 32}}, variants={"vgg16": "vgg16_authors"},
        method_batch_size={"vgg16": {"rbr": 8}})
    vgg = p.settings("knee", "vgg16")
    assert (vgg.epochs, vgg.per_class, vgg.lr, vgg.image_size) == (5, 12, 1e-4, 32)
    assert vgg.variant == "vgg16_authors" and vgg.batch_for("rbr") == {"batch_size": 8}
    assert vgg.batch_for("tap") == {} and p.settings("pneu", "resnet18").lr == 1e-3
    cfg = setting1.case_config(p, "knee", "vgg16", "rbr", 1e4, 0)
    assert (cfg.model, cfg.batch_size, cfg.lr, cfg.image_size, cfg.epochs) == (
        "vgg16_authors", 8, 1e-4, 32, 5)
    with pytest.raises(ValueError, match="several experiments"):
        p.settings(None, "vgg16")
    mnist = protocols.MNIST["quick"].settings()
    assert (mnist.experiment, mnist.model) == ("decoy-mnist", "two_layer_cnn")


def test_an_architecture_may_train_on_more_seeds_of_one_data_set_than_of_the_other():
    """``model_seeds`` keyed by experiment: the medical plan trains DenseNet-121 on five PNEU seeds
    and three KNEE ones, the pages say so, and a count without an experiment to read it by is
    refused rather than guessed."""
    s = replace(protocols.medical("quick"), seeds=(0, 1, 2, 3, 4), case_seeds={"base": 1},
                model_seeds={"resnet18": 3, "densenet121": {"pneu": 5, "knee": 3}}, not_run={})
    planned = {e: sorted({(c.model, c.method, c.seed)
                          for c in medical_plans.medical_runs(s, e, ["resnet18", "densenet121"],
                                                              ["base", "none"])})
               for e in ("pneu", "knee")}
    assert [seed for m, case, seed in planned["pneu"] if (m, case) == ("densenet121", "none")] \
        == [0, 1, 2, 3, 4]
    assert [seed for m, case, seed in planned["knee"] if (m, case) == ("densenet121", "none")] \
        == [0, 1, 2]
    assert [seed for m, case, seed in planned["pneu"] if (m, case) == ("resnet18", "none")] \
        == [0, 1, 2]
    assert [(m, seed) for m, case, seed in planned["pneu"] if case == "base"] == [
        ("densenet121", 0), ("resnet18", 0)]
    assert s.seed_counts(["resnet18", "densenet121"], "pneu") == (5, {"resnet18": 3, "base": 1})
    assert s.seed_counts(["resnet18", "densenet121"], "knee") == (3, {"base": 1})
    with pytest.raises(ValueError, match="several experiments"):
        s.seeds_on("densenet121")
    assert s.seeds_on("resnet18") == (0, 1, 2)


def test_a_case_may_train_on_fewer_seeds_of_one_architecture():
    """``case_seeds`` keyed by architecture: each named one on its own count (capped by its
    ``model_seeds``), one not named on every seed; without an architecture to read the count by,
    the protocol refuses rather than guesses."""
    s = replace(protocols.medical("quick"), seeds=(0, 1, 2, 3, 4),
                case_seeds={"rrr": {"densenet121": 4, "resnet18": 2}},
                model_seeds={"resnet18": 5, "densenet121": 3}, not_run={})
    assert s.seeds_of("resnet18", "rrr", "pneu") == (0, 1)
    assert s.seeds_of("densenet121", "rrr", "pneu") == (0, 1, 2)
    assert s.seeds_of("vgg16", "rrr", "pneu") == (0, 1, 2, 3, 4)
    assert s.seeds_of("resnet18", "tap", "pneu") == (0, 1, 2, 3, 4)
    assert s.seed_counts(["resnet18", "densenet121"], "pneu") == (5, {"densenet121": 3, "rrr": 3})
    with pytest.raises(ValueError, match="several models"):
        s.seeds_for("rrr")
    # an architecture's count may differ by data set (quick: ResNet-18's Base on three KNEE
    # seeds, one PNEU seed); asked without the data set, a protocol of two refuses
    t = replace(s, case_seeds={"base": {"resnet18": {"pneu": 1, "knee": 3}, "densenet121": 2}})
    assert t.seeds_of("resnet18", "base", "knee") == (0, 1, 2)
    assert t.seeds_of("resnet18", "base", "pneu") == (0,)
    assert t.seeds_of("densenet121", "base", "knee") == (0, 1)
    assert t.seed_counts(["resnet18"], "knee") == (5, {"base": 3})
    with pytest.raises(ValueError, match="several experiments"):
        t.seeds_for("base", "resnet18")
    runs = medical_plans.medical_runs(s, "pneu", ["resnet18", "densenet121"], ["rrr"],
                                      lambdas={"rrr": 1.0})
    assert sorted((r.model, r.seed) for r in runs) == [
        ("densenet121", 0), ("densenet121", 1), ("densenet121", 2), ("resnet18", 0),
        ("resnet18", 1)]


def test_the_stripe_appendix_trains_its_own_cases_on_its_first_seeds():
    """``stripe_cases`` and ``stripe_seeds`` narrow the stripe table only (quick: No XS and TAP on
    three seeds); unset, it trains what the tag table does."""
    s = replace(protocols.medical("quick"), seeds=(0, 1, 2, 3, 4), stripe_models=("resnet18",),
                stripe_cases=("none", "tap"), stripe_seeds=2, not_run={})
    sp, cases = s.stripes(setting1.cases())
    assert cases == ("none", "tap") and sp.seeds == (0, 1) and s.seeds == (0, 1, 2, 3, 4)
    runs = medical_plans.medical_runs(sp, "pneu", ["resnet18"], cases, "stripe",
                                      lambdas={"tap": 1e-2})
    assert [(r.method, r.seed) for r in runs] == [("none", 0), ("none", 1), ("tap", 0),
                                                  ("tap", 1)]
    assert {r.cfg.artifact for r in runs} == {"stripe"}
    assert s.stripes(["base", "tap"])[1] == ("tap",)
    full = replace(s, stripe_cases=None, stripe_seeds=None)
    assert full.stripes(setting1.cases()) == (full, tuple(setting1.cases()))


def test_a_case_never_counts_more_seeds_than_its_architectures_train():
    """A case's own seed count above every architecture's is capped by :meth:`Protocol.seeds_of`,
    so the pages' count is the architectures' most, not the case's."""
    s = replace(protocols.medical("quick"), seeds=(0, 1, 2, 3, 4), case_seeds={"tap": 5},
                model_seeds={"resnet18": 3, "densenet121": 2}, not_run={})
    assert s.seeds_of("resnet18", "tap", "pneu") == (0, 1, 2)
    assert s.seed_counts(["resnet18", "densenet121"], "pneu") == (3, {"densenet121": 2})

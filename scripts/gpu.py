"""All the GPU work of the paper profile in one device command of at most ten minutes.

On the GPU machine this runs from the source tree on the machine's own PyTorch (nothing is
installed over it): the wheels it lacks (captum, mlxtend) and full MNIST travel in the ignored
folder ``gpu-carry/`` that ``make gpu-pack`` fills; they are installed with ``pip install
--no-index --no-deps`` into ``gpu-carry/site`` and put on the path. Then, in order:

1. the paper-profile Setting-1 MNIST table (Base, No XS, RRR, RBR, TAP; five seeds; 50 SGD
   epochs on full MNIST), through ``--workers`` processes sharing the one GPU;
2. Table 1 (speed and memory: VGG-16, ResNet-18, DenseNet-121 at batch 16 of 224 px, the
   two-layer CNN at batch 256 of 28 px as context), measured by
   :func:`tapkit.experiments.table1.measure` from the paper profile's bench protocol, the same
   function and protocol as the speed page: the authors' VGG-16 head and the released losses.

It writes ``--out`` (``results/paper/``: ``tables/mnist_gt.*``, ``tables/speed_memory.*`` as the
book's chapters write them, ``runs/`` and ``gpu_provenance.json`` with the git commit, torch
version, device and wall times) and, after each stage, copies the tables, the provenance and a
tarball of the runs' ``metrics.json`` into ``--export`` (the device's ``$OUT``), so a command
stopped at its time limit still returns what was done. ``--dry-run`` (on a CPU, in seconds): the
plan, the data check, one training step per run and a tiny benchmark.

Device command (carry ``gpu-carry``)::

    python3 scripts/gpu.py --carry gpu-carry --export $OUT
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
log = logging.getLogger("gpu")


CARRIED_WHEELS = ("captum", "mlxtend")  # what the GPU image lacks (its package list, KINDS.md)
IDX_NAMES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
             "t10k-labels-idx1-ubyte")


def pack(carry: Path, mnist: Path) -> None:
    """Fill ``carry`` for the GPU machine: pure-Python wheels of :data:`CARRIED_WHEELS` at this
    environment's versions for Python 3.12 (``pip download --no-deps``), and full MNIST's four IDX
    files from ``mnist``, gzipped (11 MB instead of 55: the carried tree is limited to 64 MiB)."""
    import gzip
    from importlib.metadata import version

    (carry / "wheels").mkdir(parents=True, exist_ok=True)
    pins = [f"{name}=={version(name)}" for name in CARRIED_WHEELS]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--only-binary=:all:", "--python-version", "3.12", "-d",
                    str(carry / "wheels"), *pins], check=True)
    (carry / "mnist").mkdir(exist_ok=True)
    for name in IDX_NAMES:
        src = next((p for p in (mnist / name, mnist / f"{name}.gz") if p.exists()), None)
        if src is None:
            raise FileNotFoundError(f"{mnist} lacks {name}[.gz]; fetch full MNIST first")
        dest = carry / "mnist" / f"{name}.gz"
        if src.suffix == ".gz":
            shutil.copy2(src, dest)
        else:
            with open(src, "rb") as fin, gzip.open(dest, "wb", compresslevel=6) as fout:
                shutil.copyfileobj(fin, fout)
    log.info("packed %s: %s and MNIST from %s", carry, ", ".join(pins), mnist)


def install_carried(carry: Path) -> None:
    """Install the carried wheels (``carry/wheels``) without an index or dependencies into
    ``carry/site`` and put it and the source tree on the path, for this process and its
    workers (spawned workers inherit ``sys.path`` and ``PYTHONPATH``)."""
    paths = [str(REPO)]
    wheels = sorted((carry / "wheels").glob("*.whl"))
    if wheels:
        site = carry / "site"
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                        "--no-compile", "--upgrade", "--target", str(site), *map(str, wheels)],
                       check=True)
        paths.insert(0, str(site))
    for p in reversed(paths):
        if p not in sys.path:
            sys.path.insert(0, p)
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")])


def setting1_configs(source: str, seeds: list[int] | None, epochs: int | None):
    """``(protocol, lambdas, [(case, config)])`` of the paper-profile Setting-1 MNIST table: the
    MNIST chapter's plan (:data:`tapkit.experiments.chapter_plans.PLANS`) at the paper's λ, the
    same run keys, so the book renders from the filled store."""
    from tapkit.experiments import chapter_plans, protocols

    p = chapter_plans.protocol_for("mnist", "paper", source=source, seeds=seeds, epochs=epochs)
    lams = dict(protocols.MNIST_LAMBDAS)
    cells = chapter_plans.PLANS["mnist"](p, REPO / "results" / "paper", lambdas=lams)
    return p, lams, [(c.method, c.cfg) for c in cells]


def check_data(source: str, dry_run: bool) -> dict:
    """The MNIST source's sizes; full MNIST (60,000 + 10,000 digits) unless ``dry_run``."""
    from tapkit.config import TrainConfig
    from tapkit.fit import experiment_data

    _, splits = experiment_data(TrainConfig(source=source))
    sizes = {"train": sum(len(splits[k]) for k in ("train", "val")),
             "test": len(splits["test_clean"])}
    if not dry_run and sizes != {"train": 60000, "test": 10000}:
        raise RuntimeError(f"{source} is not full MNIST: {sizes}; run make gpu-pack")
    log.info("data %s: %s", source, sizes)
    return sizes


def one_step(cfg) -> dict:
    """One training step of ``cfg`` (its first batch), in a worker: the dry run's check that every
    planned run builds, batches and steps."""
    from tapkit import fit as training
    from tapkit.models import build_model

    task, splits = training.experiment_data(cfg)
    split = training.training_split(cfg, splits)
    batch = split.subset(slice(0, cfg.batch_size))
    built = build_model(cfg.model, task.num_classes, task.in_channels, cfg.pretrained,
                        task.image_size)
    result = training.fit(built.model, batch, cfg.replace(epochs=1), built.targets, "cpu",
                          progress=False)
    return {"key": cfg.key(), "method": cfg.method, "status": result.status,
            "task_loss": result.history[-1]["task_loss"]}


def run_setting1(args, out: Path) -> dict:
    from tapkit.experiments.executors import ProcessExecutor, run_many

    s, lams, runs = setting1_configs(args.source, args.seeds, args.epochs)
    log.info("Setting 1: %d runs (%s x seeds %s), %d epochs, %d workers", len(runs),
             ",".join(dict.fromkeys(case for case, _ in runs)), list(s.seeds), s.epochs,
             args.workers)
    if args.dry_run:
        steps = ProcessExecutor(args.workers, progress=False).map(one_step, [c for _, c in runs])
        bad = [r for r in steps if r["status"] != "ok"]
        if bad:
            raise RuntimeError(f"dry run: steps did not converge: {bad}")
        return {"runs": len(runs), "steps": steps}
    if not args.tables_only:
        run_many(training_order(runs, args.methods), out / "runs", "cuda",
                 f"processes:{args.workers}", compile_step=args.compile)
    return setting1_table(s, lams, runs, out)


def training_order(runs: list, methods: list[str] | None) -> list:
    """The configs of ``runs`` to train, the cases in ``methods`` order (all, in plan order, when
    ``None``): a lease short of time trains the cases that matter most first."""
    if methods is None:
        return [c for _, c in runs]
    unknown = set(methods) - {case for case, _ in runs}
    if unknown:
        raise ValueError(f"--methods {sorted(unknown)}: not in the plan; choose from "
                         f"{sorted({case for case, _ in runs})}")
    return [c for m in methods for case, c in runs if case == m]


def setting1_table(s, lams: dict, runs: list, out: Path) -> dict:
    """``tables/mnist_gt.*`` from the runs stored under ``out/runs`` (nothing is trained): every
    case whose runs are all stored, the others named in the provenance's ``not_run``, so that a
    lease cut short at its time limit still gives the table of what finished."""
    from tapkit.book import report
    from tapkit.experiments.executors import records_frame
    from tapkit.experiments.store import ResultStore

    store = ResultStore(out / "runs")
    records = {case: [] for case, _ in runs}
    for case, cfg in runs:
        records[case].append(store.load(cfg))
    done = [case for case, recs in records.items() if all(r is not None for r in recs)]
    not_run = {case: f"{sum(r is None for r in recs)} of {len(recs)} runs not stored"
               for case, recs in records.items() if case not in done}
    if not done:
        raise RuntimeError(f"no Setting-1 case has all its runs in {out / 'runs'}")
    frame = records_frame([r for case in done for r in records[case]])
    frame["case"] = [case for case in done for _ in records[case]]
    label = report.provenance_label(frame, "paper")
    report.write_table(report.summarise(frame, ["case"]), out, "mnist_gt",
                       {"label": label, "settings": s.as_dict(), "lambdas": lams,
                        "not_run": not_run})
    report.write_table(frame[["case", "seed", "status", *report.SPLITS]], out, "mnist_gt_runs",
                       {"label": label, "data": f"MNIST digits ({s.source})", "lambdas": lams,
                        "not_run": not_run})
    return {"runs": len(frame), "dnc": int((frame.status != "ok").sum()), "label": label,
            "seconds_per_run": round(float(frame.seconds.mean()), 1), "not_run": not_run}


def table1_protocol(args):
    """The paper profile's Table 1 protocol (:data:`tapkit.experiments.profiles.paper.BENCH`: the
    authors' VGG-16 head and the released losses, as the paper timed them); a dry run measures
    the two-layer CNN alone, at a tiny batch, one round and one memory pass, on the CPU."""
    import dataclasses

    from tapkit.experiments import protocols

    p = protocols.bench("paper")
    if args.dry_run:
        p = dataclasses.replace(p, models=(), context=("two_layer_cnn@8x28",), steps=1,
                                warmup=1, paired_steps=None, model_paired_steps={},
                                memory_passes=1)
    return p


def run_table1(args, out: Path) -> dict:
    """Table 1 by :func:`tapkit.experiments.table1.measure`, as the speed page measures it, into
    ``out/tables/speed_memory.*``; no model is started past ``--deadline-s``."""
    from tapkit.book import speed_memory
    from tapkit.experiments import table1

    started = getattr(args, "started", None)
    budget = args.deadline_s - (time.time() - started) if started else None
    measured = table1.measure(table1_protocol(args), "cpu" if args.dry_run else "cuda", "paper",
                              steps=None if args.dry_run else args.bench_steps, budget_s=budget)
    speed_memory.write_measured(measured, out)
    return {"rows": len(measured.rows), "label": measured.label, "not_run": measured.not_run}


def export(out: Path, dest: Path | None) -> None:
    """Tables, provenance and the runs' metrics (a tarball) into ``dest`` (the device's $OUT)."""
    if dest is None:
        return
    (dest / "tables").mkdir(parents=True, exist_ok=True)
    for f in sorted((out / "tables").glob("*")):
        shutil.copy2(f, dest / "tables" / f.name)
    if (out / "gpu_provenance.json").exists():
        shutil.copy2(out / "gpu_provenance.json", dest / "gpu_provenance.json")
    metrics = sorted((out / "runs").glob("*/metrics.json"))
    if metrics:
        partial = dest / "runs_metrics.tar.gz.part"
        with tarfile.open(partial, "w:gz") as tar:
            for m in metrics:
                tar.add(m, arcname=str(m.relative_to(out)))
        partial.replace(dest / "runs_metrics.tar.gz")  # whole or not at all


def export_every(out: Path, dest: Path | None, stop: threading.Event, seconds: float) -> None:
    """:func:`export` every ``seconds`` until ``stop`` is set."""
    while not stop.wait(seconds):
        export(out, dest)


def later_lease(earlier: dict, record: dict) -> dict:
    """The provenance of a lease that adds stages to an earlier lease's ``earlier``: this lease's
    entries over the earlier ones, every lease's provenance in ``leases``, and each earlier stage
    keeping the provenance of the lease that ran it (a stage this lease reruns gets its own)."""
    earlier = {k: (dict(v) if isinstance(v, dict) else v) for k, v in earlier.items()}
    for name in ("setting1", "table1"):
        if isinstance(earlier.get(name), dict):
            earlier[name].setdefault("provenance", earlier["provenance"])
    leases = earlier.get("leases") or [earlier["provenance"]]
    return {**earlier, **record, "wall_s": {**earlier.get("wall_s", {})},
            "leases": [*leases, record["provenance"]]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="CPU: plan, data, one step per run")
    parser.add_argument("--carry", type=Path, default=REPO / "gpu-carry")
    parser.add_argument("--source", default=None,
                        help="MNIST source (default: mnist from CARRY/mnist; embedded in a dry run)")
    parser.add_argument("--out", type=Path, default=None,
                        help="default: results/paper (build/gpu-dry-run for a dry run)")
    parser.add_argument("--export", type=Path, default=None, help="copy results here ($OUT)")
    parser.add_argument("--workers", type=int, default=8, help="runs sharing the GPU at once")
    parser.add_argument("--seeds", type=int, nargs="+", default=None)
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--bench-steps", type=int, default=10)
    parser.add_argument("--compile", action="store_true", help="torch.compile the none/tap steps")
    parser.add_argument("--tables-only", action="store_true",
                        help="write Setting 1's table from the runs stored in --out, train nothing")
    parser.add_argument("--stages", default="setting1,table1")
    parser.add_argument("--methods", nargs="+", default=None,
                        help="Setting 1: train only these cases, in this order")
    parser.add_argument("--pack", action="store_true",
                        help="here, before a lease: fill --carry with wheels and MNIST, then stop")
    parser.add_argument("--deadline-s", type=float, default=570.0,
                        help="skip Table 1 when less than --table1-s remains before this")
    parser.add_argument("--table1-s", type=float, default=150.0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    start = args.started = time.time()
    if args.pack:
        from tapkit.mnist_files import fetch_mnist, is_cached, mnist_cache

        pack(args.carry, mnist_cache() if is_cached() else fetch_mnist())
        return 0
    if args.out is None:
        args.out = REPO / ("build/gpu-dry-run" if args.dry_run else "results/paper")
    install_carried(args.carry)
    from tapkit.results import provenance, resolve_device, write_json

    device = resolve_device("auto")
    if not (args.dry_run or args.tables_only) and device != "cuda":
        raise RuntimeError("no GPU here: use --dry-run (or --tables-only) on a CPU")
    if args.source is None and not args.dry_run:
        # the carried folder is tapkit's data folder: source "mnist" gives the book's run keys
        os.environ["TAPKIT_DATA"] = str(args.carry.resolve())
    args.source = args.source or ("embedded" if args.dry_run else "mnist")
    os.chdir(REPO)
    record = {"argv": sys.argv[1:], "provenance": provenance(device), "workers": args.workers,
              "dry_run": args.dry_run, "data": check_data(args.source, args.dry_run),
              "wall_s": {}}
    kept = args.out / "gpu_provenance.json"
    if args.tables_only and kept.exists():  # the GPU's provenance stays; the tables' entries change
        record = json.loads(kept.read_text())
    elif kept.exists() and not args.dry_run:  # a later lease adds its stages to the earlier ones'
        record = later_lease(json.loads(kept.read_text()), record)
    stages = {"setting1": run_setting1, "table1": run_table1}
    # every 20 s, what is stored so far goes to --export: a command killed at its time limit
    # still returns the runs that finished (a lease lost 5 trained TAP runs without this)
    stop = threading.Event()
    threading.Thread(target=export_every, args=(args.out, args.export, stop, 20.0),
                     daemon=True).start()
    for name in args.stages.split(","):
        if name == "table1" and time.time() - start > args.deadline_s - args.table1_s:
            log.warning("skipping Table 1: %.0f s left", args.deadline_s - (time.time() - start))
            record["skipped"] = name
            continue
        t0 = time.time()
        record[name] = stages[name](args, args.out)
        if not args.tables_only:
            record[name]["provenance"] = record["provenance"]  # the lease that ran this stage
            record["wall_s"][name] = round(time.time() - t0, 1)
            record["wall_s"]["total"] = round(time.time() - start, 1)
        write_json(args.out / "gpu_provenance.json", record)
        export(args.out, args.export)
        log.info("%s done in %.0f s", name, time.time() - t0)
    stop.set()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

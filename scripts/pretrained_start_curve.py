"""Measure the quick profile's pretrained start on the medical stand-ins (issue 20): for one
architecture, pretrain it on the digits-pretrain task, then train Base, No XS and a λ curve of
TAP (and RRR) on the PNEU and KNEE stand-ins from that start, and write one row per run (λ,
contaminated / permuted / clean score, tag reliance, clean validation score against a constant
prediction's, seconds) to ``<out>/curve_<model>.csv``. Runs go through the results store under
``<out>/store``, so a rerun reads them back.

    python scripts/pretrained_start_curve.py resnet18 --out build/curve --size 64 --seeds 0
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import pandas as pd
import torch

from tapkit.config import TrainConfig
from tapkit.experiments.profiles.quick import PRETRAINED_START_CURVE as GRIDS
from tapkit.experiments.store import ResultStore
from tapkit.methods import no_xs, proposed_method
from tapkit.metrics import tag_reliance, TASK_METRICS
from tapkit.sources import MEDICAL_EXPERIMENTS
from tapkit.results import write_atomic

log = logging.getLogger("pretrained_start_curve")

PER_CLASS = {"pneu": 300, "knee": 100}
TEST_PER_CLASS = {"pneu": 100, "knee": 60}


def cases(model: str, experiment: str, size: int, seed: int, start: TrainConfig | None,
          epochs: int, methods: tuple[str, ...], lr: float) -> list[tuple[str, TrainConfig]]:
    base = TrainConfig(experiment=experiment, model=model, epochs=epochs, batch_size=16, lr=lr,
                       image_size=size, per_class=PER_CLASS[experiment],
                       test_per_class=TEST_PER_CLASS[experiment], seed=seed, start=start)
    out = [("base", base.replace(data="clean")), (no_xs(), base)]
    out += [(m, base.replace(method=m, lam=lam)) for m in methods for lam in GRIDS[m]]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--pretrain-epochs", type=int, default=5)
    ap.add_argument("--no-start", action="store_true", help="random initial weights instead")
    ap.add_argument("--methods", nargs="+", default=[proposed_method()],
                    help=f"of {sorted(GRIDS)} (default: TAP)")
    ap.add_argument("--lr", type=float, default=1e-3, help="Adam's, pretraining and fine-tuning")
    ap.add_argument("--experiments", nargs="+", default=list(MEDICAL_EXPERIMENTS))
    ap.add_argument("--pretrain", default="digits-pretrain",
                    choices=["digits-pretrain", "fractal-pretrain"])
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.set_num_threads(1)
    store = ResultStore(args.out / "store")
    start = None if args.no_start else TrainConfig(
        experiment=args.pretrain, model=args.model, epochs=args.pretrain_epochs,
        batch_size=32, lr=args.lr, image_size=args.size)
    rows = []
    if start is not None:
        rec = store.run(start, "cpu", progress=False)
        log.info("pretrained %s: accuracy %.3f in %.0f s", args.model, rec["clean"], rec["seconds"])
        rows.append({"experiment": args.pretrain, "case": "pretrain", "lam": 0.0, "seed": 0,
                     "clean": rec["clean"], "seconds": rec["seconds"]})
    for seed in args.seeds:
        for experiment in args.experiments:
            metric = TASK_METRICS["f1" if experiment == "pneu" else "mae"]
            for case, cfg in cases(args.model, experiment, args.size, seed, start, args.epochs,
                                   tuple(args.methods), args.lr):
                rec = store.run(cfg, "cpu", progress=False)
                rows.append({"experiment": experiment, "case": case, "lam": cfg.lam, "seed": seed,
                             "contaminated": rec["contaminated"], "permuted": rec["permuted"],
                             "clean": rec["clean"],
                             "reliance": tag_reliance(rec["contaminated"], rec["permuted"], metric),
                             "val_loss": rec["val_loss"], "val_clean": rec["val_clean"],
                             "val_constant": rec["val_constant"], "seconds": rec["seconds"]})
                log.info("%s", rows[-1])
    start_name = "scratch" if args.no_start else args.pretrain
    name = f"curve_{args.model}_{args.size}px_{start_name}.csv"
    write_atomic(args.out / name, pd.DataFrame(rows).to_csv(index=False))


if __name__ == "__main__":
    main()

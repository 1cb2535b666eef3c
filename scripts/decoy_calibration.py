"""Decoy-MNIST's calibration curve for the quick profile (issue 36): Base and No XS of the quick
MNIST protocol at several recorded-label noises P (``embedded:label_noise=P``, the decoy drawn
from the record: :func:`tapkit.data.decoy_mnist`), each on several seeds, one thread. Replaces the
``decoy-mnist`` rows of ``tapkit/book/measured/standin_calibration.csv``, which the data page
draws beside the PNEU/KNEE stand-ins' curves. Each P's runs are the profile's own, so the chosen
P's rows are the MNIST chapter's Base and No XS runs seed for seed.

    OMP_NUM_THREADS=1 python scripts/decoy_calibration.py --noise 0 0.02 0.05 0.1 --seeds 0 1 2

About 18 CPU-s a run on the 2-core VM (24 runs: ~7 minutes).
"""

from __future__ import annotations

import argparse
import logging
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from tapkit.config import TrainConfig
from tapkit.experiments import protocols
from tapkit.experiments.executors import run_many
from tapkit.experiments.setting1 import case_config
from tapkit.methods import no_xs
from tapkit.metrics import TASK_METRICS, tag_reliance
from tapkit.results import write_atomic
from tapkit.sources import Embedded

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "tapkit" / "book" / "measured" / "standin_calibration.csv"
TASK = "decoy-mnist"


def host() -> str:
    """The CPU's model name and whether it has AVX-512, as the file's other rows say it."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines()
                 if line.startswith("model name")), "unknown CPU")
    return f"{name}, {'avx512f' if ' avx512f' in info else 'no avx512f'}; 2 cores shared, 1 thread"


def configs(noise: float, seed: int, profile: str = "quick") -> dict[str, TrainConfig]:
    """Base's and No XS's runs at ``noise`` for ``seed``, as the ``profile``'s MNIST protocol
    (the book's: quick) builds them with that label noise."""
    p = protocols.MNIST[profile].with_overrides(embedded={TASK: Embedded(noise)})
    return {case: case_config(p, None, None, case, None, seed) for case in ("base", no_xs())}


def row(noise: float, seed: int, records: dict[str, pd.Series]) -> dict:
    """One calibration row: Base's clean accuracy and No XS's reliance on the decoy (the
    accuracy it loses when the decoys are permuted) from the two runs' ``records``."""
    base, none = records["base"], records[no_xs()]
    return {"task": TASK, "model": "two_layer_cnn", "label_noise": noise, "seed": seed,
            "base_clean": round(base.clean, 4), "base_cpu_s": round(base.seconds, 1),
            "noxs_contaminated": round(none.contaminated, 4),
            "noxs_swapped_or_permuted": round(none.permuted, 4),
            "noxs_clean": round(none.clean, 4),
            "noxs_reliance": round(tag_reliance(none.contaminated, none.permuted,
                                                TASK_METRICS["accuracy"]), 4),
            "noxs_cpu_s": round(none.seconds, 1), "metric": "accuracy",
            "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%d"), "host": host()}


def main(argv: list[str] | None = None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--noise", type=float, nargs="+", default=[0.0, 0.02, 0.05, 0.1])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--store", type=Path, default=ROOT / "build" / "decoy_calibration",
                    help="the results store the runs are trained into or read from")
    ap.add_argument("--profile", default="quick", choices=sorted(protocols.MNIST))
    ap.add_argument("--csv", type=Path, default=CSV, help="the calibration table whose "
                    "Decoy-MNIST rows this replaces (default: the book's package data)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    asked = [((p, seed), case, cfg) for p in args.noise for seed in args.seeds
             for case, cfg in configs(p, seed, args.profile).items()]
    # through the results store: keyed by each config's hash, read where already trained
    frame = run_many([cfg for _, _, cfg in asked], args.store, "cpu")
    records: dict = {}
    for (where, case, _), (_, rec) in zip(asked, frame.iterrows()):
        records.setdefault(where, {})[case] = rec
    rows = pd.DataFrame([row(p, seed, recs) for (p, seed), recs in records.items()])
    old = pd.read_csv(args.csv)
    write_atomic(args.csv, pd.concat([old[old.task != TASK], rows], ignore_index=True)
                 .to_csv(index=False))
    print(rows.drop(columns=["host", "date_utc"]).to_markdown(index=False))
    return rows


if __name__ == "__main__":
    main()

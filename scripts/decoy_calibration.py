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
import time
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from tapkit.experiments import protocols
from tapkit.experiments.run import train_run
from tapkit.experiments.setting1 import case_config
from tapkit.metrics import tag_reliance, TASK_METRICS
from tapkit.results import write_atomic

log = logging.getLogger("decoy_calibration")
ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "tapkit" / "book" / "measured" / "standin_calibration.csv"
TASK = "decoy-mnist"


def host() -> str:
    """The CPU's model name and whether it has AVX-512, as the file's other rows say it."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines()
                 if line.startswith("model name")), "unknown CPU")
    return f"{name}, {'avx512f' if ' avx512f' in info else 'no avx512f'}; 2 cores shared, 1 thread"


def row(noise: float, seed: int, store: Path) -> dict:
    """Base's clean accuracy and No XS's reliance on the decoy at ``noise`` for ``seed``."""
    p = protocols.MNIST["quick"].with_overrides(label_noise={TASK: noise})
    out = {"task": TASK, "model": "two_layer_cnn", "label_noise": noise, "seed": seed}
    for case in ("base", "none"):
        cfg = case_config(p, None, None, case, None, seed)
        start = time.process_time()
        m = train_run(cfg, store / f"{noise:g}_{case}_{seed}", progress=False, device="cpu")
        seconds = round(time.process_time() - start, 1)
        if case == "base":
            out.update(base_clean=round(m["clean"], 4), base_cpu_s=seconds)
        else:
            out.update(noxs_contaminated=round(m["contaminated"], 4),
                       noxs_swapped_or_permuted=round(m["permuted"], 4),
                       noxs_clean=round(m["clean"], 4),
                       noxs_reliance=round(tag_reliance(m["contaminated"], m["permuted"],
                                                        TASK_METRICS["accuracy"]), 4),
                       noxs_cpu_s=seconds)
        log.info("P=%g seed %d %s: %s", noise, seed, case, out)
    return {**out, "metric": "accuracy",
            "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%d"), "host": host()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--noise", type=float, nargs="+", default=[0.0, 0.02, 0.05, 0.1])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--store", type=Path, default=ROOT / "build" / "decoy_calibration")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    rows = pd.DataFrame([row(p, s, args.store) for p in args.noise for s in args.seeds])
    old = pd.read_csv(CSV)
    write_atomic(CSV, pd.concat([old[old.task != TASK], rows], ignore_index=True)
                 .to_csv(index=False))
    print(rows.drop(columns=["host", "date_utc"]).to_markdown(index=False))


if __name__ == "__main__":
    main()

"""The medical stand-in's Setting-1 cells of ResNet-18 and DenseNet-121 on several seeds (issue 20:
the deep-CNN targets are means over three seeds), as one table outside the book: the quick book
trains seeds 0-2 itself; this script reads them, or trains other seeds. The runs are the quick
profile's own (``medical_plans.medical_runs`` at the
λ the book's search chose, from the same pretrained starts), trained into or read from a built
book's store, so seed 0 is the book's run. Writes one row per run (``<out>/seeds.csv``) and a
Markdown table of means, paired TAP-versus-No-XS differences of the tag reliance and TAP-versus-
Base differences of the clean score, with 95% Student-t intervals (``<out>/seeds.md``).

    python scripts/standin_seeds.py results/quick --seeds 0 1 2 --executor processes:2 --out build/seeds

About 1,000 CPU-seconds for seeds 1 and 2 on the 2-core machine (28 runs); none after a quick
book, which has trained them.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import pandas as pd

from tapkit.experiments import medical_plans, protocols
from tapkit.experiments.executors import run_many
from tapkit.methods import comparators, no_xs, proposed_method
from tapkit.metrics import TASK_METRICS, tag_reliance
from tapkit.results import write_atomic
from tapkit.seedstats import mean_ci, paired_difference

log = logging.getLogger("standin_seeds")

MODELS = ("resnet18", "densenet121")
OWN = proposed_method()  # TAP
# the comparators where the quick profile runs them (its not_run leaves out the rest: RRR on
# PNEU's ResNet-18 only, no RBR)
CASES = ("base", no_xs(), OWN, *comparators())


def runs(root: Path, seeds: list[int], executor: str) -> pd.DataFrame:
    """Every cell of ``MODELS`` × ``CASES`` on PNEU and KNEE for each seed, trained or read."""
    p = protocols.medical("quick")
    cells = [c for e in medical_plans.DATASETS for seed in seeds
             for c in medical_plans.medical_runs(p.with_overrides(seeds=[seed]), e, MODELS, CASES,
                                                 "tag", medical_plans.searched_lambdas(root, e))]
    frame = run_many([c.cfg for c in cells], root / "runs", "cpu", executor)
    frame = frame.assign(experiment=[c.experiment for c in cells], model=[c.model for c in cells],
                         case=[c.method for c in cells], seed=[c.seed for c in cells],
                         lam=[c.lam for c in cells])
    frame["reliance"] = [tag_reliance(r.contaminated, r.permuted, TASK_METRICS[r.metric])
                         for r in frame.itertuples()]
    return frame[["experiment", "model", "case", "seed", "lam", "metric", "contaminated",
                  "permuted", "clean", "reliance", "seconds", "status"]]


def summary(frame: pd.DataFrame) -> str:
    """Means with intervals per cell, and the paired differences the claims rest on."""
    lines = ["| stand-in | model | case | clean | reliance |", "|---|---|---|---|---|"]
    for (e, m, case), g in frame.groupby(["experiment", "model", "case"], sort=False):
        lines.append(f"| {e} | {m} | {case} | {mean_ci(g.clean).text()} | "
                     f"{mean_ci(g.reliance).text()} |")
    lines += ["", "| stand-in | model | No XS − TAP reliance | TAP − Base clean |", "|---|---|---|---|"]
    for (e, m), g in frame.groupby(["experiment", "model"], sort=False):
        rel = {c: dict(zip(g[g.case == c].seed, g[g.case == c].reliance)) for c in (no_xs(), OWN)}
        clean = {c: dict(zip(g[g.case == c].seed, g[g.case == c].clean)) for c in ("base", OWN)}
        lines.append(f"| {e} | {m} | {paired_difference(rel[no_xs()], rel[OWN]).text()} | "
                     f"{paired_difference(clean[OWN], clean['base']).text()} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, help="a built book's results/<profile> folder")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--executor", default="local", help="local or processes:N")
    parser.add_argument("--out", type=Path, default=Path("build/seeds"))
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    if not (args.results / "runs").is_dir():
        raise FileNotFoundError(f"no results store at {args.results / 'runs'}: run `make book` first, "
                         "or pass the results/<profile> folder of a built book")
    frame = runs(args.results, args.seeds, args.executor)
    write_atomic(args.out / "seeds.csv", frame.to_csv(index=False))
    write_atomic(args.out / "seeds.md", summary(frame))
    log.info("wrote %s and %s", args.out / "seeds.csv", args.out / "seeds.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

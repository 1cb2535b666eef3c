"""The paper's own Setting-2 and distillation tables (``tapkit/book/paper_values``) in the form of
the build's summary tables, so that a judge can be run on the paper's numbers: a judge that
calls the paper's own evidence anything but what the paper says is wrong, or says why. Five
seeds (the paper's); a cell the paper marks DNC did not converge in three of them (its rule:
"at least three times"), one marked † or ‡ in the number of runs its ``dnc_runs`` gives."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tapkit.book.medical_notes import constant_score
from tapkit.book.report import paper_values

SEEDS = 5
META = {"settings": {"seeds": list(range(SEEDS))}, "data": {"pneu": "PNEU", "knee": "KNEE"},
        "origin": "paper"}
NONE = {"annotation": "none", "teacher": "no teacher"}  # No XS's row in each table


def summary(name: str, key: str = "annotation") -> pd.DataFrame:
    """The paper's table ``name`` (teacher_results, teacher_xs_extra or kd_results) on PNEU and
    KNEE, with Setting 1's No XS rows (gt_results, the tag), as a summary table whose masks or
    teacher column is ``key``."""
    t = paper_values(name)
    t = t[t["dataset"] != "MNIST"]
    dnc = t["status"] == "dnc"
    failed = (pd.to_numeric(t["dnc_runs"], errors="coerce").fillna(0) if "dnc_runs" in t
              else pd.Series(0, t.index)).where(~dnc, 3).astype(int)
    out = pd.DataFrame({"experiment": t["dataset"].str.lower(), "model": t["architecture"],
                        "method": t["method"], key: t["annotation" if "annotation" in t
                                                      else "teacher"],
                        "tau": pd.to_numeric(t["tau"], errors="coerce"), "split": t["split"],
                        "mean": t["mean"].astype(float), "std": t["std"].astype(float),
                        "count": SEEDS - failed, "dnc_runs": failed, "dnc": dnc})
    gt = paper_values("gt_results")
    none = gt[(gt["method"] == "none") & (gt["artifact"] == "tag") & (gt["dataset"] != "MNIST")]
    nx = pd.DataFrame({"experiment": none["dataset"].str.lower(), "model": none["architecture"],
                       "method": "none", key: NONE[key], "tau": float("nan"),
                       "split": none["split"], "mean": none["mean"].astype(float),
                       "std": none["std"].astype(float), "count": SEEDS, "dnc_runs": 0,
                       "dnc": False})
    return pd.concat([out, nx], ignore_index=True)


def setting1_runs(experiment: str) -> pd.DataFrame:
    """Setting 1's per-run table of ``experiment`` (the tag) rebuilt from the paper's means and
    stds: five runs per case whose mean and sample std are the paper's."""
    gt = paper_values("gt_results")
    gt = gt[(gt["dataset"] == experiment.upper()) & (gt["artifact"] == "tag")]
    z = np.arange(SEEDS) - (SEEDS - 1) / 2
    z = z / z.std(ddof=1)
    rows = []
    for (model, case), g in gt.groupby(["architecture", "method"], sort=False):
        by = g.set_index("split")
        for seed in range(SEEDS):
            rows.append({"model": model, "case": case, "seed": seed, "status": "ok",
                         **{s: float(by.loc[s, "mean"]) + float(by.loc[s, "std"]) * z[seed]
                            for s in ("contaminated", "permuted", "clean")},
                         "val_constant": constant_score(experiment)})
    return pd.DataFrame(rows)


def quality(lift: float = 3.0) -> pd.DataFrame:
    """Annotation quality at the paper's τ whose teachers mark the tags ``lift`` times as
    precisely as random masks (the paper gives a figure, no numbers)."""
    return pd.DataFrame([{"experiment": e, "annotator": a, "tau": t, "precision": 0.02 * lift,
                          "recall": 0.5, "tag_coverage": 0.02}
                         for e in ("pneu", "knee") for a in ("teacher_10", "teacher_1")
                         for t in (0.01, 0.05, 0.1)])


def mnist_kd() -> pd.DataFrame:
    """The paper's MNIST distillation table (kd_results, with Setting 1's No XS) as the
    distillation chapter's ``mnist_kd``."""
    k = paper_values("kd_results").query("dataset == 'MNIST'")
    gt = paper_values("gt_results").query(
        "dataset == 'MNIST' and method == 'none' and artifact == 'tag'")
    return pd.concat([pd.DataFrame({"teacher": k["teacher"], "method": k["method"],
                                    "split": k["split"], "mean": k["mean"], "std": k["std"],
                                    "count": SEEDS}),
                      pd.DataFrame({"teacher": "no teacher", "method": "none",
                                    "split": gt["split"], "mean": gt["mean"], "std": gt["std"],
                                    "count": SEEDS})], ignore_index=True)

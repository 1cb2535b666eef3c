"""TAP's κ ablation on Decoy-MNIST, as the normalisation appendix shows it: the κ of Eq. 7's
max-pool, which grows the mask by ⌊κ/2⌋ pixels before it is averaged down to a layer's size. The
paper chose κ = 3 as "a good balance between capturing the influence of targeted pixels and
preventing over-regularisation" (l.209) and reports no ablation; the report judges that claim on
this table (:func:`.mnist_claims.kappa_claim`)."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from ..config import TrainConfig
from ..methods import no_xs
from .claims import verdict_text
from .labels import lam_text
from .mnist_claims import kappa_claim
from .report import SPLITS


def kappa_table(pairs: Sequence[tuple[int | None, TrainConfig]], runs: pd.DataFrame
                ) -> pd.DataFrame:
    """One row per run of :func:`tapkit.experiments.plans.kappa_configs`' ``pairs`` (``runs``:
    their records, in the same order): ``case`` (the method), ``kernel_size`` (κ; missing for No
    XS, which the claim's precondition reads), ``seed``, ``status`` and the three test splits."""
    if not pairs:  # a profile without the ablation (its ``kappas`` empty)
        return pd.DataFrame(columns=["case", "kernel_size", "seed", "status", *SPLITS])
    out = runs[["method", "seed", "status", *SPLITS]].rename(columns={"method": "case"})
    out.insert(1, "kernel_size", pd.array([k for k, _ in pairs], dtype="Int64"))
    return out.reset_index(drop=True)


def kappa_caption(pairs: Sequence[tuple[int | None, TrainConfig]], label: str) -> str:
    """The table's caption: the data, TAP's λ and the runs' provenance (``label``)."""
    lams = sorted({cfg.lam for k, cfg in pairs if k is not None})
    if not lams:
        return "*No κ ablation in this profile (its `kappas` are empty).*"
    return (f"*Decoy-MNIST, TAP at λ = {', '.join(map(lam_text, lams))}, means over seeds; "
            f"{label}*")


def kappa_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per κ (No XS first, for reference), the mean over seeds of each split's accuracy and of
    Δ-accuracy (permuted − contaminated: what the decoy is worth to the model), with the number
    of seeds; converged runs only."""
    ok = table[table["status"] == "ok"]
    rows = []
    for (case, kappa), grp in ok.groupby(["case", "kernel_size"], dropna=False, sort=False):
        means = grp[list(SPLITS)].mean()
        rows.append({"case": case, "κ": kappa,
                     "seeds": len(grp), **means.to_dict(),
                     "Δ-accuracy": float((grp["permuted"] - grp["contaminated"]).mean())})
    out = pd.DataFrame(rows).astype({"κ": "Int64"})
    return out.sort_values("case", key=lambda c: c != no_xs(), kind="stable").reset_index(drop=True)


def kappa_findings(table: pd.DataFrame, data: str) -> str:
    """The report's verdict on the κ claim (:func:`.mnist_claims.kappa_claim`, the same cells,
    seeds and preconditions), as the page gives it."""
    claim = kappa_claim(table, data)
    evidence = claim.evidence[:1].upper() + claim.evidence[1:]
    return f"**{claim.claim}**: *{verdict_text(claim.verdict, claim.reason)}*. {evidence}."

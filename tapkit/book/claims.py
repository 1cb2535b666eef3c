"""The reproduction report's claim table (ReScience C style): one row per claim of the paper, the
evidence this build measured for it, and a verdict.

A verdict rests on more than one seed: a mean over seeds carries its 95% Student-t interval, a
comparison between two methods is a paired difference over the seeds both trained
(:mod:`tapkit.seedstats`). A claim whose evidence is one seed, a stand-in for the paper's data, or
absent gets ``not run here`` with the reason, never a guess. Each ``*_claim`` function is pure
(tables in, :class:`Claim` out); :func:`claims_table` reads the tables a build wrote.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Mapping

import pandas as pd

from ..seedstats import Estimate, from_summary, mean_ci, paired_difference

REPRODUCED, NOT_REPRODUCED, NOT_RUN = "reproduced", "not reproduced", "not run here"
MARGIN = 0.02   # "matches": the paired difference's interval lies above -MARGIN (2 points)
KEEPS = 0.95    # "TAP keeps at least 0.95 of No XS's speed" (and at most 1/0.95 of its memory)


@dataclass(frozen=True)
class Claim:
    """One row of the claim table."""

    claim: str
    where: str        # the paper's section or table
    evidence: str
    seeds: str
    data: str
    verdict: str


def _per_seed(runs: pd.DataFrame, case: str, value: Callable[[pd.DataFrame], pd.Series]) -> dict[int, float]:
    ok = runs[(runs["case"] == case) & (runs["status"] == "ok")]
    return dict(zip(ok["seed"].astype(int), value(ok).astype(float)))


def _delta(frame: pd.DataFrame) -> pd.Series:
    return frame["permuted"] - frame["contaminated"]


def _permuted(frame: pd.DataFrame) -> pd.Series:
    return frame["permuted"]


def _seeds(e: Estimate) -> str:
    return f"{e.n} seed{'s' if e.n != 1 else ''}"


def _few(e: Estimate) -> bool:
    return e.n < 2


def decoy_claim(runs: pd.DataFrame, data: str) -> Claim:
    """No XS learns the decoy: its accuracy falls when the decoy is permuted (Δ < 0 over seeds)."""
    claim, where = "No XS learns the decoy on MNIST", "Results, Fig. MNIST; App. Table gt_mnist"
    d = mean_ci(_per_seed(runs, "none", _delta).values())
    verdict = NOT_RUN if _few(d) else REPRODUCED if d.hi < 0 else NOT_REPRODUCED
    return Claim(claim, where, f"No XS Δ-accuracy (permuted − contaminated) {d.text()}",
                 _seeds(d), data, verdict)


def removes_claim(runs: pd.DataFrame, data: str, method: str = "tap") -> Claim:
    """An XS method protects the model: its permuted-decoy accuracy beats No XS's (paired)."""
    name = method.upper()
    diff = paired_difference(_per_seed(runs, method, _permuted), _per_seed(runs, "none", _permuted))
    verdict = NOT_RUN if _few(diff) else REPRODUCED if diff.lo > 0 else NOT_REPRODUCED
    return Claim(f"{name} protects the two-layer CNN from the decoy (beats No XS on permuted digits)",
                 "Results, Fig. MNIST",
                 f"permuted accuracy, {name} − No XS (paired): {diff.text()}", _seeds(diff), data,
                 verdict)


def matches_claim(runs: pd.DataFrame, data: str, other: str) -> Claim:
    """TAP matches RRR/RBR on MNIST: TAP's permuted accuracy is not worse than ``other``'s by
    more than :data:`MARGIN` (the paired difference's interval lies above −MARGIN)."""
    diff = paired_difference(_per_seed(runs, "tap", _permuted), _per_seed(runs, other, _permuted))
    verdict = NOT_RUN if _few(diff) else REPRODUCED if diff.lo > -MARGIN else NOT_REPRODUCED
    return Claim(f"TAP matches {other.upper()} on MNIST (within {MARGIN:g} accuracy)",
                 "App. gt_mnist: \"TAP ... still matches RRR and RBR very closely\"",
                 f"permuted accuracy, TAP − {other.upper()} (paired): {diff.text()}",
                 _seeds(diff), data, verdict)


def speed_claim(ratios: pd.DataFrame, label: str) -> Claim:
    """TAP keeps at least :data:`KEEPS` of No XS's training speed and uses at most 1/KEEPS of its
    peak memory, on every architecture benchmarked (Table 1)."""
    tap = ratios[(ratios["method"] == "tap") & ratios["speed_ratio"].notna()]
    if tap.empty:
        return Claim("TAP keeps at least 0.95 of No XS's speed and memory", "Table 1",
                     "no TAP benchmark in this build", "—", label, NOT_RUN)
    ok = (tap["speed_ratio"] >= KEEPS) & (tap["mem_ratio"] <= 1 / KEEPS)
    parts = [f"{r.model}: speed ×{r.speed_ratio:.2f}, memory ×{r.mem_ratio:.2f}"
             for r in tap.itertuples()]
    return Claim("TAP keeps at least 0.95 of No XS's speed and memory", "Table 1",
                 "; ".join(parts), "— (fastest of several timed steps)", label,
                 REPRODUCED if ok.all() else NOT_REPRODUCED)


def cost_claim(ratios: pd.DataFrame, label: str) -> Claim:
    """RRR and RBR, which take second derivatives, train slower than TAP on every architecture."""
    wide = ratios.pivot_table(index="model", columns="method", values="speed_ratio")
    others = [m for m in ("rrr", "rbr") if m in wide]
    if "tap" not in wide or not others:
        return Claim("RRR and RBR train slower than TAP", "Table 1", "not benchmarked here",
                     "—", label, NOT_RUN)
    slower = all((wide[m] < wide["tap"]).dropna().all() for m in others)
    parts = [f"{model}: " + ", ".join(f"{m.upper()} ×{row[m]:.2f}" for m in ["tap", *others]
                                      if pd.notna(row[m])) for model, row in wide.iterrows()]
    return Claim("RRR and RBR train slower than TAP", "Table 1; Introduction",
                 "; ".join(parts), "—", label, REPRODUCED if slower else NOT_REPRODUCED)


def _deltas(frame: pd.DataFrame, experiment: str) -> list[tuple[str, str, Estimate]]:
    """``(model, case, Δ)`` of a medical summary table, in its order: Δ = swapped − contaminated,
    signed so that < 0 is worse (KNEE's MAE: lower is better), with the t-interval of
    :func:`_deep_verdict`'s docstring."""
    sign = -1.0 if experiment == "knee" else 1.0
    out = []
    for (model, case), grp in frame.groupby(["model", "case"], sort=False):
        rows = grp.set_index("split")
        if {"contaminated", "permuted"} <= set(rows.index):
            d = sign * (rows.loc["permuted", "mean"] - rows.loc["contaminated", "mean"])
            sd = (rows.loc["permuted", "std"] ** 2 + rows.loc["contaminated", "std"] ** 2) ** 0.5
            out.append((model, case, from_summary(d, sd, int(rows["count"].min()))))
    return out


def deep_claim(summaries: Mapping[str, pd.DataFrame], data: Mapping[str, str]) -> Claim:
    """On deep CNNs TAP keeps the tag from re-emerging while RRR or RBR do not: evidence per data
    set and architecture is each method's Δ (swapped − contaminated). Judged only on the paper's
    data with several seeds; on the digits stand-in the numbers are shown, not judged."""
    claim = "On deep CNNs RRR/RBR let the tag re-emerge, TAP does not"
    parts, n_min, real = [], None, True
    for exp, frame in summaries.items():
        cells: dict[str, list[str]] = {}
        for model, case, d in _deltas(frame, exp):
            if case in ("none", "rrr", "rbr", "tap") and not pd.isna(d.mean):
                n_min = d.n if n_min is None else min(n_min, d.n)
                cells.setdefault(model, []).append(
                    f"{'No XS' if case == 'none' else case.upper()} {d.mean:+.3f}")
        parts += [f"{exp.upper()} {model}: " + ", ".join(c) for model, c in cells.items()]
        real = real and "stand-in" not in data.get(exp, "stand-in")
    evidence = ("Δ (tag swapped − contaminated, signed so that < 0 is worse) — "
                + ("; ".join(parts) if parts else "no medical table in this build"))
    seeds = f"{n_min or 0} seed{'s' if (n_min or 0) != 1 else ''}"
    why = []
    if not real:
        why.append("the digits stand-in is not PNEU/KNEE")
    if (n_min or 0) < 2:
        why.append("one seed")
    if why or not parts:
        return Claim(claim, "Results, Figs. PNEU/KNEE", evidence + f" (not judged: {', '.join(why)}; "
                     "needs the paper profile on the real data)", seeds,
                     "; ".join(f"{k.upper()}: {v}" for k, v in data.items()), NOT_RUN)
    tap_ok, other_bad = _deep_verdict(summaries)
    return Claim(claim, "Results, Figs. PNEU/KNEE", evidence, seeds,
                 "; ".join(f"{k.upper()}: {v}" for k, v in data.items()),
                 REPRODUCED if tap_ok and other_bad else NOT_REPRODUCED)


def _deep_verdict(summaries: Mapping[str, pd.DataFrame]) -> tuple[bool, bool]:
    """(TAP's Δ interval reaches within MARGIN of 0 everywhere, RRR or RBR has a Δ interval wholly
    below −MARGIN somewhere). The summary tables hold each split's std, not Δ's: Δ's std is taken
    as √(σ_permuted² + σ_contaminated²), which ignores their covariance over seeds (wider than
    the paired interval when, as usual, the two splits rise and fall together)."""
    tap_ok, other_bad = True, False
    for exp, frame in summaries.items():
        for _, case, e in _deltas(frame, exp):
            if case == "tap":
                tap_ok = tap_ok and e.hi > -MARGIN
            elif case in ("rrr", "rbr"):
                other_bad = other_bad or e.hi < -MARGIN
    return tap_ok, other_bad


def teacher_claim(summary: pd.DataFrame, data: str) -> Claim:
    """TAP with masks from a teacher trained on 1% of clean data beats No XS on permuted digits."""
    claim = "TAP works with masks from a teacher trained on 1% of clean data"
    rows = summary[summary["split"] == "permuted"]
    tap = rows[(rows["case"] == "teacher_1") & (rows["method"] == "tap")]
    none = rows[rows["case"] == "none"]
    if tap.empty or none.empty:
        return Claim(claim, "Setting 2, Fig. ts", "no 1%-teacher TAP run in this build", "—", data,
                     NOT_RUN)
    t, n = tap.iloc[0], none.iloc[0]
    count = int(min(t["count"], n["count"]))
    evidence = (f"MNIST permuted accuracy: TAP with 1%-teacher masks (τ {t['tau']}) "
                f"{t['mean']:.3f}, No XS {n['mean']:.3f}")
    if count < 2:
        return Claim(claim, "Setting 2, Fig. ts", evidence + " (one seed: not judged; the paper's "
                     "finding is on PNEU/KNEE)", f"{count} seed", data, NOT_RUN)
    e = from_summary(t["mean"] - n["mean"], (t["std"] ** 2 + n["std"] ** 2) ** 0.5, count)
    return Claim(claim, "Setting 2, Fig. ts", evidence + f"; difference {e.text()} (unpaired)",
                 f"{count} seeds", data, REPRODUCED if e.lo > 0 else NOT_REPRODUCED)


def _read(root: Path, name: str) -> tuple[pd.DataFrame | None, dict]:
    path = root / "tables" / f"{name}.csv"
    if not path.exists():
        return None, {}
    meta = path.with_suffix(".json")
    return pd.read_csv(path), (json.loads(meta.read_text()) if meta.exists() else {})


VERDICT_COLOURS = {REPRODUCED: "#d9f2d9", NOT_REPRODUCED: "#f8d7d7", NOT_RUN: "#eeeeee"}


def to_html(table: pd.DataFrame) -> str:
    """The claim table as the report shows it: three columns (the claim with where the paper
    makes it, the evidence with its seeds and data, the verdict), readable on a narrow page."""
    from html import escape

    rows = "".join(
        f"<tr><td><b>{escape(r.claim)}</b><br><small>paper: {escape(r.where)}</small></td>"
        f"<td>{escape(r.evidence)}<br><small>{escape(r.seeds)} · {escape(r.data)}</small></td>"
        f'<td style="background-color: {VERDICT_COLOURS.get(r.verdict, "")}">'
        f"{escape(r.verdict)}</td></tr>" for r in table.itertuples())
    return ('<table class="claims"><thead><tr><th>Claim</th><th>Evidence from this build</th>'
            f"<th>Verdict</th></tr></thead><tbody>{rows}</tbody></table>")


def _missing(claim: str, where: str, chapter: str) -> Claim:
    return Claim(claim, where, f"the {chapter} chapter did not run in this build", "—", "—", NOT_RUN)


def claims_table(root: str | Path) -> pd.DataFrame:
    """Every claim judged from the tables one profile's build wrote under ``root/tables``; a claim
    whose chapter did not run is listed as ``not run here``."""
    root = Path(root)
    rows: list[Claim] = []
    runs, meta = _read(root, "mnist_gt_runs")
    if runs is not None:
        data = meta.get("data", "MNIST")
        rows.append(decoy_claim(runs, data))
        rows += [removes_claim(runs, data, m) for m in ("tap", "rrr", "rbr") if m in set(runs["case"])]
        rows += [matches_claim(runs, data, m) for m in ("rrr", "rbr") if m in set(runs["case"])]
    else:
        rows.append(_missing("No XS learns the decoy on MNIST", "Results", "Setting-1 MNIST"))
    ratios, meta = _read(root, "speed_memory")
    if ratios is not None:
        what = f"timed training steps on random tensors · {meta.get('device', 'unknown device')}"
        rows += [speed_claim(ratios, what), cost_claim(ratios, what)]
    else:
        rows.append(_missing("TAP keeps at least 0.95 of No XS's speed and memory", "Table 1",
                             "speed-and-memory"))
    medical = {e: _read(root, f"{e}_gt") for e in ("pneu", "knee")}
    found = {e: t for e, (t, _) in medical.items() if t is not None}
    if found:
        rows.append(deep_claim(found, {e: str(medical[e][1].get("data", "unknown")) for e in found}))
    else:
        rows.append(_missing("On deep CNNs RRR/RBR let the tag re-emerge, TAP does not",
                             "Results, Figs. PNEU/KNEE", "PNEU/KNEE"))
    teacher, _ = _read(root, "mnist_teacher")
    rows.append(teacher_claim(teacher, "MNIST (Setting 2)") if teacher is not None else
                _missing("TAP works with masks from a teacher trained on 1% of clean data",
                         "Setting 2, Fig. ts", "Setting-2"))
    return pd.DataFrame([asdict(r) for r in rows], columns=list(Claim.__dataclass_fields__))

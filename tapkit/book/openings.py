"""Each chapter's opening: two or three sentences under its title, what the paper claims there
(:data:`CLAIMS`, fixed) and what this build found, computed from the chapter's own results.

The ``found`` functions are pure (tables and tensors in, one or two sentences out) and reuse the
reproduction report's judgements (:mod:`.mnist_claims`, :mod:`.medical_claims`, ...) where the
report judges the chapter's claim, so that a page and the report never disagree. This module
holds the paragraph, the claims and the MNIST, benchmark and report chapters;
:mod:`.openings_medical` those on PNEU, KNEE and their stand-in. A chapter shows its opening with
:meth:`.chapter.Chapter.opening`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import pandas as pd

from ..experiments.cells import Annotation
from ..experiments.table1 import architectures
from ..methods import comparators, get_method, no_xs, proposed_method, xs_methods
from ..metrics import tag_reliance, task_metric
from .claim_judges import KAPPA_TABLE, TEACHER_TABLES
from .claim_specs import page_claims
from .evidence import Evidence
from .claims import NOT_REPRODUCED, NOT_RUN, NOT_TESTABLE, VERDICT_LEAD, VERDICTS, verdicts
from .cost_claims import cost_claim, speed_claim
from .openings_medical import extra_found, medical_found, medical_kd_found, \
    medical_teachers_found, overlap_found, visual_found  # noqa: F401  (the chapters' functions)
from .labels import count, in_prose, lam_text
from .thresholds import MNIST_GAP, clearly_less

_MEDICAL = ("On {name}, No XS learns the text tag that reveals the label; TAP keeps VGG-16, "
            "ResNet-18 and DenseNet-121 off it, where RRR and RBR, which penalise input "
            "gradients, let the tag re-emerge in deep CNNs (Results, Figs. PNEU/KNEE).")
CLAIMS: dict[str, str] = {
    "method": "TAP penalises the activations that fall inside the annotation mask, downscaled to "
              "each targeted layer (Definition 2), and Theorem 1 says that driving them to zero "
              "also removes the input gradient on the masked pixels, without computing it.",
    "data": "Every method is tested on images carrying a spurious signal that reveals the label "
            "(a decoy patch on MNIST, a text tag or a stripe on PNEU and KNEE), marked by an "
            "annotation mask, and evaluated on test images whose signal is permuted.",
    "lambda_search": "Each method's λ is chosen by the lowest loss on a validation split whose "
                     "spurious signals are permuted, over log-spaced grids; for ground-truth "
                     "masks on MNIST the paper's choice for TAP is λ = 10⁻³.",
    "mnist": "On Decoy-MNIST, No XS learns the decoy, and TAP protects the two-layer CNN from it "
             "as well as RRR and RBR do (Results; appendix table gt_mnist).",
    "pneu": _MEDICAL.format(name="PNEU"),
    "knee": _MEDICAL.format(name="KNEE"),
    "overlap": "TAP's activations in the penalised layers overlap the tags far less than No "
               "XS's, while methods that penalise input gradients can leave the activations on "
               "the tag (appendix overlap tables).",
    "visual": "Figure 1: RRR and RBR take the tag out of the input gradient while a deep CNN's "
              "activations still respond to it; TAP takes it out of the activations.",
    "extra_architectures": "TAP needs nothing of an architecture but its named convolutional "
                           "layers; the paper reports no numbers for EfficientNet-B0 or "
                           "MobileNet-v2, which this chapter adds.",
    "speed_memory": "Table 1: TAP trains at about No XS's speed and memory, while RRR and RBR, "
                    "which take second derivatives, are slower and use more memory (RBR runs out "
                    "of memory on DenseNet-121).",
    "teachers": "With teacher annotations (Setting 2), masks thresholded from the input "
                "gradients of a teacher trained on 10% or 1% of clean data let TAP protect the "
                "student on Decoy-MNIST nearly as well as ground-truth masks do.",
    "medical_teachers": "On PNEU and KNEE, teacher annotations mark the tags better than random "
                        "masks, and TAP with either teacher's masks keeps deep CNNs off the tag "
                        "(Setting 2, Figs. overlap and ts).",
    "distillation": "TAP with a teacher's annotations protects the student better than "
                    "distilling that teacher: KD comes close with the 10% teacher and degrades "
                    "with the 1% one, and AT and JT do not stop the student learning the decoy.",
    "medical_distillation": "On PNEU and KNEE too, TAP with a teacher's annotations keeps the "
                            "student off the tag better than knowledge distillation (KD), "
                            "attention transfer (AT) or Jacobian transfer (JT) from that teacher.",
    "explorer": "A model that learned the decoy looks at it: its input gradients and activations "
                "light up on the patch, and TAP moves both off it.",
    "normalisation": "The paper's λ were tuned with its authors' code, whose TAP, RRR and RBR "
                     "are normalised differently from the equations it prints; the paper does "
                     "not discuss the difference. It chose TAP's κ = 3 as a balance between "
                     "capturing the influence of the targeted pixels and over-regularising.",
    "protocol": "The Experimental Design section and the appendix fix the data, contamination, "
                "models, optimiser, λ search, losses, teachers and metrics; the authors' released "
                "code, with which the paper's λ were tuned, sets what the text leaves open and in "
                "places differs from it.",
    "report": "TAP removes spurious signals as well as RRR and RBR on MNIST, keeps deep CNNs off "
              "them where those fail, works with teacher annotations, and costs almost nothing "
              "in speed and memory.",
    "comparisons": "The paper's numbers are means over five seeds on full MNIST and the real "
                   "PNEU and KNEE images at 224 px, from ImageNet weights, on an RTX 3080.",
}


def paragraph(chapter: str, profile: str, found: str, standin: bool | None = None,
              calibration: str = "") -> str:
    """The opening as Markdown: the paper's claim for ``chapter``, the first sentence of what this
    build found (``found``) and the report's verdict (the sentence :func:`.claims.verdicts`
    ends ``found`` with, where it does), in two or three sentences (issue 39); the rest of
    ``found``, the evidence, folded beneath them where it is long (:data:`FOLD_WORDS`).
    ``calibration`` names how the data were calibrated (the quick Decoy-MNIST's recorded
    labels), in the first sentence as a stand-in is."""
    if chapter not in CLAIMS:
        raise ValueError(f"no opening claim for chapter {chapter!r}: add it to "
                         f"tapkit.book.openings.CLAIMS (known: {sorted(CLAIMS)})")
    where = (f"profile `{profile}`" + (", on the digits stand-in for the paper's images"
                                       if standin else "")
             + (f", {calibration}" if calibration else ""))
    evidence, lead, verdict = found.partition(VERDICT_LEAD)
    head, rest = headline(evidence)
    if len(rest.split()) <= FOLD_WORDS:  # a short rest stays in view: no fold for one clause
        head, rest = f"{head} {rest}".strip(), ""
    shown = " ".join(part for part in (head[:1].upper() + head[1:], lead + verdict) if part)
    text = f"**The paper:** {CLAIMS[chapter]} **This build** ({where}): {shown.strip()}"
    if rest:
        text += (f"\n\n<details class=\"opening-evidence\"><summary>What else this build "
                 f"measured</summary>\n\n{rest[:1].upper()}{rest[1:]}\n\n</details>")
    return text


FOLD_WORDS = 30
"""An opening folds the evidence after its first sentence only when more than this many words
follow it."""
_ABBREVIATIONS = ("e.g", "i.e", "al", "Fig", "Figs", "Eq", "Eqs", "App", "vs", "cf")


def headline(text: str) -> tuple[str, str]:
    """``text``'s first sentence, up to its first ". " outside brackets (an abbreviation's full
    stop, as in "e.g.", does not end it), and the rest: an opening shows the first and folds the
    second."""
    text, depth = text.strip(), 0
    for i, ch in enumerate(text):
        depth += (ch in "([") - (ch in ")]" and depth > 0)
        if depth or ch != "." or text[i + 1:i + 2] != " ":
            continue
        words = text[:i].split()
        if not words or words[-1].lstrip("(") not in _ABBREVIATIONS:
            return text[:i + 1], text[i + 2:].strip()
    return text, ""


def _and(items: list[str]) -> str:
    """``a, b and c``."""
    return ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + (items[-1] if items else "")


def _means(frame: pd.DataFrame, key: str = "case") -> pd.DataFrame:
    """Mean per ``key`` of each split over the converged runs of a run table."""
    ok = frame[frame["status"] == "ok"]
    return ok.groupby(key, sort=False)[["contaminated", "permuted", "clean"]].mean()


# --------------------------------------------------------------------------- MNIST chapters

def method_found(theorem: pd.DataFrame, coverage: float) -> str:
    """Theorem 1 measured: the share of the absolute input gradient inside the mask per model
    (``theorem`` indexed by case, column ``input gradient in mask``)."""
    share, own = theorem["input gradient in mask"], proposed_method()
    parts = ", ".join(f"{in_prose(c)} {v:.1%}" for c, v in share.items())
    if own not in share or no_xs() not in share:
        return f"the share of the input gradient inside the mask is {parts}."
    lower = clearly_less(share[own], share[no_xs()], MNIST_GAP)
    return (f"the mask covers {coverage:.1%} of the pixels, and the share of the input gradient "
            f"inside it is {parts}: {in_prose(own)}, which never computes an input gradient, "
            + ("lowers it below No XS's, as Theorem 1 predicts." if lower else
               "does not lower it below No XS's here (by more than one point)."))


def theorem_findings(theorem: pd.DataFrame, coverage: float) -> str:
    """What the method page's Theorem-1 bars show, in words that follow the numbers: the share
    of the input gradient inside the mask for No XS, TAP and RRR beside chance (the mask's share
    of the pixels, ``coverage``); TAP "reduces" it only where it is clearly lower than No XS's
    (:data:`MNIST_GAP`), and never "removes" it unless it reaches chance."""
    share, own = theorem["input gradient in mask"], proposed_method()
    if no_xs() not in share or own not in share:
        return f"The mask covers {coverage:.1%} of the pixels (chance, the dashed line)."
    none, tap = share[no_xs()], share[own]
    times = lambda v: f"{v / coverage:.1f}× chance" if coverage else "chance unknown"  # noqa: E731
    text = (f"The patch covers {coverage:.1%} of the pixels (chance, the dashed line). With No "
            f"XS, {none:.1%} of the input gradient sits on it ({times(none)}). {in_prose(own)}, "
            "which never touches an input gradient, ")
    if clearly_less(tap, none, MNIST_GAP):
        text += (f"reduces that share to {tap:.1%} ({times(tap)}) by penalising the activations"
                 + (": lower, not removed (Theorem 1's zero needs the masked activations at "
                    "zero, and the penalty only lowers them)" if tap > coverage + MNIST_GAP
                    else "") + ".")
    else:
        text += (f"leaves it at {tap:.1%} ({times(tap)}): not clearly lower than No XS's (by "
                 f"more than {MNIST_GAP * 100:g} percentage point{'s' * (MNIST_GAP != 0.01)}).")
    for m in [m for m in comparators() if m in share and get_method(m).input_grad]:
        text += (f" {in_prose(m)}, which penalises the input gradient directly, brings it to "
                 f"{share[m]:.1%} ({times(share[m])}).")
    return text


def data_found(train, permuted) -> str:
    """How much of the label the decoy patch gives away: the label read off the patch's
    brightness alone (the most frequent training label per brightness) on the training split
    and on the permuted test split; splits have ``x`` (normalised), ``y`` and ``mask``."""
    from ..data import MNIST_MEAN, MNIST_STD

    def brightness(split):
        raw = (split.x * MNIST_STD + MNIST_MEAN) * split.mask
        return ((raw.sum((1, 2, 3)) / split.mask.sum((1, 2, 3))) * 255).round().int().tolist()

    table = pd.DataFrame({"b": brightness(train), "y": train.y.tolist()})
    rule = table.groupby("b")["y"].agg(lambda s: s.mode().iloc[0])
    train_hit = (table["b"].map(rule) == table["y"]).mean()
    perm = pd.Series(brightness(permuted)).map(rule)
    perm_hit = (perm == pd.Series(permuted.y.tolist())).mean()
    classes = int(train.y.max()) + 1
    pixels = train.mask[0].sum().item()
    return (f"read off the patch's brightness alone, the label is right for {train_hit:.1%} of "
            f"the Decoy-MNIST training images and {perm_hit:.1%} of the permuted test images "
            f"(chance {1 / classes:.0%}); each mask marks {pixels:.0f} of "
            f"{train.mask[0].numel()} pixels.")


def lambda_found(search: pd.DataFrame, choice: pd.DataFrame, paper: pd.DataFrame) -> str:
    """The λ chosen per method beside the paper's (``paper`` has ``method`` and ``mean``), with
    the criterion that chose it, read from the choice table
    (:func:`tapkit.experiments.plans.choose_lambdas`): the lowest loss among every value, or,
    where the profile guards the choice (``guard``) and some value learned the task, among
    those, with the unguarded choice beside it when the guard changed it."""
    theirs = dict(zip(paper["method"], paper["mean"]))
    parts = []
    for r in choice.itertuples():
        n = int((search["method"] == r.method).sum())
        ref = f"; the paper's {lam_text(float(theirs[r.method]))}" if r.method in theirs else ""
        among = f"{n} value{'s' if n != 1 else ''}"
        if getattr(r, "guard", False) and getattr(r, "learned", False):
            among = f"the values of {n} that learned the task"
            if r.lam_unguarded != r.lam:
                among += ("; unguarded, the paper's criterion picks λ = "
                          + lam_text(r.lam_unguarded))
        parts.append(f"{in_prose(r.method)} λ = {lam_text(r.lam)} (lowest loss "
                     f"{r.val_loss:.3f} among {among}{ref})")
    return ("the search chose " + "; ".join(parts) + "." if parts else
            "no λ could be chosen: every search run failed to converge.")


def mnist_found(runs: pd.DataFrame, root: str | Path) -> str:
    """Setting 1 on MNIST from the runs table (``case``, ``seed``, ``status`` and the splits),
    and the report's verdicts on the chapter's claims (:func:`.claim_specs.page_claims` on the
    runs table the chapter wrote under ``root``), so that the page quotes the report."""
    m = _means(runs)
    cases = [c for c in xs_methods() if c in m.index]
    first = ""
    if no_xs() in m.index:
        n = m.loc[no_xs()]
        first = (f"No XS's accuracy goes from {n.contaminated:.3f} to {n.permuted:.3f} when the "
                 f"decoys are permuted; ")
    reached = [f"{in_prose(c)} {m.loc[c, 'permuted']:.3f}" for c in cases]
    first += "on the permuted digits " + _and([reached[0].replace(" ", " reaches ", 1),
                                               *reached[1:]]) + "."
    claims = page_claims(Evidence(Path(root)), "mnist", MNIST_TABLES)
    return first[0].upper() + first[1:] + (" " + verdicts(claims) if claims else "")


def teachers_found(quality: pd.DataFrame, summary: pd.DataFrame, root: str | Path) -> str:
    """Setting 2 on MNIST: the teachers' annotation precision beside random's (``quality``: the
    mean table with ``annotator``, ``precision``, ``lift``), TAP's permuted accuracy with each
    annotation (``summary``: method, annotation, tau, split, mean, std, count), and the report's
    verdicts on this chapter's claims, judged from the tables it wrote under ``root``
    (:func:`.claim_specs.page_claims`: the same cells, preconditions and reasons)."""
    taught = quality[quality["annotator"].str.startswith("teacher")]
    rnd = quality.loc[quality["annotator"] == "random (GT coverage)", "precision"].mean()
    perm = summary[summary["split"] == "permuted"]
    own = proposed_method()
    tap = perm[perm["method"] == own].groupby(
        perm["annotation"].map(lambda a: Annotation(a).value), sort=False)["mean"].mean()
    none = perm.loc[perm["annotation"] == Annotation.NONE, "mean"]
    with_ = {"ground_truth": "ground-truth masks", "random": "random masks"}
    parts = _and([f"{v:.3f} with " + with_.get(c, f"{in_prose(c)}'s masks")
                  for c, v in tap.items()])
    return (f"the teachers' masks have a pixel precision of {taught.precision.min():.1%}–"
            f"{taught.precision.max():.1%} against random masks' {rnd:.1%} (lift "
            f"{taught.lift.min():.2f}–{taught.lift.max():.2f}×). On the permuted digits "
            f"{in_prose(own)} reaches {parts}" + (f" (No XS {none.iloc[0]:.3f})" if len(none) else "") + ". "
            + verdicts(page_claims(Evidence(Path(root)), "teachers", TEACHER_TABLES)))


# the table the MNIST page's claims read (Setting 1's per-run table)
MNIST_TABLES = ("mnist_gt_runs",)

# the tables the distillation page's claims read: its own and the teachers page's
DISTILLATION_TABLES = ("mnist_kd", "mnist_kd_cost", *TEACHER_TABLES)


def distillation_found(summary: pd.DataFrame, root: str | Path | None = None) -> str:
    """TAP against KD/AT/JT on MNIST: each student's accuracy lost when the decoys are permuted
    (``summary``: teacher, method, split, mean), which lose clearly less than No XS, and, with
    ``root``, the report's verdicts on this chapter's claims (:func:`.claim_specs.page_claims` on
    its tables and the teachers page's, which the distillation chapter runs after)."""
    wide = summary.pivot_table(index=["teacher", "method"], columns="split", values="mean",
                               sort=False)
    loss = tag_reliance(wide["contaminated"], wide["permuted"], task_metric("mnist"))
    ref = loss.get(("no teacher", no_xs()))
    rows = [(f"{in_prose(c)} ({in_prose(t).removeprefix('the ')})", d)
            for (t, c), d in loss.items() if c != no_xs()]
    better = [name for name, d in rows if ref is not None and clearly_less(d, ref, MNIST_GAP)]
    head = f"No XS loses {ref:.3f} accuracy when the decoys are permuted; " if ref is not None else ""
    text = (head + ", ".join(f"{n} {d:.3f}" for n, d in rows) + ". Clearly less than No XS "
            f"(by more than {MNIST_GAP:g}): " + (", ".join(better) if better else "none") + ".")
    judged = [] if root is None else page_claims(Evidence(Path(root)), "distillation",
                                                 DISTILLATION_TABLES)
    return text[0].upper() + text[1:] + (" " + verdicts(judged) if judged else "")


def explorer_found(summary: pd.DataFrame) -> str:
    """The explorer's images: per model, how many it gets right and the share of its input
    gradient inside the mask (``summary`` indexed by model, columns ``right`` and
    ``|∇x| inside M``)."""
    n = summary["right"].iloc[0].split("/")[1]
    parts = [f"{model} {r['right'].split('/')[0]} right, {r['|∇x| inside M']:.1%}"
             for model, r in summary.iterrows()]
    return (f"on the {n} test images stored in this page (how many each model gets right, and "
            "the share of its input gradient on the patch): " + "; ".join(parts) + ".")


def normalisation_found(table: pd.DataFrame, root: str | Path | None = None) -> str:
    """The equations against the released code's normalisations at equal λ: per method, the
    largest change of the permuted-decoy accuracy (``table``: method, lam, form, status,
    permuted); with ``root``, the report's verdict on the page's κ claim
    (:func:`.claim_specs.page_claims` on the κ ablation's table)."""
    parts, gaps = [], []
    for method, grp in table.groupby("method", sort=False):
        wide = grp[grp["status"] == "ok"].pivot_table(index="lam", columns="form",
                                                      values="permuted")
        if not {"equations", "released"} <= set(wide.columns) or wide.dropna().empty:
            parts.append(f"{in_prose(method)}: one of the forms did not converge")
            continue
        diff = (wide["released"] - wide["equations"]).dropna()
        lam = diff.abs().idxmax()
        gaps.append(abs(diff[lam]))
        parts.append(f"{in_prose(method)} at λ = {lam_text(lam)} "
                     f"({wide.loc[lam, 'equations']:.3f} with the equations, "
                     f"{wide.loc[lam, 'released']:.3f} with the released form, {diff[lam]:+.3f})")
    verdict = ("the same λ does not give the same model" if gaps and max(gaps) > MNIST_GAP else
               f"at these λ the two forms train alike (within {MNIST_GAP:g})")
    text = ("the largest change of the permuted-decoy accuracy between the two forms at equal "
            "λ: " + "; ".join(parts) + f". So {verdict}.")
    found = [] if root is None else page_claims(Evidence(Path(root)), "normalisation",
                                                (KAPPA_TABLE,))
    return text + (" " + verdicts(found) if found else "")


def speed_found(ratios: pd.DataFrame, label: str) -> str:
    """Table 1 as ratios to No XS (``ratios``: model, method, speed_ratio, mem_ratio), over its
    deep CNNs (:func:`tapkit.experiments.table1.architectures`); the claims show the context
    model apart."""
    deep = ratios[ratios["model"].isin(architectures())]

    def span(method: str, col: str) -> str | None:
        v = deep.loc[(deep["method"] == method), col].dropna()
        return None if v.empty else (f"×{v.min():.2f}" if len(v) == 1 or v.min() == v.max()
                                     else f"×{v.min():.2f}–{v.max():.2f}")

    n, own = deep["model"].nunique(), proposed_method()
    tap = (f"{in_prose(own)} trains at {span(own, 'speed_ratio')} of No XS's speed with "
           f"{span(own, 'mem_ratio')} of its peak memory on Table 1's {n} deep CNN"
           f"{'s' if n != 1 else ''}" if span(own, "speed_ratio")
           else f"{in_prose(own)} was not timed on Table 1's deep CNNs")
    others = [f"{in_prose(m)} at {span(m, 'speed_ratio')}" for m in comparators()
              if span(m, "speed_ratio")]
    text = tap + ("; " + " and ".join(others) + " of its speed" if others else "") + ". "
    return text + verdicts([speed_claim(ratios, label), cost_claim(ratios, label)])


def report_found(table: pd.DataFrame, most: int = 3) -> str:
    """The claim table's verdicts counted (``table``: one row per claim, columns ``claim`` and
    ``verdict``), and the claims *not reproduced* named (at most ``most``): two sentences, the
    table below gives every claim its row (issue 39: an opening, not a dump)."""
    counts = table["verdict"].value_counts()
    parts = [f"{counts[v]} *{v}*" for v in VERDICTS if v in counts]
    failed = [f"“{c.rstrip('.')}”"  # the sentence's own full stop ends it once, after the quote
              for c in table.loc[table["verdict"] == NOT_REPRODUCED, "claim"]]
    judged = ~table["verdict"].isin([NOT_RUN, NOT_TESTABLE])
    text = f"the table below holds {len(table)} claims: " + ", ".join(parts) + "."
    if failed:
        more = len(failed) - most
        return (text + " Not reproduced: " + "; ".join(failed[:most])
                + (f"; and {more} more" if more > 0 else "") + ".")
    if not judged.any():
        return text + " None is judged: a verdict needs cells where its preconditions hold."
    return (text + " Each row gives the claim's LaTeX line, the paper's number and this build's, "
            "and, for a claim not judged, why.")


def comparisons_found(kept: Mapping[str, pd.DataFrame], skipped: list[str]) -> str:
    """How far ours are from the paper's numbers, over the tables measured on its data sets."""
    if not kept:
        return ("no table of this build is on the paper's data sets"
                + (f"; {len(skipped)} measured on a stand-in are left out." if skipped else "."))
    diffs = pd.concat([t["difference"] for t in kept.values()]).dropna().abs()
    worst = max(kept, key=lambda k: kept[k]["difference"].abs().max())
    if diffs.empty:
        return (f"{count(len(kept), 'table')} ({', '.join(kept)}) on the paper's data sets, "
                "with no value the paper reports.")
    text = (f"{count(len(kept), 'table')} ({', '.join(kept)}) compare{'s' if len(kept) == 1 else ''} "
            f"{len(diffs)} values with the paper's: |ours − paper| has a median of "
            f"{diffs.median():.3f} and a maximum of {diffs.max():.3f} (in `{worst}`)")
    return text + (f"; {count(len(skipped), 'table')} measured on a stand-in "
                   f"{'is' if len(skipped) == 1 else 'are'} left out." if skipped else ".")

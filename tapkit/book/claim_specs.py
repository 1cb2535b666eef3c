"""One entry per claim of the paper: the registry the report, the intro's verdict table and the
chapters' openings read (issue 38, item 5).

The paper's side of each claim (its words, LaTeX line, quote, number, setting and data) is data,
transcribed once in ``paper_values/claims.csv``; this module adds how this build judges it: a
*judge* (evidence and the claim's methods in, :class:`.claims.Claim` out) and the chapter that
shows it. Which methods a claim is about is the paper's side too: the csv's ``methods`` column
(registry names, the claimed method first, e.g. TAP then the comparator it matches), which the
judge receives, so that no judge names a method itself. An entry may declare the students it
reads (``needs``, :class:`.claim_needs.Needs`): where the build's table holds none of them the
claim is *not run*, with what the build trained instead, and is not judged (issue 36: *not run*
only for cells that never ran). A claim without a judge still gets a verdict, from what the build
ran (:func:`unjudged`): *not run* when no chapter that measures it ran, *not testable here* with
the reason otherwise (a claim about the real PNEU/KNEE data on the digits stand-in, a proof, or a
number shown on its page that no judge reads yet). Registering a claim twice raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Collection, Mapping

import pandas as pd

from ..experiments.cells import Annotation
from ..methods import comparators
from .claim_judges import (EXTRA_RUNS, KD_TABLE, cost, cost_share, except_for, kappa_choice,
                           matches, matches_at_cost, on_cell, on_every_architecture, on_extra,
                           on_medical, on_mnist, on_overlap, on_speed, on_stripes, on_summary,
                           on_table, on_teacher_table, oom, ostensibly_reemerge, reemerge,
                           reemerge_each, reemerges_in_layers, second_order_cost, students_beat,
                           suppresses_in, xs_protect)
from .claim_needs import Needs
from .claims import NOT_RUN, NOT_TESTABLE, Claim
from .cost_claims import speed_claim
from .comparator_masks import (comparators_on_tag_claim, unstable_on_random_claim,
                               worse_than_tap_claim)
from .distillation_claims import (behind_claim, best_and_least_reliant_claim,
                                  best_but_relies_claim, best_or_tied_claim,
                                  distillation_on_tag_claim, poor_students_claim)
from .evidence import Evidence, Judge, Methods
from .medical_claims import (keeps_off_claim, little_reliance_claim, no_xs_relies_claim,
                             partly_reduces_claim)
from .overlap_claims import ig_overlap_claim
from .mnist_claims import close_claim, decoy_claim, slightly_below_claim
from .report import paper_values
from .summary_claims import (annotation_robust_claim, fail_to_protect_claim, kd_drops_claim,
                             kd_matches_claim)
from .teacher_claims import (annotation_claim, medical_teacher_claim,
                             one_percent_teacher_claim, random_masks_claim, substitutes_claim,
                             tau_trend_claim, teachers_alike_claim, teachers_close_claim)
from .teacher_students import (fails_to_train_claim, only_model_keeps_claim,
                               seemingly_good_claim, tau_sensitivity_claim)


# the claims that say TAP "matches the Base model" as well as keeping off the tag
keeps_off_and_matches = partial(keeps_off_claim, matches_base=True)
# ... and TAP best among the XS losses (the claims table's test for EfficientNet-B0 on KNEE:
# "permuted MAE ≈ Base and Δ-MAE ≈ 0; better than RRR and RBR")
keeps_off_best = partial(keeps_off_claim, matches_base=True, best_among=comparators())
# the KNEE stripes' test: "TAP Δ-MAE small ...; TAP best permuted MAE among XS losses", no
# "≈ Base" (the paper's VGG-16 TAP there scores clean MAE 0.684 against Base's 0.485)
off_and_best = partial(keeps_off_claim, best_among=comparators())
# the architectures whose teacher students grow more reliant on the tag as τ rises (l.410)
TREND_MODELS = ("densenet121", "vgg16")
# the claims that say No XS looks best on contaminated data as well as relying on the tag
looks_best_and_relies = partial(no_xs_relies_claim, looks_best=True)


@dataclass(frozen=True)
class ClaimSpec:
    """A claim's judge (None: judged by :func:`unjudged`, with ``untestable`` as its reason
    where given) and the chapter that shows it. The judge is called with the claim's methods
    (:func:`claim_methods`)."""

    id: str
    chapter: str
    judge: Judge | None = None
    untestable: str = ""  # why this build's cells cannot judge it (no judge): the report's reason
    needs: Needs | None = None  # the students it reads: none trained is *not run*
    not_run: str = ""  # why no profile's cells measure it (no judge): *not run*, with this reason

    def left_out(self, ev: Evidence) -> str:
        """Why this build trained none of the students the claim reads (:attr:`needs`, in a
        table the build wrote: a chapter that did not run is :func:`unjudged`'s), or its
        :attr:`not_run`; ``""`` otherwise."""
        if self.not_run:
            return self.not_run
        frame = ev.table(self.needs.table)[0] if self.needs is not None else None
        return "" if frame is None else self.needs.missing(frame, self.methods)

    @property
    def methods(self) -> Methods:
        return claim_methods(self.id)

    @property
    def reads(self) -> tuple[str, ...] | None:
        """The tables the judge reads, where it declares them (its ``reads``); else None."""
        return getattr(self.judge, "reads", None)


# where each of the paper's settings is measured: the chapter and the tables it writes
SETTINGS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "setting1_mnist": ("mnist", ("mnist_gt_runs",)),
    "setting1_medical": ("pneu", ("pneu_gt_runs", "knee_gt_runs")),
    "setting2_mnist": ("teachers", ("mnist_teacher",)),
    "setting2_medical": ("medical_teachers", ("medical_teacher",)),
    "distillation": ("medical_distillation", ("medical_kd", "mnist_kd")),
    "speed": ("speed_memory", ("speed_memory",)),
    "overlap": ("overlap", ("overlap",)),
    "appendix_architectures": ("extra_architectures", ("extra_pneu", "extra_knee")),
    "appendix_stripes": ("pneu", ("pneu_stripe_runs", "knee_stripe_runs")),
    "theory": ("method", ()),
}

_REGISTRY: dict[str, ClaimSpec] = {}


def register(spec: ClaimSpec) -> ClaimSpec:
    """Add ``spec``; a claim id registered twice, or one the paper's table lacks, raises."""
    if spec.id in _REGISTRY:
        raise ValueError(f"claim {spec.id!r} is registered twice")
    if spec.id not in set(paper_claims().id):
        raise ValueError(f"claim {spec.id!r} is not in paper_values/claims.csv")
    _REGISTRY[spec.id] = spec
    return spec


def paper_claims() -> pd.DataFrame:
    """The paper's claims (``paper_values/claims.csv``): id, claim, tex_line, quote,
    paper_number, setting, data, measures, methods."""
    return paper_values("claims")


def claim_methods(claim_id: str) -> Methods:
    """The methods claim ``claim_id`` is about (claims.csv's ``methods``: registry names, the
    claimed one first); ``()`` where it names none."""
    table = paper_claims().set_index("id")
    value = table.loc[claim_id, "methods"] if "methods" in table else None
    return tuple(value.split()) if isinstance(value, str) else ()


for _spec in (
    ClaimSpec("decoy_learned_mnist", "mnist", on_mnist(decoy_claim)),
    ClaimSpec("tap_protects_mnist", "mnist", on_mnist(xs_protect)),
    ClaimSpec("tap_matches_rrr_mnist", "mnist", on_mnist(matches)),
    ClaimSpec("tap_matches_rbr_mnist", "mnist", on_mnist(matches)),
    ClaimSpec("mnist_contaminated_similar", "mnist", on_mnist(close_claim)),
    ClaimSpec("tap_slightly_below_mnist", "mnist", on_mnist(slightly_below_claim)),
    ClaimSpec("speed_memory_tap", "speed_memory", on_speed(speed_claim)),
    ClaimSpec("tap_cost_fraction", "speed_memory", cost_share),
    ClaimSpec("rbr_densenet_oom", "speed_memory", oom),
    ClaimSpec("tuning_cost_effnet", "speed_memory", untestable="GPU hours of the paper's λ "
              "sweeps on the real KNEE data; this build times Table 1's three architectures, "
              "not EfficientNet-B0's RRR/RBR steps"),
    ClaimSpec("rrr_rbr_slower", "speed_memory", cost),
    ClaimSpec("tap_beats_rrr_rbr", "pneu", matches_at_cost),
    ClaimSpec("decoy_learned_pneu", "pneu", on_medical(looks_best_and_relies, ("pneu",))),
    ClaimSpec("decoy_learned_knee", "knee", on_medical(looks_best_and_relies, ("knee",))),
    ClaimSpec("tap_keeps_off_deep_pneu", "pneu",  # "for all three architectures"
              on_every_architecture(keeps_off_and_matches, ("pneu",))),
    ClaimSpec("tap_protects_knee", "knee", on_medical(keeps_off_and_matches, ("knee",))),
    ClaimSpec("rrr_spurious_densenet_pneu", "pneu",
              on_cell(ostensibly_reemerge, "pneu", "densenet121")),
    # "TAP is successful in protecting models": off the stripe and ≈ Base (the claims table's
    # test: "permuted F1 ≈ Base per arch")
    ClaimSpec("stripes_pneu", "pneu", on_stripes(keeps_off_and_matches, ("pneu",))),
    ClaimSpec("stripes_knee", "knee",
              on_stripes(except_for(off_and_best, "densenet121"), ("knee",))),
    ClaimSpec("extra_architectures", "extra_architectures", on_extra(keeps_off_and_matches)),
    ClaimSpec("extra_arch_pneu_less_vulnerable", "extra_architectures",
              on_extra(little_reliance_claim, ("pneu",))),
    ClaimSpec("effnet_knee_tap_succeeds", "extra_architectures",
              on_extra(keeps_off_best, ("knee",), "efficientnet_b0")),
    ClaimSpec("effnet_knee_rrr_fails", "extra_architectures",
              on_extra(reemerge, ("knee",), "efficientnet_b0")),
    ClaimSpec("rbr_spurious_vgg_pneu", "pneu", on_cell(ostensibly_reemerge, "pneu", "vgg16")),
    ClaimSpec("rrr_rbr_spurious_knee", "knee", on_medical(reemerge_each, ("knee",))),
    # "TAP ≈ 0 and below No XS per arch" (the claims table's test): low, below chance, too
    ClaimSpec("overlap_tap_input_gradients", "overlap",
              on_overlap(suppresses_in(("ig",), deepest=True))),
    ClaimSpec("theorem1_overlap", "overlap", on_overlap(
        lambda frame, runs, data, origins, *methods: ig_overlap_claim(
            frame, runs, data, origins, *methods[:1]))),
    ClaimSpec("overlap_tap_activations", "overlap",
              on_overlap(suppresses_in(("act1", "act2", "act3", "act4"), rivals=True,
                                       deepest=True))),
    ClaimSpec("rrr_rbr_reemerge", "overlap",
              on_overlap(reemerges_in_layers(("ig", "act1", "act2", "act3", "act4")), ("pneu",),
                         "resnet18")),
    ClaimSpec("rrr_rbr_reemerge_appendix", "overlap",
              on_overlap(reemerges_in_layers(("ig", "act4")))),
    ClaimSpec("annotation_better_than_random", "medical_teachers",
              on_table(annotation_claim, "medical_annotation_quality")),
    ClaimSpec("teacher_pneu_works", "medical_teachers",  # "strong performances": ≈ Setting 1's
              on_teacher_table(medical_teacher_claim, setting1="pneu")),
    ClaimSpec("tau_recall_precision", "medical_teachers",
              on_table(tau_trend_claim, "medical_annotation_quality")),
    ClaimSpec("students_beat_teachers", "medical_teachers", students_beat),
    ClaimSpec("teacher_1pct_annotations_close", "medical_teachers",
              on_table(teachers_close_claim, "medical_annotation_quality")),
    ClaimSpec("random_masks_fail", "medical_teachers",
              on_table(random_masks_claim, "medical_teacher")),
    ClaimSpec("teacher_10_vs_1", "medical_teachers", on_teacher_table(teachers_alike_claim)),
    ClaimSpec("teacher_effective_substitutes", "medical_teachers",
              on_teacher_table(substitutes_claim)),
    ClaimSpec("rrr_rbr_teacher_spurious_pneu", "medical_teachers",
              on_teacher_table(comparators_on_tag_claim, "pneu")),
    ClaimSpec("rrr_rbr_teacher_spurious_knee", "medical_teachers",
              # the test: "Δ-MAE and/or permuted MAE worse than TAP per arch and τ"
              on_teacher_table(partial(comparators_on_tag_claim, or_worse=True), "knee")),
    ClaimSpec("teacher_1pct_works", "medical_teachers",
              on_teacher_table(one_percent_teacher_claim)),
    ClaimSpec("mnist_annotation_robust", "teachers",
              on_summary(annotation_robust_claim, "mnist_teacher", masks=True)),
    ClaimSpec("kd_mnist_at_jt_fail", "distillation", on_summary(fail_to_protect_claim, "mnist_kd")),
    ClaimSpec("kd_mnist_matches_tap_10", "distillation",
              on_summary(kd_matches_claim, "mnist_kd", masks=True)),
    ClaimSpec("kd_mnist_1pct_drops", "distillation",
              on_summary(kd_drops_claim, "mnist_kd", masks=True)),
    ClaimSpec("kd_pneu_jt_kd_fail", "medical_distillation",
              # "JT and KD do not mitigate contamination sensitivity well": JT on every
              # architecture, KD "clearly only ResNet-18" (the claims table's test)
              on_teacher_table(partial(distillation_on_tag_claim, somewhere=("kd",)), "pneu",
                               table=KD_TABLE),
              needs=Needs(KD_TABLE, "pneu")),
    ClaimSpec("at_pneu_vs_tap", "medical_distillation",
              on_teacher_table(behind_claim, "pneu", ("densenet121",), table=KD_TABLE),
              needs=Needs(KD_TABLE, "pneu")),
    ClaimSpec("tap_beats_kd_at_jt", "medical_distillation",
              on_teacher_table(best_or_tied_claim, table=KD_TABLE)),
    ClaimSpec("jt_second_order_cost", "distillation", second_order_cost),
    # the claims whose students a profile may leave out (quick: Setting 2 on PNEU's ResNet-18
    # at τ 0.01, TAP, KD and AT only): *not run* there, with what it trained instead
    ClaimSpec("kappa3_choice", "normalisation", kappa_choice),
    # l.410: "for DenseNet-121 and VGG-16" (on PNEU "a similar trend")
    ClaimSpec("tau_trend_pneu", "medical_teachers",
              on_teacher_table(tau_sensitivity_claim, "pneu", TREND_MODELS),
              needs=Needs(experiment="pneu", models=TREND_MODELS, taus=2)),
    ClaimSpec("tau_trend_knee", "medical_teachers",
              on_teacher_table(tau_sensitivity_claim, "knee", TREND_MODELS),
              needs=Needs(experiment="knee", models=TREND_MODELS, taus=2)),
    ClaimSpec("knee_densenet_teacher", "medical_teachers",
              on_teacher_table(only_model_keeps_claim, "knee", "densenet121"),
              needs=Needs(experiment="knee", models=("densenet121",))),
    ClaimSpec("knee_vgg_teacher_spurious", "medical_teachers",
              on_teacher_table(seemingly_good_claim, "knee", "vgg16", setting1="knee"),
              needs=Needs(experiment="knee", models=("vgg16",))),
    ClaimSpec("knee_resnet_teacher_fails", "medical_teachers",
              on_teacher_table(fails_to_train_claim, "knee", "resnet18", setting1="knee"),
              needs=Needs(experiment="knee", models=("resnet18",))),
    ClaimSpec("rrr_rbr_worse_with_teacher_masks", "medical_teachers",
              on_teacher_table(worse_than_tap_claim),
              needs=Needs(annotations=(Annotation.TEACHER_10.value, Annotation.TEACHER_1.value))),
    ClaimSpec("rrr_rbr_dnc_random", "medical_teachers", on_teacher_table(unstable_on_random_claim),
              needs=Needs(annotations=(Annotation.RANDOM.value,))),
    ClaimSpec("kd_knee_jt_kd_poor", "medical_distillation",
              on_teacher_table(poor_students_claim, "knee", table=KD_TABLE, setting1="knee"),
              needs=Needs(KD_TABLE, "knee")),
    ClaimSpec("at_knee_resnet", "medical_distillation",  # "with ResNet-18"
              on_teacher_table(best_but_relies_claim, "knee", "resnet18", table=KD_TABLE),
              needs=Needs(KD_TABLE, "knee", models=("resnet18",))),
    ClaimSpec("tap_best_knee_kd", "medical_distillation",  # "otherwise": not ResNet-18
              on_teacher_table(best_and_least_reliant_claim, "knee", ("resnet18",),
                               table=KD_TABLE),
              needs=Needs(KD_TABLE, "knee")),
    ClaimSpec("effnet_knee_rbr_partial", "extra_architectures",
              on_extra(partly_reduces_claim, ("knee",), "efficientnet_b0"),
              needs=Needs(EXTRA_RUNS.format("knee"), models=("efficientnet_b0",))),
):
    register(_spec)


def unjudged(row, ev: Evidence) -> Claim:
    """The verdict of a claim no judge reads (see the module docstring)."""
    chapter, tables = SETTINGS[row.setting]
    claim, data = row.claim, row.data
    if row.setting == "theory":
        return Claim(claim, "", "a mathematical statement (proof in the paper's appendix)", "—",
                     data, NOT_TESTABLE, reason="a proof, not a measurement: the method page "
                     "checks its consequence numerically")
    if not ev.has(*tables):
        return Claim(claim, "", f"the {chapter} chapter wrote none of {', '.join(tables)}", "—",
                     data, NOT_RUN, reason=f"this build did not run the {chapter} chapter's "
                     "cells for it")
    if "MNIST" not in data and ev.standin and row.setting != "speed":  # speed: random tensors
        return Claim(claim, "", f"the {chapter} page shows this build's numbers on the digits "
                     "stand-in", "—", data, NOT_TESTABLE, standin=True,
                     reason="a claim about the real PNEU/KNEE data; this build ran the digits "
                     "stand-in")
    spec = _REGISTRY.get(row.id)
    if spec is not None and spec.untestable:
        return Claim(claim, "", "—", "—", data, NOT_TESTABLE, reason=spec.untestable)
    return Claim(claim, "", f"its numbers are on the {chapter} page", "—", data, NOT_TESTABLE,
                 reason="no judge reads this claim yet: compare the page with the paper's number")


TABLE_COLUMNS = ("id", "claim", "tex_line", "paper_number", "test", "evidence", "seeds", "data",
                 "verdict", "reason", "chapter")


def page_claims(ev: Evidence, chapter: str, tables: Collection[str]) -> list[Claim]:
    """The report's verdicts on the claims ``chapter`` shows whose judges read only ``tables``
    (the page's own, written before its opening): judged by the registry from the build's
    tables (``ev``, the page's own reader of them) exactly as :func:`claims_table` judges them,
    so that a page and the report quote the same cells, seeds and reasons. A claim whose judge
    also reads another chapter's tables is left to the report."""
    found = [_left_out(spec, ev) or spec.judge(ev, spec.methods) for spec in _REGISTRY.values()
             if spec.chapter == chapter and spec.reads and set(spec.reads) <= set(tables)]
    return [c for c in found if c is not None]


def _left_out(spec: ClaimSpec, ev: Evidence) -> Claim | None:
    """*Not run*, in the paper's words, where this build trained none of the students ``spec``
    reads (:meth:`ClaimSpec.left_out`); None where it trained some."""
    gone = spec.left_out(ev)
    if not gone:
        return None
    row = paper_claims().set_index("id").loc[spec.id]
    return Claim(row.claim, "", "—", "—", row.data, NOT_RUN,
                 reason=f"left out by this profile: {gone}")


def claims_table(root: str | Path) -> pd.DataFrame:
    """Every claim of the paper, judged from the tables one profile's build wrote under
    ``root/tables`` (:data:`TABLE_COLUMNS`): the paper's words, LaTeX line and number beside
    this build's evidence and verdict."""
    ev, rows = Evidence(Path(root)), []
    for row in paper_claims().itertuples():
        spec = _REGISTRY.get(row.id)
        chapter = spec.chapter if spec else SETTINGS[row.setting][0]
        gone = _left_out(spec, ev) if spec else None
        judged = spec.judge(ev, spec.methods) if spec and spec.judge and not gone else None
        if gone is not None:
            c = gone
        elif judged is not None:
            c = judged
        elif spec is not None and spec.judge is not None:  # a judge whose tables are absent
            c = Claim(row.claim, "", f"the {chapter} chapter wrote none of the tables it reads",
                      "—", row.data, NOT_RUN, reason="its cells did not run in this build")
        else:
            c = unjudged(row, ev)
        rows.append({"id": row.id, "claim": row.claim, "tex_line": int(row.tex_line),
                     "paper_number": row.paper_number, "test": c.claim if judged is not None
                     else "", "evidence": c.evidence, "seeds": c.seeds, "data": c.data,
                     "verdict": str(c.verdict), "reason": c.reason, "chapter": chapter})
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))

"""The names a reader sees for the keys of the tables: architectures and methods from their
registry entries (:func:`tapkit.models.model_label`, :func:`tapkit.methods.method_label`,
:mod:`tapkit.experiment_specs`), and
the few keys that are not registry entries (Base, the annotations, column names). One table per
fact: every page, figure and report label goes through :func:`label`.
"""

from __future__ import annotations

from ..experiment_specs import get_experiment, list_experiments
from ..experiments.cells import Annotation
from ..methods import list_methods, method_label, no_xs
from ..models import list_models, model_label



def arch_labels() -> dict[str, str]:
    """Every registered model's label, read from the registry now (a model registered later,
    e.g. by a user's own code, is labelled too)."""
    return {name: model_label(name) for name in list_models()}


def case_labels() -> dict[str, str]:
    """A comparison's cases: every registered method's label, Base (No XS trained on clean
    data, the paper's Base) and No XS timed a second time (Table 1's check of drift)."""
    return {"base": "Base", **{name: method_label(name) for name in list_methods()},
            "none_again": f"{method_label(no_xs())}, measured again"}


ARCH_LABELS = arch_labels()  # as registered at import, for tables that map a column at once
CASE_LABELS = case_labels()
ANNOTATION_LABELS = {Annotation.GROUND_TRUTH: "ground truth", Annotation.TEACHER_10: "10% teacher",
                     Annotation.TEACHER_1: "1% teacher", Annotation.RANDOM: "random",
                     Annotation.NONE: CASE_LABELS[no_xs()]}
OTHER_LABELS = {"lam": "λ", "val_loss": "validation loss", "no teacher": "no teacher",
                "speed_ratio": "speed ÷ No XS", "mem_ratio": "memory ÷ No XS",
                "paper_speed_ratio": "the paper's speed ÷ No XS",
                "paper_mem_ratio": "the paper's memory ÷ No XS",
                "batch_size": "batch", "task_loss_first": "task loss, first epoch",
                "task_loss_last": "task loss, last epoch", "model": "architecture",
                "case": "method",
                # the λ searches' columns (the criterion, the guard, the choice without it)
                "val_clean": "clean validation score",
                "val_constant": "a constant's validation score",
                "learned_share": "share learned (0 a constant, 1 perfect)",
                "learned": "learned", "guard": "guarded",
                "lam_unguarded": "λ unguarded",
                "val_loss_unguarded": "its validation loss",
                "unguarded": "chosen without the guard"}


def experiment_labels() -> dict[str, str]:
    """Every registered experiment's label, by each name it has (``"decoy-mnist"`` and its
    tables' ``"mnist"`` -> ``"Decoy-MNIST"``, ``"pneu"`` -> ``"PNEU"``)."""
    return {n: get_experiment(e).label for e in list_experiments() for n in get_experiment(e).names}


def label(key: object) -> str:
    """The name a reader sees for a key of the tables (an architecture, a method, an
    annotation, a column): ``"teacher_10"`` -> ``"10% teacher"``, ``"none"`` or ``"NONE"`` ->
    ``"No XS"``, ``"lam"`` -> ``"λ"``; a key it does not know is returned as it is."""
    text = str(key)
    for table in (arch_labels(), case_labels(), experiment_labels(), ANNOTATION_LABELS,
                  OTHER_LABELS):
        for k in (text, text.lower()):
            if k in table:
                return table[k]
    return text


def in_prose(key: object) -> str:
    """:func:`label` inside a sentence: a teacher is "the 10% teacher", random annotations are
    "random masks"."""
    text = label(key)
    if text.endswith("teacher"):
        return f"the {text}"
    return "random masks" if text == ANNOTATION_LABELS[Annotation.RANDOM] else text


def is_lam_column(key: object) -> bool:
    """Whether a table's column holds λ values (``lam``, ``lam_unguarded``, ``paper λ``): the
    columns :func:`lam_text` prints."""
    text = str(key)
    return text == "lam" or text.startswith("lam_") or "λ" in text


def lam_text(value: float) -> str:
    """λ as pages and figures print it: in scientific notation (``1e-4``, ``2.5e-3``, ``1e2``),
    never as ``0.000``; plainly from 0.1 to under 10, where that is as short (``0.1``, ``1``),
    and ``0``."""
    if value == 0:
        return "0"
    if 0.1 <= abs(value) < 10:
        return f"{float(value):g}"
    mantissa, exponent = f"{float(value):.2e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"


def interval_text(lo: float | None, hi: float | None, digits: int = 2, missing: str = "—") -> str:
    """An interval as pages print it, ``[lo, hi]`` to ``digits`` decimals; ``missing`` where a
    bound is None or NaN (one seed, one pass: nothing to estimate a spread from)."""
    if lo is None or hi is None or lo != lo or hi != hi:
        return missing
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless one: ``count(3, "seed")`` -> ``"3 seeds"``."""
    return f"{n} {noun}{'s' * (n != 1)}"

"""What a profile changes from the paper's protocol, said in a page's prose, and which form of each
XS loss a profile trains. Every value is read from the protocol objects
(:mod:`tapkit.experiments.protocols`): the page's protocol beside the ``paper`` profile's, which
stands for the paper's Experimental Design section (as the authors' released code runs it). A
profile's settings are also in each page's folded settings; the sentences here are what a reader
meets without unfolding them.

``changes(s, paper, ...)`` lists the differences (optimiser, epochs, batch size, seeds, image
size, data, the losses' forms beside the λ they train at, and the λ search's guard where the
profile's differs from the paper profile's); ``changes_sentence`` puts them in one sentence;
``lambda_criterion`` says how a profile's λ search chooses (its ``lambda_guard``); ``loss_form``
and ``rbr_note`` name the form of a method's loss from its options (e.g. the protocol's
:class:`RbrOptions`), so that a page never calls RBR "full-derivative" on a profile that
trains the released one.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

from ..method_options import MethodOptions, RbrOptions, RrrOptions, TapOptions
from ..experiments.plans import LEARNED_SHARE
from ..experiments.setting1 import seed_counts
from ..methods import method_of, xs_methods
from ..sources import MEDICAL_EXPERIMENTS
from .labels import ARCH_LABELS, count, label

XS_METHODS = tuple(xs_methods())  # the registry's XS losses (TAP, RRR, RBR)
OPTIMIZERS = {"adam": "Adam", "sgd": "SGD (momentum 0.9)"}
# what a data source is, for the sentence (a folder or another source: its name as given)
SOURCES = {"embedded": "the 5,000 embedded digits", "mnist": "full MNIST (60,000 + 10,000 digits)"}


def loss_form(options: MethodOptions) -> str:
    """The form of an XS loss its ``options`` train, in a few words: the paper's equations as
    written, or the authors' released code (on which the paper's λ were tuned)."""
    if isinstance(options, TapOptions):
        if (options.norm, options.pooling) == ("l1", "independent"):
            return "TAP as Definition 2 writes it (L1 norm, each layer's mask pooled from M)"
        if (options.norm, options.pooling) == ("l2sq", "cumulative"):
            return "the released TAP (squared Frobenius norm, masks re-pooled layer by layer)"
        return f"TAP with norm {options.norm!r} and pooling {options.pooling!r}"
    if isinstance(options, RrrOptions):
        return ("RRR as Eq. 4 writes it (unscaled)" if options.scale == "none" else
                "the released RRR (mask scaled by H·W/|M| before squaring)")
    if isinstance(options, RbrOptions):
        return ("the full-derivative RBR (Shao et al.'s penalty as cited)"
                if options.variant == "full" else
                "the released RBR (its influence term without the loss's path through the "
                "forward pass, summed over the batch)")
    return type(options).__name__


def rbr_note(options: RbrOptions | Any, models: Iterable[str] = ()) -> str:
    """Which RBR a profile trains (its ``options``: its :class:`RbrOptions`) and how its
    input gradients treat BatchNorm on ``models`` (those of them that have BatchNorm are named).
    ``options`` may be the profile's protocol, whose RBR options are read (the method whose options
    class is :class:`RbrOptions`, :func:`tapkit.methods.method_of`)."""
    from ..experiments.medical_plans import has_batchnorm

    if not isinstance(options, RbrOptions):
        options = options.options_for(method_of(RbrOptions))

    models = list(models)
    with_bn = [_arch(m) for m in models if has_batchnorm(m)]
    without = [_arch(m) for m in models if _arch(m) not in with_bn]
    on = (f"on {_and(with_bn)} (which have BatchNorm)" if with_bn else
          "on a network with BatchNorm")
    none = f" ({_and(without)}: no BatchNorm, so no such switch)" if without else ""
    mode = ("BatchNorm in eval mode (running statistics; `batchnorm=\"running\"`)"
            if options.batchnorm == "running" else
            "BatchNorm on the batch's statistics (`batchnorm=\"batch\"`)")
    if options.variant == "full":
        text = ("Where this profile trains RBR, it is the full-derivative RBR "
                "(`RbrOptions(variant=\"full\")`): "
                "the penalty of Shao et al. as cited, its influence term differentiated through "
                "the forward pass, so training needs third derivatives; batch mean. ")
        if options.batchnorm == "running":
            return text + ("PyTorch cannot take a third derivative of training-mode BatchNorm, "
                           f"so {on} the RBR term is computed with {mode}, as the authors' "
                           "released code does for its extra forward pass, while the task loss "
                           f"keeps its training-mode forward{none}.")
        return text + f"Its term is computed with {mode} {on}{none}."
    return ("Where this profile trains RBR, it is the authors' released RBR "
            "(`RbrOptions(variant=\"released\")`), the form the paper's λ were tuned on: its task "
            "loss comes from the training forward made before x requires grad, so the influence "
            "term keeps only the first layer's dependence on x, and the penalty is summed over "
            f"the batch. Its input gradient comes from an extra forward pass with {mode} {on}, as "
            f"in the released code{none}.")


def _arch(model: str) -> str:
    return ARCH_LABELS.get(model) or {"two_layer_cnn": "the two-layer CNN"}.get(model, model)


PAPER_SEEDS = 5  # "over five runs" (the paper's tables' captions)


def seeds_left_out(seeds: Sequence[int]) -> str | None:
    """What a chapter's "leaves out" list says of its seeds: ``"3 seeds instead of the paper's
    five"`` (with one seed, also that its tables have no standard deviations), or None when it
    runs the paper's five or more."""
    n = len(seeds)
    if n >= PAPER_SEEDS:
        return None
    return (f"{count(n, 'seed')} instead of the paper's five"
            + (" (no standard deviations)" if n == 1 else ""))


PAPER_EPOCHS = 50  # "50 epochs" with SGD (the paper's training details)
_OPTIMIZER_NAMES = {"adam": "Adam", "sgd": "SGD"}
_STANDIN = "the real PNEU and KNEE images (this is the digits stand-in: compare patterns, not values)"


def protocol_left_out(s, data_note: str = "") -> list[str]:
    """The clauses of a chapter's closing line (:func:`leaves_out`) that its Setting-1 protocol
    ``s`` decides, written once for every page: its data (the embedded digits instead of full
    MNIST, or on PNEU/KNEE the digits stand-in instead of the real images; ``data_note`` added),
    its seeds (:func:`seeds_left_out`) and its epochs and optimiser."""
    left = []
    if str(s.source) == "embedded":
        medical = any(e in MEDICAL_EXPERIMENTS for e in s.experiments)
        left.append((_STANDIN if medical else f"{SOURCES['embedded']} instead of full MNIST")
                    + data_note)
    if seeds := seeds_left_out(s.seeds):
        left.append(seeds)
    if s.epochs < PAPER_EPOCHS:
        left.append(f"{s.epochs} {_OPTIMIZER_NAMES.get(s.optimizer, s.optimizer)} epochs instead "
                    f"of the paper's {PAPER_EPOCHS} SGD epochs")
    return left


def leaves_out(items: Sequence[str], data: bool = False) -> str:
    """A chapter's closing line: ``"Run `make book PROFILE=paper` for everything. This profile
    leaves out: a; b."`` (``data``: the paper profile needs the PNEU/KNEE folders)."""
    return (f"Run `make book PROFILE=paper`{' with the data' if data else ''} for everything. "
            "This profile leaves out: " + ("; ".join(items) if items else "nothing") + ".")


def _and(items: Sequence[str]) -> str:
    items = list(items)
    return ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + (items[-1] if items else "")


def _per_model(values: Mapping[str, Any], fmt=str) -> str:
    """The most common value, with the architectures that differ in brackets: ``3 (VGG-16: 4)``."""
    common = Counter(values.values()).most_common(1)[0][0]
    other = [f"{_arch(m)}: {fmt(v)}" for m, v in values.items() if v != common]
    return fmt(common) + (f" ({'; '.join(other)})" if other else "")


def label_noise_text(noise: float) -> str:
    """The quick Decoy-MNIST's calibration (:func:`tapkit.data.decoy_mnist`), in a few words
    for a sentence: the share of training labels recorded wrong and why (the data page)."""
    return (f"{noise:.0%} of the training labels recorded as another digit and the decoy drawn "
            "from the record (calibrated so that No XS leans on the decoy as the paper's does: "
            "the data page)")


def _source(source: Any, experiment: str | None) -> str:
    text = str(source) if source is not None else "$TAPKIT_DATA"
    if experiment in MEDICAL_EXPERIMENTS:
        name = experiment.upper()
        return ("the digits stand-in (the box above)" if text == "embedded" else
                f"the {name} images" + (f" (`{text}`)" if source is not None else ""))
    noise = getattr(source, "label_noise", 0.0)
    if noise:
        return f"{SOURCES['embedded']} with {label_noise_text(noise)}"
    return SOURCES.get(text, f"`{text}`")


def _lambda_source(s, method: str, models: Sequence[str]) -> str:
    searched = [m for m in models if s.grid(method, m)]
    if len(searched) == len(models):
        return "the λ of this profile's search"
    if not searched:
        return "the paper's λ"
    return (f"the λ of this profile's search on {_and([_arch(m) for m in searched])}, the "
            "paper's elsewhere")


def changes(s, paper, methods: Sequence[str] = (), models: Sequence[str] | None = None,
            experiment: str | None = None, lambdas: Mapping[str, str] | None = None,
            searched: bool | None = None) -> list[str]:
    """What protocol ``s`` changes from ``paper`` (the paper profile's protocol of the same
    chapter) for the ``methods`` a page trains on ``models`` (None: ``s``'s only model) of
    ``experiment`` (None: ``s``'s only one), one item each: optimiser, epochs, batch size, seeds,
    image size, data, the form of each XS loss where it differs from the paper profile's and the
    λ it trains at (``lambdas[method]``: where its λ come from, e.g. "the paper's
    teacher-annotation λ"; default: its grid in ``s``, else the paper's), and, when a λ search
    chooses (``searched``; None: any of ``methods`` has a grid) and ``s`` guards the paper's
    criterion where ``paper`` does not (or the other way round; ``lambda_guard``), the guard,
    which needs a clean copy of the validation split (:data:`LEARNED_SHARE`). Cells ``s`` does
    not run (``not_run``) are left out."""
    from ..experiments.medical_plans import left_out

    first = s.settings(experiment, models[0] if models else None)
    experiment, models = first.experiment, list(models) if models is not None else [first.model]
    runs = {m: s.settings(experiment, m) for m in models}
    ref = {m: paper.settings(experiment, m) for m in models}
    items = []

    def differ(field: str, text: str, fmt=str) -> None:
        ours = {m: getattr(r, field) for m, r in runs.items()}
        theirs = {m: getattr(r, field) for m, r in ref.items()}
        if ours != theirs:
            items.append(text.format(ours=_per_model(ours, fmt), theirs=_per_model(theirs, fmt)))

    opt = {m: (OPTIMIZERS.get(r.optimizer, r.optimizer), r.lr) for m, r in runs.items()}
    opt_paper = {m: (OPTIMIZERS.get(r.optimizer, r.optimizer), r.lr) for m, r in ref.items()}
    if opt != opt_paper:
        as_text = lambda v: f"{v[0]} at learning rate {v[1]:g}"  # noqa: E731
        items.append(f"{_per_model(opt, as_text)} instead of {_per_model(opt_paper, as_text)}")
    differ("epochs", "{ours} instead of {theirs}", lambda n: count(n, "epoch"))
    differ("batch_size", "batches of {ours} instead of {theirs}")
    n, fewer = seed_counts(s, models, experiment)
    fewer = {k: v for k, v in fewer.items() if k in models or k in methods}
    listed = "; ".join(f"{label(k)}: {v}" for k, v in fewer.items())
    if n != len(paper.seeds):
        items.append(f"{count(n, 'seed')} instead of {len(paper.seeds)}"
                     + (f" ({listed})" if fewer else ""))
    elif fewer:
        items.append(f"fewer seeds than the paper's {n} ({listed})")
    if any(r.image_size for r in runs.values()):
        differ("image_size", "images of {ours} px instead of {theirs}")
    # MNIST's typed source (its calibration); PNEU/KNEE's as given (the paper's reads a folder)
    ours = s.source if experiment in MEDICAL_EXPERIMENTS else s.source_for(experiment)
    if str(ours) != str(paper.source):
        items.append(f"{_source(ours, experiment)} instead of "
                     f"{_source(paper.source, experiment)}")
    skipped = left_out(s, experiment, models, methods)
    trained = [m for m in methods if m in XS_METHODS
               and any((model, m) not in skipped for model in models)]
    forms = [m for m in trained if s.options_for(m) != paper.options_for(m)]
    if forms:
        where = {m: (lambdas or {}).get(m) or _lambda_source(
            s, m, [model for model in models if (model, m) not in skipped]) for m in forms}
        at = "; ".join(f"{label(m)} at {where[m]}" for m in forms)
        items.append(f"{_and([loss_form(s.options_for(m)) for m in forms])} instead of the "
                     f"released code's forms, on which the paper's λ were tuned ({at})")
    if searched is None:
        searched = any(s.grid(m, model) for m in methods for model in models)
    guard, paper_guard = _guards(s), _guards(paper)
    if searched and guard != paper_guard:
        items.append(f"λ chosen by {lambda_criterion(guard)}"
                     + (", where the paper chooses among every converged run" if guard else
                        ", without the paper profile's guard"))
    return items


def _guards(p) -> bool:
    """Whether protocol ``p``'s λ search guards its choice (a protocol without the field, such
    as a Setting-2 one, takes Setting 1's default: guarded)."""
    return bool(getattr(p, "lambda_guard", True))


def lambda_criterion(guard: bool) -> str:
    """How a λ search chooses, in a few words for a page: the paper's criterion (Experimental
    Design: the lowest loss on SC(X*, permute(y))_val) among every converged run, or, with the
    guard (a protocol's ``lambda_guard``, :func:`tapkit.experiments.plans.choose_lambdas`), only
    among the runs whose score on a clean copy of the validation split goes at least
    :data:`LEARNED_SHARE` of the way from a constant prediction's to perfect."""
    if not guard:
        return ("the paper's criterion, the lowest loss on the permuted validation split among "
                "every converged run (no guard)")
    return ("the paper's criterion (the lowest loss on the permuted validation split) only "
            "among the runs that learned the task, whose score on a clean copy of the "
            f"validation split goes at least {LEARNED_SHARE:.0%} of the way from a constant "
            "prediction's to perfect (tapkit's guard: the paper uses no clean validation split)")


def changes_sentence(profile: str, items: Sequence[str]) -> str:
    """One sentence of prose: what the ``profile`` changes from the paper (``items``, from
    :func:`changes`), or that it changes nothing."""
    if not items:
        return (f"The `{profile}` profile trains this page with the paper profile's settings: "
                "the paper's protocol as the authors' released code runs it.")
    return (f"What the `{profile}` profile changes from the paper's protocol (read from "
            f"`tapkit.experiments.protocols`; every setting is in the folded settings): "
            + "; ".join(items) + ".")


def page_changes(s, paper, profile: str, methods: Sequence[str] = (),
                 models: Sequence[str] | None = None, experiment: str | None = None,
                 lambdas: Mapping[str, str] | None = None, searched: bool | None = None,
                 extra: Sequence[str] = ()) -> str:
    """:func:`changes_sentence` of :func:`changes` (its arguments), with ``extra`` items of the
    page's own after them: the one call a page makes."""
    return changes_sentence(profile, [*changes(s, paper, methods, models, experiment, lambdas,
                                               searched), *extra])

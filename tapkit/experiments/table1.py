"""The paper's Table 1 (iterations per second and peak memory of one training step of No XS, RRR,
RBR and TAP on VGG-16, ResNet-18 and DenseNet-121, "for batches of 16 224×224-pixel images")
measured from a :class:`~.protocols.BenchProtocol`.

:func:`measure` is the one place Table 1 is measured: the speed page
(``notebooks/speed_memory.py``) and the GPU lease (``scripts/gpu.py``) both call it, so that a
profile times one set of models, methods and loss forms wherever it runs. The paper profile times
what the authors timed: the released VGG-16 head (``vgg16_authors``) and the released losses
(:data:`~.protocol_base.RELEASED`, RBR's among them); the quick profile the same VGG-16 (the one
its chapters train) and the equations' forms on a 2-core CPU. Each model is timed by
:func:`tapkit.benchmark.bench` with No XS twice, the second time named ``none_again``: the gap
between the two is the measurement's noise. The book shows the rows as ratios to No XS (:func:`tapkit.book.medical.bench_ratios`) and
writes them with their settings (:func:`tapkit.book.speed_memory.write_measured`).

The paper's speed claim is about its Table 1's deep CNNs; a protocol's ``context`` models (the
two-layer CNN of Decoy-MNIST at its own batch) are measured beside them and shown, not judged
(:func:`architectures`).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from ..benchmark import bench, model_spec
from ..methods import get_method, no_xs
from ..models import get_spec, list_models, paper_architecture
from ..results import device_name, provenance, resolve_device
from .executors import set_threads
from .protocols import BenchProtocol

log = logging.getLogger(__name__)

AGAIN = "none_again"  # No XS measured a second time: the noise floor of every ratio


@dataclass(frozen=True)
class Table1:
    """One measurement of Table 1: ``rows`` of :func:`tapkit.benchmark.bench` (model by model,
    each model's second No XS row named :data:`AGAIN`), the model ``specs`` measured (Table 1's
    architectures, then the context models) and ``methods`` asked for, the ``protocol`` they were
    measured with, the ``device`` (its name) and CPU ``threads``, the ``provenance``
    (:func:`tapkit.results.provenance`), a one-line ``label`` for the page, and ``not_run``:
    spec -> why a model was not measured (the time budget ran out)."""

    rows: list[dict]
    specs: tuple[str, ...]
    methods: tuple[str, ...]
    protocol: BenchProtocol
    profile: str
    device: str
    threads: int
    provenance: dict[str, Any]
    label: str
    not_run: dict[str, str] = field(default_factory=dict)

    def options(self) -> dict[str, dict[str, Any]]:
        """Each timed XS method's loss options as they ran (defaults filled in): what
        :func:`tapkit.book.paper_profile.released_losses` reads back."""
        return {m: get_method(m).make_options(self.protocol.options.get(m)).to_dict()
                for m in dict.fromkeys(self.methods) if m != no_xs()}

    def meta(self) -> dict[str, Any]:
        """The provenance a table of these rows is written with (``speed_memory.json``): the
        label, the protocol's settings, the specs and methods, the loss options, the device and
        threads (what the speed page compares before showing a stored measurement again,
        :func:`tapkit.book.speed_memory.stored_rows`), the provenance, the rows and ``not_run``."""
        return {"label": self.label, "profile": self.profile,
                "settings": self.protocol.as_dict(), "models": list(self.specs),
                "methods": list(self.methods), "options": self.options(), "device": self.device,
                "threads": self.threads, "provenance": self.provenance, "rows": self.rows,
                "not_run": dict(self.not_run)}


def specs(protocol: BenchProtocol) -> tuple[str, ...]:
    """The model specs ``protocol`` measures, in order: Table 1's architectures, then the
    context models."""
    return tuple(dict.fromkeys((*protocol.models, *protocol.context)))


def architectures(protocol: BenchProtocol | None = None) -> frozenset[str]:
    """The registry names of Table 1's architectures in ``protocol`` (its ``models``; None:
    every registered model that is one of the paper's three or a variant of one,
    :func:`tapkit.models.paper_architecture`: ``vgg16`` and ``vgg16_authors`` alike): the models
    the paper's speed claim is about, and the only ones it is judged on. A context model (the
    two-layer CNN) is not among them."""
    if protocol is None:
        return frozenset(n for n in list_models() if paper_architecture(n))
    return frozenset(model_spec(spec, protocol.batch_size, protocol.image_size)[0]
                     for spec in protocol.models)


def timed_order(methods: tuple[str, ...]) -> list[str]:
    """The methods as each model times them: No XS and TAP first (the cheap ones, without input
    gradients: many paired rounds), then the others, then No XS again (:data:`AGAIN`)."""
    cheap = [m for m in dict.fromkeys((no_xs(), *methods))
             if m in methods and not get_method(m).input_grad]
    return cheap + [m for m in dict.fromkeys(methods) if m not in cheap] + [no_xs()]


def losses_text(protocol: BenchProtocol, methods: tuple[str, ...]) -> str:
    """The loss forms timed, for the label: each XS method's options (e.g. ``RBR
    variant=released, batchnorm=running``)."""
    return "; ".join(f"{get_method(m).label} "
                     f"{get_method(m).make_options(protocol.options.get(m)).label()}"
                     for m in dict.fromkeys(methods) if m != no_xs())


def measure(protocol: BenchProtocol, device: str = "auto", profile: str = "",
            steps: int | None = None, budget_s: float | None = None) -> Table1:
    """Table 1 as ``protocol`` says (batch and image size, rounds, warm-up, memory passes, its
    ``models`` then its ``context``, its ``methods`` and loss ``options``) on ``device``: one
    :func:`tapkit.benchmark.bench` per model, with that model's rounds
    (:meth:`~.protocols.BenchProtocol.model_rounds`) and No XS timed again last.

    ``steps``: every model's rounds of every method (replaces ``steps`` and ``model_steps``; the
    paired rounds of No XS and TAP stay the protocol's). ``budget_s``: no model is started once
    this many seconds have passed (a lease near its time limit still gives the models that
    finished); the others are named in ``not_run``. ``profile`` names the profile in the label."""
    if steps is not None:
        protocol = dataclasses.replace(protocol, steps=steps, model_steps={})
    dev = resolve_device(device)
    threads = set_threads(protocol)
    measured = specs(protocol)
    order = timed_order(protocol.methods)
    start, rows, not_run = time.monotonic(), [], {}
    for spec in measured:
        elapsed = time.monotonic() - start
        if budget_s is not None and elapsed > budget_s:
            not_run[spec] = f"not started: {elapsed:.0f} s of the {budget_s:.0f} s budget spent"
            log.warning("Table 1: %s %s", spec, not_run[spec])
            continue
        name, _, _ = model_spec(spec, protocol.batch_size, protocol.image_size)
        n, paired = protocol.model_rounds(name)
        own = bench([spec], order, protocol.batch_size, protocol.image_size, n, dev,
                    protocol.warmup, paired, protocol.memory_passes, options=protocol.options)
        own[-1]["method"] = AGAIN
        rows += own
    prov = provenance(dev)
    return Table1(rows, measured, tuple(protocol.methods), protocol, profile, device_name(dev),
                  threads, prov, _label(protocol, measured, profile, prov, not_run), not_run)


def _label(protocol: BenchProtocol, measured: tuple[str, ...], profile: str,
           prov: dict[str, Any], not_run: dict[str, str]) -> str:
    """One line: profile, device, tapkit and torch, the optimiser, each model's batch and image
    size, the rounds and memory passes, and the loss forms timed."""
    sizes = [model_spec(s, protocol.batch_size, protocol.image_size) for s in measured]
    arch = {name: get_spec(name).label for name, _, _ in sizes}
    rounds = {name: protocol.model_rounds(name) for name, _, _ in sizes}
    return (f"profile {profile or '?'} · {prov['device']} · tapkit {prov['tapkit']} "
            f"({str(prov.get('git_commit') or '')[:7]}) · torch {prov['torch']} · SGD · "
            + ", ".join(f"{arch[n]} batch {bs} of {px} px" for n, bs, px in sizes)
            + " · rounds of No XS and TAP: "
            + ", ".join(f"{arch[n]} {p or s}" for n, (s, p) in rounds.items())
            + "; of RRR and RBR: " + ", ".join(f"{arch[n]} {s}" for n, (s, p) in rounds.items())
            + f" · {protocol.memory_passes} memory passes · losses: "
            + losses_text(protocol, tuple(protocol.methods))
            + (" · not run: " + ", ".join(not_run) if not_run else ""))


__all__ = ["AGAIN", "Table1", "architectures", "losses_text", "measure", "specs", "timed_order"]

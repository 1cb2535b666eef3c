"""The notebooks' papermill parameters, parsed and checked in one place.

``papermill -p seeds "[1]"`` passes the *string* ``"[1]"`` (``-y "seeds: [1]"`` passes a list),
and numbers and ``None`` may come typed or as text. Every notebook's first cell after its
parameters calls ``parse_params(globals())``: each known parameter is converted from its string
form (``"[1]"``, ``"1e-3"``, ``"{'<method>': 1e-3}"``, ``"None"``, ``"paper"``) and checked, and a
malformed one fails right there, naming the parameter and what it expects.
"""

from __future__ import annotations

import ast
from typing import Any, Callable, MutableMapping

from ..experiments.protocols import PROFILES
from ..methods import no_xs, xs_methods


class ParameterError(ValueError):
    """A notebook parameter that cannot be read as what the notebook expects."""


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text


def _number(v: Any, kind: type) -> Any:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError
    if kind is int and float(v) != int(v):
        raise TypeError
    return kind(v)


def _list_of(kind: type) -> Callable[[Any], list]:
    def conv(v: Any) -> list:
        items = list(v) if isinstance(v, (list, tuple)) else [v]
        if kind is str:
            if not all(isinstance(i, str) and i for i in items):
                raise TypeError
            return items
        return [_number(i, kind) for i in items]
    return conv


INT_LIST, FLOAT_LIST, STR_LIST = _list_of(int), _list_of(float), _list_of(str)


def _string(v: Any) -> str:
    if not isinstance(v, str) or not v:
        raise TypeError
    return v


def _bool(v: Any) -> bool:
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    if not isinstance(v, bool):
        raise TypeError
    return v


def _profile(v: Any) -> str:
    if v not in PROFILES:
        raise TypeError
    return v


def _lambdas(v: Any) -> dict:
    """{method: λ} or {model: {method: λ}}."""
    if not isinstance(v, dict):
        raise TypeError
    return {_string(k): ({_string(m): _number(x, float) for m, x in val.items()}
                         if isinstance(val, dict) else _number(val, float))
            for k, val in v.items()}


def _grids(v: Any) -> dict:
    """λ grids per method: one list, or (medical chapters) one list per architecture."""
    if not isinstance(v, dict):
        raise TypeError
    return {_string(k): ({_string(m): _list_of(float)(g) for m, g in val.items()}
                         if isinstance(val, dict) else _list_of(float)(val))
            for k, val in v.items()}


def _models_by_experiment(v: Any) -> Any:
    """A list of architectures, or one list per experiment ({"pneu": ["resnet18"]})."""
    if isinstance(v, dict):
        return {_string(k): STR_LIST(val) for k, val in v.items()}
    return STR_LIST(v)


def _optional(conv: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def opt(v: Any) -> Any:
        return None if v is None else conv(v)
    opt.optional = True  # type: ignore[attr-defined]
    return opt


_XS = xs_methods()  # the examples name the registry's XS methods
_ONE, _TWO = _XS[0], _XS[1 % len(_XS)]

# name: (converter, what it expects); None is allowed where the converter is _optional
PARAMETERS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "profile": (_profile, f"one of {list(PROFILES)}"),
    "seeds": (_optional(INT_LIST), "a list of ints, e.g. [0, 1], or None (the profile's)"),
    "epochs": (_optional(lambda v: _number(v, int)), "an int, or None (the profile's)"),
    "batch_size": (_optional(lambda v: _number(v, int)), "an int, or None (the profile's)"),
    "image_size": (_optional(lambda v: _number(v, int)), "an int, or None (the profile's)"),
    "steps": (_optional(lambda v: _number(v, int)), "an int, or None (the profile's)"),
    "warmup": (_optional(lambda v: _number(v, int)), "an int, or None (the profile's)"),
    "max_images": (_optional(lambda v: _number(v, int)), "an int, or None (all)"),
    "n_examples": (lambda v: _number(v, int), "an int"),
    "n_images": (lambda v: _number(v, int), "an int"),
    "image_seed": (lambda v: _number(v, int), "an int"),
    "kernel_size": (lambda v: _number(v, int), "an int"),
    "kd_temperature": (_optional(lambda v: _number(v, float)), "a number, or None (tapkit's 4)"),
    "fractions": (_optional(FLOAT_LIST), "a list of numbers, e.g. [0.1, 0.01], or None"),
    "kd_fractions": (_optional(FLOAT_LIST), "a list of numbers, e.g. [0.1], or None"),
    "taus": (FLOAT_LIST, "a list of numbers, e.g. [0.01, 0.05]"),
    "train_taus": (_optional(FLOAT_LIST), "a list of numbers, e.g. [0.01], or None"),
    "methods": (_optional(STR_LIST), f"a list of method names, e.g. ['{no_xs()}', '{_ONE}'], "
                "or None (the chapter's, from the method registry)"),
    "models": (_optional(STR_LIST), "a list of architectures, e.g. ['resnet18'], or None (where "
               "a notebook offers it: the profile's, e.g. the speed page's Table 1 models)"),
    "datasets": (_optional(STR_LIST), "a list of datasets, e.g. ['pneu', 'knee'], or None (where "
                 "a notebook offers it: the chapter's, e.g. Setting 2's PNEU in the quick profile)"),
    "xs_methods": (_optional(STR_LIST), f"a list of XS methods, e.g. ['{_ONE}', '{_TWO}'], or "
                   "None"),
    "students": (_optional(STR_LIST), "a list of architectures, e.g. ['resnet18'], or None"),
    "kd_models": (_optional(STR_LIST), "a list of architectures, e.g. ['resnet18'], or None"),
    "kd_methods": (_optional(STR_LIST), "a list of distillation methods, e.g. ['kd', 'at', 'jt'], "
                   "or None"),
    "quality_taus": (_optional(FLOAT_LIST), "a list of numbers, e.g. [0.01, 0.1], or None"),
    "stripe_models": (_optional(_models_by_experiment), "a list of architectures (or a dict of "
                      "lists keyed by experiment), or None (the profile's)"),
    "lambdas": (_optional(_lambdas), f"a dict such as {{'{_ONE}': 1e-3}} or {{'resnet18': "
                                     f"{{'{_ONE}': 1e-3}}}}, or None"),
    "grids": (_optional(_grids), f"a dict such as {{'{_ONE}': [1e-4, 1e-3]}} or {{'{_ONE}': "
                                 "{'resnet18': [1e-3]}}, or None"),
    "source": (_optional(_string), "'embedded', 'mnist', 'torchvision:/root' or a folder, or None"),
    "results": (_optional(_string), "a folder, or None (<repository>/results)"),
    "device": (_string, "'auto', 'cpu' or 'cuda'"),
    "experiment": (_string, "'pneu' or 'knee'"),
    "split": (_string, "a split name, e.g. 'test_permuted'"),
    "threshold": (_optional(_string), "'absolute', 'quantile', or None (the profile's rule)"),
    "figure1_model": (_string, "an architecture, e.g. 'resnet18'"),
    "live": (_bool, "True or False"),
    "rerun": (_bool, "True or False"),
}

_KEEP_TEXT = {"profile", "experiment", "source", "results", "device", "split", "threshold", "figure1_model"}


def parse_param(name: str, value: Any) -> Any:
    """One parameter in its typed form; raises :class:`ParameterError` naming it."""
    if name not in PARAMETERS:
        raise ParameterError(f"unknown notebook parameter {name!r}; known: {sorted(PARAMETERS)}")
    conv, expects = PARAMETERS[name]
    raw = value
    if isinstance(value, str):
        text = value.strip()
        if text == "None":
            value = None
        elif name not in _KEEP_TEXT or text[:1] in "[{(\"'":
            value = _literal(text)
    if value is None and not getattr(conv, "optional", False):
        raise ParameterError(f"parameter {name} is None; expected {expects}")
    try:
        return conv(value)
    except (TypeError, ValueError, AttributeError):
        raise ParameterError(f"parameter {name}={raw!r} is not valid: expected {expects}") from None


def parse_params(namespace: MutableMapping[str, Any]) -> None:
    """Parse, in place, every known parameter in ``namespace`` (a notebook's ``globals()``)."""
    for name in [n for n in PARAMETERS if n in namespace]:
        namespace[name] = parse_param(name, namespace[name])

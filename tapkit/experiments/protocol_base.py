"""What every protocol dataclass shares (:mod:`.protocols` holds the profiles): the options each
XS method trains with, and overrides plus a JSON form for the tables' metadata."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any, Mapping

from ..config import ClassWeights, TrainConfig
from ..method_options import MethodOptions
from ..methods import get_method, list_methods
from ..sources import SOURCE_TYPES

# Which form of each XS loss a protocol's runs train with: method -> its options (a method not
# named trains with its defaults). EQUATIONS: the paper's equations as written (Definition 2's
# L1 norm with D(M, l) from M per layer, Eq. 4 unscaled, Shao et al.'s RBR). RELEASED: the
# authors' released code, on which the paper's λ were tuned (TAP's squared Frobenius norm with
# cumulatively re-pooled masks, RRR's mask scaled by H·W/|M| before squaring, RBR as released;
# the distillation baselines as ``configs/config.yaml`` and ``src/loss.py`` have them: KD at
# temperature 1.0, AT and JT in their released forms). EQUATIONS keeps KD at KdOptions' default
# temperature 4 (tapkit's choice: the paper gives none) and the cited AT and JT.
MethodOptionsTable = Mapping[str, MethodOptions]
EQUATIONS: MethodOptionsTable = MappingProxyType({})
# RELEASED is each registry entry's ``released`` options (:class:`tapkit.methods.XSMethod`).
RELEASED: MethodOptionsTable = MappingProxyType({
    name: method.released for name in list_methods()
    if (method := get_method(name)).released is not None})


def check_options_table(table: MethodOptionsTable) -> None:
    """``ValueError`` unless every entry is its method's options class (a protocol names a
    mistake when it is built, not when its first run is)."""
    for method, options in table.items():
        get_method(method).make_options(options)


class _TrainsMethods:
    """Shared by the protocols that build :class:`TrainConfig` s: each run's method options come
    from the protocol's ``options`` table unless the run names its own, and its task loss's class
    weights from the protocol's ``class_weights`` (experiment -> :class:`ClassWeights`; an
    experiment not named: unweighted, the field left at its default) unless the run names them."""

    options: MethodOptionsTable
    class_weights: Mapping[str, ClassWeights]

    def class_weights_for(self, experiment: str) -> ClassWeights:
        """The class weights ``experiment``'s runs train and validate with."""
        return ClassWeights(getattr(self, "class_weights", {}).get(experiment, ClassWeights.NONE))

    def options_for(self, method: str) -> MethodOptions:
        """The options ``method`` trains with under this protocol."""
        return get_method(method).make_options(self.options.get(method))

    def with_options(self, **by_method: MethodOptions):
        """A copy whose table sets ``by_method`` (e.g. ``kd=KdOptions(temperature=2.0)``)."""
        table = MappingProxyType({**self.options, **by_method})
        check_options_table(table)
        return dataclasses.replace(self, options=table)  # type: ignore[type-var]

    def _train_config(self, base: Mapping[str, Any], fields: Mapping[str, Any]) -> TrainConfig:
        merged = {**base, **fields}
        if "options" not in fields:
            merged["options"] = self.options_for(merged.get("method", TrainConfig.method))
        if "class_weights" not in fields:
            merged["class_weights"] = self.class_weights_for(
                merged.get("experiment", TrainConfig.experiment))
        return TrainConfig(**merged)


def _jsonable(value: Any) -> Any:
    if isinstance(value, SOURCE_TYPES):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


class _Protocol:
    """Shared by the protocol dataclasses: overrides and a JSON form for the tables' metadata."""

    def with_overrides(self, **overrides: Any):
        """A copy with every non-``None`` override applied (lists become tuples)."""
        known = {f.name for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        unknown = set(overrides) - known
        if unknown:
            raise ValueError(f"unknown setting(s) {sorted(unknown)}; expected some of {sorted(known)}")
        changes = {k: tuple(v) if isinstance(v, list) else v
                   for k, v in overrides.items() if v is not None}
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def as_dict(self) -> dict[str, Any]:
        return _jsonable(self)

"""What every protocol dataclass shares (:mod:`.protocols` holds the profiles): the loss
normalisations a run trains with, and overrides plus a JSON form for the tables' metadata."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from ..sources import SOURCE_TYPES


@dataclass(frozen=True)
class LossNorms:
    """Which form of each XS loss a run trains with (TrainConfig fields of the same names)."""

    tap_norm: str = "l1"              # Definition 2; "l2sq" = released code
    tap_pooling: str = "independent"  # D(M,l) from M per layer; "cumulative" = released code
    rrr_scale: str = "none"           # Eq. 4; "released" = mask x H*W/|M| before squaring
    rbr_variant: str = "full"         # Shao et al.'s derivative; "released" = authors' code

    def fields(self) -> dict[str, str]:
        return dataclasses.asdict(self)


EQUATIONS = LossNorms()
RELEASED = LossNorms("l2sq", "cumulative", "released", "released")


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

"""Whether a result is on the paper's data or on a stand-in, as a typed field of the tables'
provenance, so that the reproduction report never judges a stand-in and never reads that fact
from a caption's prose."""

from __future__ import annotations

from enum import Enum
from typing import Mapping


class DataOrigin(Enum):
    """What a table was measured on; its value is what a table's provenance (``origin``) and a
    comparison table's ``origin`` column hold."""

    PAPER = "paper"         # the paper's data sets: MNIST digits, PNEU or KNEE read from a folder
    STANDIN = "stand-in"    # the digits stand-in for PNEU/KNEE (``source="embedded"``)

    @classmethod
    def read(cls, meta: Mapping) -> DataOrigin | None:
        """The ``origin`` a table's provenance records; None when it records none (a table
        written before the field existed: rebuild it to have it judged)."""
        value = meta.get("origin")
        if value is None:
            return None
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"unknown data origin {value!r} in a table's provenance; expected "
                             f"one of {[o.value for o in cls]}") from None

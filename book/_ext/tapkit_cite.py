"""Author-year citations in round brackets, "(Zhang et al., 2024)", for the book's {cite} roles.

sphinxcontrib-bibtex's ``author_year`` style uses square brackets; this registers the same style
with round ones as ``author_year_round`` (the way its documentation shows for custom styles), which
``bibtex_reference_style`` in ``_config.yml`` selects.
"""

from __future__ import annotations

import dataclasses

from sphinx.application import Sphinx
from sphinxcontrib.bibtex.plugin import register_plugin
from sphinxcontrib.bibtex.style.referencing import BracketStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle


def round_brackets() -> BracketStyle:
    return BracketStyle(left="(", right=")")


@dataclasses.dataclass
class RoundAuthorYearReferenceStyle(AuthorYearReferenceStyle):
    """``author_year`` with "(...)" around parenthetical citations and textual years."""

    bracket_parenthetical: BracketStyle = dataclasses.field(default_factory=round_brackets)
    bracket_textual: BracketStyle = dataclasses.field(default_factory=round_brackets)
    bracket_author: BracketStyle = dataclasses.field(default_factory=round_brackets)
    bracket_label: BracketStyle = dataclasses.field(default_factory=round_brackets)
    bracket_year: BracketStyle = dataclasses.field(default_factory=round_brackets)


def setup(app: Sphinx) -> dict:
    register_plugin("sphinxcontrib.bibtex.style.referencing", "author_year_round",
                    RoundAuthorYearReferenceStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

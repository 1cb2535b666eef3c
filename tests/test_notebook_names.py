"""Every library name a chapter notebook uses exists: the notebooks run only in a book build
(tens of minutes), so a renamed or unexported function would otherwise fail there first (the
report chapter once called ``medical.variant_notes`` before ``tapkit.book.medical`` exported it).
Read from the notebooks' source, not run: their ``from tapkit... import`` names and every
``module.attribute`` they take from an imported tapkit module."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.py"))


def library_names(source: str) -> tuple[dict[str, object], list[tuple[str, str, int]]]:
    """``({local name: module}, [(local name, attribute, line)])``: the tapkit modules a
    notebook imports under a name, and each attribute it reads from one of them."""
    tree = ast.parse(source)
    modules: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("tapkit") and alias.asname:
                    modules[alias.asname] = importlib.import_module(alias.name)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tapkit"):
            parent = importlib.import_module(node.module)
            for alias in node.names:
                try:  # a submodule (from tapkit.book import medical), else a name in the module
                    value = importlib.import_module(f"{node.module}.{alias.name}")
                except ModuleNotFoundError:
                    if not hasattr(parent, alias.name):
                        raise AssertionError(f"line {node.lineno}: {node.module} has no "
                                             f"{alias.name}") from None
                    value = getattr(parent, alias.name)
                if isinstance(value, ModuleType):
                    modules[alias.asname or alias.name] = value
    used = [(n.value.id, n.attr, n.lineno) for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id in modules]
    return modules, used


def test_a_missing_name_is_found():
    source = "from tapkit.book import medical\nmedical.override_note(p)\nmedical.no_such(p)\n"
    modules, used = library_names(source)
    missing = [(name, attr) for name, attr, _ in used if not hasattr(modules[name], attr)]
    assert missing == [("medical", "no_such")]
    with pytest.raises(AssertionError, match="has no nothing_here"):
        library_names("from tapkit.book.medical import nothing_here\n")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_library_name_a_notebook_uses_exists(path):
    modules, used = library_names(path.read_text())
    assert modules, f"{path.name} imports no tapkit module"
    missing = [f"line {line}: {name}.{attr}" for name, attr, line in used
               if not hasattr(modules[name], attr)]
    assert not missing, f"{path.name} uses names its modules lack: {missing}"

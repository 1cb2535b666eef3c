"""The library's layers, read from its source with ast: imports go one way (core -> experiments ->
book -> cli), no module imports itself back through others, and every file stays short."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "tapkit"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """tapkit modules imported anywhere in the file (function-level imports included)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("tapkit")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("tapkit"):
                continue
            for alias in node.names:  # "from . import losses" imports the module tapkit.losses
                sub = f"{target}.{alias.name}"
                found.add(sub if (PACKAGE.parent / sub.replace(".", "/")).with_suffix(".py").exists()
                          else target)
    return found - {name}


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}


def _layer(module: str) -> str:
    if module.startswith("tapkit.experiments"):
        return "experiments"
    if module.startswith("tapkit.book"):
        return "book"
    return "cli" if module == "tapkit.cli" else "core"


def test_imports_go_one_way():
    allowed = {"core": {"core"}, "experiments": {"core", "experiments"},
               "book": {"core", "experiments", "book"},
               "cli": {"core", "experiments", "book", "cli"}}
    wrong = [(m, i) for m, imports in _graph().items() for i in imports
             if _layer(i) not in allowed[_layer(m)] and i != "tapkit"]
    assert wrong == []
    # the package's own __init__ is core: it may only import core modules
    assert all(_layer(i) == "core" for i in _graph()["tapkit"])


def test_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt == "tapkit" or nxt not in graph:
                continue
            assert state.get(nxt) != 1, "import cycle: " + " -> ".join(path + [nxt])
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_the_graph_sees_the_imports_it_checks():
    graph = _graph()
    assert "tapkit.experiments.store" in graph["tapkit.experiments.executors"]
    assert "tapkit.losses" in graph["tapkit.methods"]  # "from . import baselines, losses"
    assert "tapkit.experiments.medical_runs" in graph["tapkit.book.medical"]


def test_every_file_is_short():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 300}
    assert long == {}

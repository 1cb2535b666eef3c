"""The library's layers, read from its source with ast: imports go one way (core -> experiments ->
book -> cli), no module imports itself back through others, and nothing below the book reads
the book's files."""

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


def _names_a_book_path(tree: ast.Module) -> list[str]:
    """String constants (docstrings aside) that name the book's package or a path under it:
    ``"book"`` as a path part, ``tapkit/book``, ``tapkit.book``."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                       ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docstrings):
            parts = node.value.replace("\\", "/").replace(".", "/").split("/")
            if "book" in parts:
                found.append(node.value)
    return found


def _below_the_book() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if _layer(_module_name(p)) in ("core", "experiments")]


def _reads_the_book(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    imported = sorted(i for i in _imports(path) if _layer(i) == "book")
    return imported + _names_a_book_path(tree)


def test_nothing_below_the_book_reads_its_files():
    """The core and the experiments layer neither import tapkit.book nor open a file under
    tapkit/book/ (its package data, e.g. the paper values the chapters show): what they need is
    their own data."""
    below = _below_the_book()
    assert PACKAGE / "experiments" / "medical_plans.py" in below and PACKAGE / "losses.py" in below
    found = {str(p.relative_to(PACKAGE)): hits for p in below if (hits := _reads_the_book(p))}
    assert found == {}


def test_the_book_reading_check_sees_paths(tmp_path):
    """The check above on files made here: a path built from parts, a dotted package name and a
    path string are found; a docstring that names the book and an unrelated word are not (an
    import of tapkit.book is :func:`_imports`', as the import-direction test reads it)."""
    reads = tmp_path / "reads.py"
    reads.write_text('''"""Docstring naming tapkit/book/paper_values is prose, not a read."""
from importlib import resources
TABLE = resources.files("tapkit") / "book" / "paper_values" / "lambdas.csv"
OTHER = resources.files("tapkit.book") / "x.csv"
PATH = "tapkit/book/paper_values/gt_results.csv"
WORD = "notebook"
''')
    assert sorted(_names_a_book_path(ast.parse(reads.read_text()))) == [
        "book", "tapkit.book", "tapkit/book/paper_values/gt_results.csv"]
    clean = tmp_path / "clean.py"
    clean.write_text('"""Reads tapkit.book? No: this is a docstring."""\nWORD = "notebooks"\n')
    assert _names_a_book_path(ast.parse(clean.read_text())) == []

"""Packaging: the library installs beside a user's own PyTorch, set-up says what it needs.

* pyproject.toml takes version ranges; the exact versions tested live in constraints.txt (which
  ``make install`` applies) and environment.yml, and agree;
* the wheel carries the licence, ``py.typed`` and the paper's values, and its metadata names the
  project's addresses;
* the built wheel, installed into a fresh virtual environment that already holds another torch
  (2.13 here, with its torchvision), keeps that torch and computes ``tap`` (marked ``slow``: a
  fresh venv, a torch install and tapkit's requirements, ~35 s with uv on the 2-core machine,
  ~80 s with pip, twice that beside the smoke book; ``make test`` runs it, ``-m "not slow"``
  leaves it out);
* ``make book`` checks npm before anything else, and the check says what to install;
* ``make notebooks`` writes ``.ipynb`` files paired with their tracked ``.py`` notebooks.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tapkit import target_layers

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CHECK = ROOT / "scripts" / "check_book_tools.py"
REPOSITORY = "https://github.com/tapkit-dev/tapkit"
PAGES = "https://tapkit-dev.github.io/tapkit/"
# Another PyTorch than the one tested with, and its torchvision (a user's own pair). This
# machine keeps a CPU wheel of torch 2.13.0 on disk (pip's find-links); elsewhere, name a pair
# whose wheels lie in pip's find-links, or the test skips rather than download several GB.
OTHER_TORCH = os.environ.get("TAPKIT_OTHER_TORCH", "2.13.0")
OTHER_TORCHVISION = os.environ.get("TAPKIT_OTHER_TORCHVISION", "0.28.0")


def _name(requirement: str) -> str:
    """The normalised project name of a requirement string (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)[1]).lower()


def _constraints() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep, f"constraints.txt pins exact versions only, not {line!r}"
            pins[_name(name)] = version.strip()
    return pins


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without this checkout on sys.path, so a subprocess imports what it installed."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", OMP_NUM_THREADS="1", **extra)
    return env


def _make_n(*args: str) -> list[str]:
    """The recipe lines ``make`` would run (``-n``: nothing is run), in order."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    proc = subprocess.run(["make", "-n", "--no-print-directory", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


# -- ranges and pins ------------------------------------------------------------------------------

def test_dependencies_are_ranges_and_constraints_pin_each_of_them():
    deps = PYPROJECT["project"]["dependencies"]
    assert not [d for d in deps if "==" in d or "<" in d], "install requirements must not pin"
    assert "torch>=2.4" in deps and "torchvision>=0.19" in deps
    pins = _constraints()
    assert pins["torch"] == "2.14.1" and pins["torchvision"] == "0.29.1"
    extras = PYPROJECT["project"]["optional-dependencies"]
    wanted = {_name(d) for d in deps + extras["book"] + extras["test"]}
    assert wanted - set(pins) == set(), "constraints.txt lacks a pin for these"
    assert "tapkit" not in pins  # the project itself is never constrained


def test_environment_yml_declares_node_and_the_same_pins():
    yaml = pytest.importorskip("yaml", reason="PyYAML (a jupyter-book dependency) reads environment.yml")
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert any(d.split(">")[0].split("=")[0] == "nodejs" for d in conda)
    assert "-c constraints.txt" in pip
    pins = _constraints()
    for line in pip:
        if "==" in line:
            name, version = line.split("==")
            assert pins[_name(name)] == version, f"environment.yml and constraints.txt disagree on {name}"
    assert {_name(line) for line in pip if "==" in line} >= {"torch", "torchvision"}


def test_make_install_applies_the_constraints(tmp_path):
    lines = _make_n("-B", "install", f"VENV={tmp_path / 'venv'}")
    recipe = " ".join(" ".join(lines).replace("\\", " ").split())  # continued lines joined
    venv = tmp_path / "venv"
    # uv installs the pins, and pip does where uv fails: both with the constraints
    uv = f"{venv}/bin/uv pip install -q --compile-bytecode --python {venv}/bin/python"
    assert f'{uv} -c constraints.txt -e ".[book,test]"' in recipe
    assert f'|| {venv}/bin/python -m pip install -q -c constraints.txt -e ".[book,test]"' in recipe
    assert f'{venv}/bin/python -m pip install -q -c constraints.txt uv' in recipe


def test_project_metadata_names_licence_and_addresses():
    project = PYPROJECT["project"]
    assert project["license"] == "MIT" and (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert project["urls"] == {"Homepage": PAGES, "Documentation": PAGES, "Repository": REPOSITORY,
                               "Issues": f"{REPOSITORY}/issues"}
    assert (ROOT / "tapkit" / "py.typed").is_file()


# -- the wheel ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of this checkout, built from a copy (setuptools writes build/ and *.egg-info
    next to its sources, and build/ is the book's folder here)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "tapkit", src / "tapkit", ignore=shutil.ignore_patterns("__pycache__"))
    cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"), str(src)]
    if _has_setuptools():  # build with this environment's setuptools: no build env to install
        cmd.insert(4, "--no-build-isolation")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_clean_env(), timeout=600)
    assert proc.returncode == 0, proc.stderr
    (built,) = (tmp / "dist").glob("tapkit-*.whl")
    return built


def _has_setuptools() -> bool:
    import importlib.util
    spec = importlib.util.find_spec("setuptools")
    if spec is None:
        return False
    from importlib.metadata import version
    return int(version("setuptools").split(".")[0]) >= 77  # PEP 639 licence fields


def test_wheel_carries_licence_types_and_paper_values(wheel):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "tapkit/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "tapkit/experiments/paper_values/lambdas.csv" in names  # the λ the runs train with
    assert "tapkit/experiments/paper_values/README.md" in names
    assert "tapkit/book/paper_values/gt_results.csv" in names  # the tables the chapters show
    assert "tapkit/book/paper_values/README.md" in names
    assert "License-Expression: MIT" in meta
    assert f"Project-URL: Repository, {REPOSITORY}" in meta
    requires = [line for line in meta.splitlines() if line.startswith("Requires-Dist:")
                and "extra ==" not in line]
    assert "Requires-Dist: torch>=2.4" in requires
    assert not [r for r in requires if "==" in r]


# The check run inside the fresh environment: tapkit from its site-packages, torch untouched, and
# TAP's value on a hand-made example. Mask M = [[1, 0], [0, 0]]; layer 1 is 2 x 2 with channels
# [[1, 2], [3, 4]] and [[-3, 5], [6, 7]], so its channel sum (Eq. 6) is [[-2, 7], [9, 11]];
# layer 2 is 1 x 1 with value 4.
#   kernel_size=1 (no growth): D(M, 1) = M -> |-2| = 2; D(M, 2) = mean(M) = 0.25 -> 0.25 * 4 = 1;
#                              TAP = (2 + 1) / 2 = 1.5
#   kernel_size=3: the 3 x 3 max-pool grows M over the whole 2 x 2 -> 2 + 7 + 9 + 11 = 29;
#                  D(M, 2) = 1 -> 4; TAP = (29 + 4) / 2 = 16.5
PROBE = """
import json, sys, torch, tapkit
from tapkit import capture, get_model, tap, target_layers
m = torch.tensor([[[[1., 0], [0, 0]]]])
a1 = torch.tensor([[[[1., 2], [3, 4]], [[-3, 5], [6, 7]]]])
a2 = torch.tensor([[[[4.]]]])
model = get_model("two_layer_cnn", num_classes=10).eval()
layers = list(target_layers("two_layer_cnn"))
with capture(model, layers) as acts:
    logits = model(torch.zeros(1, 1, 28, 28))
print(json.dumps({"torch": torch.__version__, "tapkit": tapkit.__file__, "prefix": sys.prefix,
                  "tap_k1": tap([a1, a2], m, kernel_size=1).item(), "tap_k3": tap([a1, a2], m).item(),
                  "logits": list(logits.shape), "acts": len(acts),
                  "tap_model": tap(acts, torch.zeros(1, 1, 28, 28)).item()}))
"""


def _pip(venv: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    """pip of the fresh environment, compiling no bytecode: torch's thousands of modules are
    fewer files to write and to delete that way; the probe compiles what it imports."""
    return subprocess.run([str(venv / "bin" / "python"), "-m", "pip", *args], capture_output=True,
                          text=True, env=_clean_env(PIP_NO_COMPILE="1"), timeout=timeout)


def _install(venv: Path, *requirements: str) -> subprocess.CompletedProcess:
    """``requirements`` installed into the fresh environment as ``make install`` installs: with
    uv where this environment has it (``make install`` puts it there), else with pip. Both keep a
    requirement that is already satisfied; uv takes ~15 s where pip takes ~35 s for torch, and
    ~10 s against ~30 s for tapkit's requirements (2026-11-29, on the 2-core machine)."""
    uv = Path(sys.executable).with_name("uv")
    if not uv.exists():
        return _pip(venv, "install", *requirements)
    return subprocess.run([str(uv), "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                           *requirements], capture_output=True, text=True,
                          env=_clean_env(UV_NO_CACHE="1"), timeout=900)


def _version(venv: Path, dist: str) -> str | None:
    proc = subprocess.run([str(venv / "bin" / "python"), "-c",
                           f"from importlib.metadata import version; print(version({dist!r}))"],
                          capture_output=True, text=True, env=_clean_env())
    return proc.stdout.strip() if proc.returncode == 0 else None


@pytest.mark.slow
def test_wheel_installs_beside_another_torch_and_keeps_it(wheel, tmp_path):
    import torch
    if torch.__version__.split("+")[0] == OTHER_TORCH:
        pytest.skip(f"this environment already runs torch {OTHER_TORCH}: set TAPKIT_OTHER_TORCH")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=_clean_env(), timeout=300)
    local = _pip(venv, "install", "--dry-run", "--no-index", "--no-deps", f"torch=={OTHER_TORCH}")
    if local.returncode != 0:
        pytest.skip(f"no local wheel of torch {OTHER_TORCH} in pip's find-links (this test does not "
                    f"download a PyTorch): {local.stderr.strip().splitlines()[-1:]}")
    # the user's own PyTorch, with the torchvision made for it
    user = _install(venv, f"torch=={OTHER_TORCH}", f"torchvision=={OTHER_TORCHVISION}")
    assert user.returncode == 0, user.stderr
    before = _version(venv, "torch"), _version(venv, "torchvision")
    assert before[0].startswith(OTHER_TORCH)

    # the wheel installed as a user would: its requirements resolved, nothing pinned by us
    installed = _install(venv, str(wheel))
    assert installed.returncode == 0, installed.stderr
    assert (_version(venv, "torch"), _version(venv, "torchvision")) == before
    assert _version(venv, "tapkit") == PYPROJECT["project"]["version"]
    check = _pip(venv, "check")
    assert check.returncode == 0, check.stdout

    probe = subprocess.run([str(venv / "bin" / "python"), "-c", PROBE], cwd=tmp_path,
                           capture_output=True, text=True, env=_clean_env(), timeout=300)
    assert probe.returncode == 0, probe.stderr
    got = json.loads(probe.stdout.strip().splitlines()[-1])
    assert got["torch"].startswith(OTHER_TORCH)
    assert Path(got["tapkit"]).is_relative_to(Path(got["prefix"]))  # the installed wheel, not ROOT
    assert got["tap_k1"] == pytest.approx(1.5) and got["tap_k3"] == pytest.approx(16.5)
    assert got["logits"] == [1, 10] and got["acts"] == len(target_layers("two_layer_cnn"))
    assert got["tap_model"] == 0.0  # an all-zero mask penalises nothing


# -- npm is checked first -------------------------------------------------------------------------

def test_make_book_checks_npm_before_installing_or_running_notebooks(tmp_path):
    lines = _make_n("book", f"VENV={tmp_path / 'venv'}")
    check = lines.index("python3 scripts/check_book_tools.py")
    later = [i for i, line in enumerate(lines)
             if "-m venv" in line or "pip install" in line or "run_notebook.py" in line]
    assert later and check < min(later)


def _check(path: str, cache: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECK), "--cache", str(cache), *args],
                          capture_output=True, text=True, env={**_clean_env(), "PATH": path},
                          timeout=120)


def test_book_tool_check_without_npm_says_what_to_install(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = _check(str(empty), tmp_path / "cache")
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("check_book_tools: error: make book needs npm")
    assert "npm is not on PATH" in line and "apt-get install nodejs npm" in line
    assert not (tmp_path / "cache").exists()  # nothing fetched, nothing half-written


def test_book_tool_check_with_a_broken_npm_names_the_failure(tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    npm = bin_ / "npm"
    npm.write_text("#!/bin/sh\necho 'npm: node: not found' >&2\nexit 127\n")
    npm.chmod(0o755)
    proc = _check(str(bin_), tmp_path / "cache")
    assert proc.returncode == 2
    assert "`npm --version` failed (npm: node: not found)" in proc.stderr


def test_book_tool_check_needs_no_npm_once_the_package_is_cached(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    tarball = cache / "jupyter-widgets-html-manager-1.0.99.tgz"  # a version with no integrity pin
    tarball.write_bytes(b"not fetched again")
    (cache / "mathjax-3.2.2.tgz").write_bytes(b"cached too")  # vendor_mathjax's pinned version
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = _check(str(empty), cache, "--version", "1.0.99")
    assert proc.returncode == 0, proc.stderr
    assert tarball.read_bytes() == b"not fetched again"


# -- paired notebooks -----------------------------------------------------------------------------

def test_make_notebooks_writes_paired_ipynb_and_leaves_the_py_alone(tmp_path):
    jupytext = Path(sys.executable).parent / "jupytext"
    if not jupytext.exists():
        pytest.skip("jupytext (the book extra) is not installed")
    venv = Path(sys.executable).parent.parent
    (line,) = [l for l in _make_n("-o", f"{venv}/.installed-stamp", "notebooks", f"VENV={venv}")
               if "jupytext" in l]
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    for name in ("method.py", "jupytext.toml"):
        shutil.copy2(ROOT / "notebooks" / name, nbdir / name)
    source = (nbdir / "method.py").read_bytes()
    proc = subprocess.run(line, shell=True, cwd=tmp_path, capture_output=True, text=True,
                          env=_clean_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (nbdir / "method.py").read_bytes() == source  # the tracked notebook is not rewritten
    nb = json.loads((nbdir / "method.ipynb").read_text())
    assert nb["metadata"]["jupytext"]["formats"] == "ipynb,py:percent"
    assert nb["metadata"]["kernelspec"]["name"] == "python3"

    # what pairing means: an edit saved in the .ipynb reaches the .py on sync
    code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    code["source"] = "x = 41 + 1  # edited in Jupyter"
    (nbdir / "method.ipynb").write_text(json.dumps(nb))
    sync = subprocess.run([str(jupytext), "--sync", "notebooks/method.ipynb"], cwd=tmp_path,
                          capture_output=True, text=True, env=_clean_env(), timeout=300)
    assert sync.returncode == 0, sync.stderr
    assert "x = 41 + 1  # edited in Jupyter" in (nbdir / "method.py").read_text()


def test_jupytext_config_pairs_the_notebooks_folder():
    config = pytest.importorskip("jupytext.config")
    found = config.find_jupytext_configuration_file(str(ROOT / "notebooks"))
    assert Path(found) == ROOT / "notebooks" / "jupytext.toml"
    loaded = config.load_jupytext_configuration_file(found)
    for name in ("method.py", "method.ipynb"):  # Jupyter pairs either file with the other
        assert loaded.default_formats(str(ROOT / "notebooks" / name)) == "ipynb,py:percent"

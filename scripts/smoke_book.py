"""Build the whole book with the ``smoke`` profile in a folder of its own, in minutes.

    python scripts/smoke_book.py /tmp/smoke      # -> /tmp/smoke/book/_build/html

Every chapter is executed with papermill (``scripts/run_notebook.py``, profile ``smoke``, results
under ``<folder>/results``) into ``<folder>/executed``, two at a time in the order the Makefile's
dependencies require, then ``scripts/build_book.py --into <folder>/book`` builds the book there.
The MNIST chapters read a subset of the embedded real digits (1,200 training and 500 test images,
written as IDX files under ``<folder>/mnist``), so their one epoch takes seconds.
The browser tests (``tests/test_browser.py``) use it; ``make book`` builds the real one. Exits
non-zero, naming the chapter and its log, when a notebook fails.
"""

from __future__ import annotations

import argparse
import gzip
import logging
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's tapkit, also when another one is installed
# Stages in dependency order (the Makefile's); the chapters of one stage run side by side.
STAGES = [["data", "method", "pneu", "knee", "protocol"],
          ["lambda_search", "overlap", "visual", "extra_architectures", "medical_teachers"],
          ["mnist", "teachers", "medical_distillation"],
          ["distillation", "explorer", "normalisation"],
          ["speed_memory"],
          ["report", "comparisons"]]
SOURCES = {"pneu": "medical_gt", "knee": "medical_gt"}
# beyond the smoke profile, chapter parameters that trim what a page shows (the page lists them)
PARAMETERS = {"pneu": {"experiment": "pneu"}, "knee": {"experiment": "knee"},
              "overlap": {"max_images": "8"}, "visual": {"n_images": "1"},
              "explorer": {"n_images": "4"}, "teachers": {"taus": "[0.01]"},
              "speed_memory": {"models": "['resnet18', 'two_layer_cnn@32x28']"}}
MNIST_CHAPTERS = ("data", "method", "lambda_search", "mnist", "teachers", "distillation",
                  "explorer", "normalisation", "report")
log = logging.getLogger("smoke_book")


def mnist_subset(folder: Path, train: int = 1200, test: int = 500) -> str:
    """A random subset of the embedded MNIST digits as gzipped IDX files; its source string."""
    import numpy as np

    from tapkit.data import mnist_embedded

    rng = np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    x_train, y_train, x_test, y_test = mnist_embedded()
    for stem, x, y, n in (("train", x_train, y_train, train), ("t10k", x_test, y_test, test)):
        keep = np.sort(rng.permutation(len(y))[:n])
        for kind, array in (("images-idx3", x[keep].reshape(-1, 28, 28)),
                            ("labels-idx1", y[keep])):
            header = bytes([0, 0, 8, array.ndim]) + b"".join(int(d).to_bytes(4, "big")
                                                             for d in array.shape)
            with gzip.open(folder / f"{stem}-{kind}-ubyte.gz", "wb") as fh:
                fh.write(header + array.astype(np.uint8).tobytes())
    return f"mnist:{folder}"


def execute(name: str, folder: Path, mnist: str) -> tuple[str, int, float]:
    """One chapter through scripts/run_notebook.py; its output goes to ``logs/<name>.log``."""
    source = SOURCES.get(name, name)
    cmd = [sys.executable, str(ROOT / "scripts" / "run_notebook.py"),
           str(ROOT / "notebooks" / f"{source}.py"), str(folder / "executed" / f"{name}.ipynb"),
           "--profile", "smoke", "-p", "results", str(folder / "results")]
    if name in MNIST_CHAPTERS:
        cmd += ["-p", "source", mnist]
    for key, value in PARAMETERS.get(name, {}).items():
        cmd += ["-p", key, value]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    start = time.time()
    with open(folder / "logs" / f"{name}.log", "w") as fh:
        rc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT).returncode
    return name, rc, time.time() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    folder = args.folder.resolve()
    start = time.time()
    mnist = mnist_subset(folder / "mnist")
    with ThreadPoolExecutor(args.jobs) as pool:
        for stage in STAGES:
            for name, rc, seconds in pool.map(lambda n: execute(n, folder, mnist), stage):
                log.info("%-20s %5.0f s%s", name, seconds, "" if rc == 0 else "  FAILED")
                if rc != 0:
                    log.error("%s failed: see %s", name, folder / "logs" / f"{name}.log")
                    return 1
    log.info("notebooks executed in %.0f s", time.time() - start)
    rc = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_book.py"), "--profile",
                         "smoke", "--executed", str(folder / "executed"), "--results",
                         str(folder / "results"), "--into", str(folder / "book")],
                        cwd=ROOT).returncode
    log.info("smoke book %s in %.0f s", "built" if rc == 0 else "FAILED", time.time() - start)
    return rc


if __name__ == "__main__":
    sys.exit(main())

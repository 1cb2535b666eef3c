"""Build the whole book with the ``smoke`` profile in a folder of its own, in minutes.

    python scripts/smoke_book.py /tmp/smoke      # -> /tmp/smoke/book/_build/html

Every chapter is executed with papermill (``scripts/run_notebook.py``, profile ``smoke``, results
under ``<folder>/results``) into ``<folder>/executed``, two at a time in the order the Makefile's
dependencies require, then ``scripts/build_book.py --into <folder>/book`` builds the book there.
The browser tests (``tests/test_browser.py``) use it; ``make book`` builds the real one. Exits
non-zero, naming the chapter and its log, when a notebook fails.
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Stages in dependency order (the Makefile's); the chapters of one stage run side by side.
STAGES = [["data", "method", "pneu", "knee"],
          ["lambda_search", "overlap", "visual", "extra_architectures"],
          ["mnist", "teachers"],
          ["distillation", "explorer"],
          ["speed_memory"],
          ["report"]]
SOURCES = {"pneu": ("medical_gt", "pneu"), "knee": ("medical_gt", "knee")}
log = logging.getLogger("smoke_book")


def execute(name: str, folder: Path) -> tuple[str, int, float]:
    """One chapter through scripts/run_notebook.py; its output goes to ``logs/<name>.log``."""
    source, experiment = SOURCES.get(name, (name, None))
    cmd = [sys.executable, str(ROOT / "scripts" / "run_notebook.py"),
           str(ROOT / "notebooks" / f"{source}.py"), str(folder / "executed" / f"{name}.ipynb"),
           "--profile", "smoke", "-p", "results", str(folder / "results")]
    if experiment:
        cmd += ["-p", "experiment", experiment]
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
    with ThreadPoolExecutor(args.jobs) as pool:
        for stage in STAGES:
            for name, rc, seconds in pool.map(lambda n: execute(n, folder), stage):
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

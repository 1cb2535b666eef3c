"""A notebook that fails fails the build, and the build's log says why: CI keeps the log, not the
partial notebook (scripts/run_notebook.py)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FAILING = '''# %% tags=["parameters"]
profile = "quick"

# %%
x = 6 * 7

# %%
def check(value):
    raise ValueError(f"the store said {value}")


check(x)
'''


def test_a_failing_cell_fails_the_run_and_its_error_reaches_the_log(tmp_path):
    source = tmp_path / "failing.py"
    source.write_text(FAILING)
    out = tmp_path / "out" / "failing.ipynb"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "run_notebook.py"), str(source),
                           str(out), "--profile", "smoke"], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 1
    assert not out.exists()  # nothing half-written where the book looks
    assert out.with_suffix(".failed.ipynb").exists()
    log = proc.stderr
    assert "FAILED: " in log
    assert "ValueError: the store said 42" in log  # the cell's error, with the value it had
    assert "check(x)" in log and "\x1b[" not in log  # the traceback, without terminal colours

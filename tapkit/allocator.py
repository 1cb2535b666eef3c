"""glibc allocator settings for CPU training and measurement.

By default glibc maps every large block (a batch of activations, a gradient) on its own and
unmaps it when freed, so each training step faults in freshly zeroed pages: on our 2-core VM a
full-MNIST TAP epoch spent 91 of 217 CPU-seconds in the kernel. :func:`reusing_cpu_allocator`
keeps freed memory for the next step instead. :func:`steady_cpu_allocator` does the opposite for
the memory benchmark, so that the peak resident set follows the live tensors.

Each setting is a ``mallopt`` call in this process; :data:`REUSING_ENV` holds the same settings as
glibc's environment variables, for processes started from here (notebook kernels). All are
no-ops without glibc.
"""

from __future__ import annotations

import ctypes
import os
from functools import lru_cache

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_MMAP_MAX = -1, -3, -4
NEVER_TRIM = 2**31 - 1
GLIBC_MMAP_MAX, GLIBC_THRESHOLD = 65536, 128 * 1024  # glibc's defaults

# the settings of reusing_cpu_allocator, for a child process's environment (glibc reads them at
# start; mallopt calls in the child override them)
REUSING_ENV = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(NEVER_TRIM)}


@lru_cache(maxsize=1)
def _libc():
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") else None


def _mallopt(**params: int) -> bool:
    libc = _libc()
    if libc is None:
        return False
    names = {"trim": M_TRIM_THRESHOLD, "threshold": M_MMAP_THRESHOLD, "mmap_max": M_MMAP_MAX}
    return all(libc.mallopt(names[k], v) == 1 for k, v in params.items())


def reusing_cpu_allocator() -> bool:
    """Never map large blocks on their own (``M_MMAP_MAX`` 0) and never trim the heap
    (``M_TRIM_THRESHOLD`` 2 GiB): after the first step every step reuses what the previous one
    freed. Memory freed by a run stays with the process for the next one. Returns whether glibc
    took the settings."""
    return _mallopt(mmap_max=0, trim=NEVER_TRIM)


def steady_cpu_allocator() -> bool:
    """glibc's defaults (mapping on, heap trimmed) with the mmap threshold fixed at 128 KiB, which
    also turns off its dynamic adjustment: every large tensor is mapped on allocation and unmapped
    on free, so the peak resident set follows the live tensors instead of the allocator's history
    (without it the same pair measured twice differed by 25%). Undoes
    :func:`reusing_cpu_allocator` and :data:`REUSING_ENV`."""
    return _mallopt(mmap_max=GLIBC_MMAP_MAX, trim=GLIBC_THRESHOLD, threshold=GLIBC_THRESHOLD)


def release_cpu_memory() -> None:
    """Hand freed memory back to the OS (``malloc_trim``)."""
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def reusing_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with :data:`REUSING_ENV` added, for a child
    process; variables already set in ``base`` win."""
    env = dict(os.environ if base is None else base)
    return {**REUSING_ENV, **env}

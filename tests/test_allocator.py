"""The allocator settings, measured by what they are for: page faults of CPU training steps."""

import multiprocessing
import subprocess
import sys

import pytest

from tapkit import allocator

pytestmark = pytest.mark.skipif(allocator._libc() is None, reason="needs glibc")

# three SGD steps of the paper's two-layer CNN on a batch of 256 digits, after two warm-ups
STEPS = """
import resource, torch
import torch.nn.functional as F
from tapkit.models import build_model

def faults_of_three_steps():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = build_model("two_layer_cnn", 10, 1, image_size=28).model
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x, y = torch.randn(256, 1, 28, 28), torch.randint(0, 10, (256,))
    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    for _ in range(2):
        step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(3):
        step()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
"""
# each step's activations (256 x 32 x 28 x 28 floats, 25 MB each) are fresh pages by default:
# measured ~420,000 faults; reusing freed memory, 0 to ~36,000 (where the heap's layout lands:
# 35,933 once, in a make test run), an order of magnitude fewer
MANY, FEW = 100_000, 60_000


def _faults(setups: tuple[str, ...]) -> list[int]:
    """Faults of three steps with glibc's defaults, then after each setup in turn."""
    namespace: dict = {}
    exec(STEPS, namespace)
    counts = [namespace["faults_of_three_steps"]()]
    for setup in setups:
        getattr(allocator, setup)()
        counts.append(namespace["faults_of_three_steps"]())
    return counts


def _kept_after_free(setups: tuple[str, ...]) -> list[float]:
    """MB of resident memory a freed 64 MB block leaves behind, after each setup in turn."""
    import ctypes

    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    size, kept = 64 << 20, []
    for setup in setups:
        getattr(allocator, setup)()
        before = allocator_rss_mb()
        block = libc.malloc(size)
        ctypes.memset(block, 1, size)  # touch every page
        libc.free(block)
        kept.append(allocator_rss_mb() - before)
    return kept


def allocator_rss_mb() -> float:
    from pathlib import Path

    line = next(ln for ln in Path("/proc/self/status").read_text().splitlines()
                if ln.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def test_reusing_allocator_stops_the_page_faults_of_each_step():
    with multiprocessing.get_context("spawn").Pool(1) as pool:  # a fresh allocator
        default, reusing = pool.apply(_faults, (("reusing_cpu_allocator",),))
    assert default > MANY  # every step faults its tensors afresh
    assert reusing < FEW


def test_steady_allocator_undoes_the_reusing_one_and_returns_freed_memory():
    """The memory pass needs a resident set that follows the live tensors: a freed block must go
    back to the OS (the reusing allocator keeps it for the next step)."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        reusing, steady = pool.apply(_kept_after_free,
                                     (("reusing_cpu_allocator", "steady_cpu_allocator"),))
    assert reusing > 60  # the 64 MB stay mapped and resident, ready for reuse
    assert steady < 4


def test_the_environment_variables_do_what_the_mallopt_calls_do():
    code = STEPS + "\nprint(faults_of_three_steps())"
    out = subprocess.run([sys.executable, "-c", code], env=allocator.reusing_env(),
                         capture_output=True, text=True, check=True).stdout
    assert int(out) < FEW
    assert allocator.reusing_env({"MALLOC_MMAP_MAX_": "7"})["MALLOC_MMAP_MAX_"] == "7"

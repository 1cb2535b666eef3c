import os
from pathlib import Path

import pytest
import torch

from tapkit import allocator

# make test runs two pytest-xdist workers side by side on the 2-core machine: one thread each
# (two two-thread workers oversubscribe the cores); a lone pytest process uses both
THREADS = 1 if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1 else 2

# The allocator every training run sets (tapkit.experiments.run.train_run) from the start of the
# session, not from whichever test first trains: a test that steps a model itself (every model
# with every method, VGG-16's 0.5 GB of weights and gradients) otherwise faults in fresh pages at
# each step (measured beside a build, one thread: VGG-16's one step with every method 29.9 and
# 28.3 s -> 26.4 and 21.0 s). mallopt, not the environment: the processes the tests spawn for a
# fresh allocator get glibc's defaults
allocator.reusing_cpu_allocator()


@pytest.fixture(autouse=True)
def _threads():
    torch.set_num_threads(THREADS)
    yield


# Files whose tests share a module- or session-scoped fixture (the smoke book of the browser
# tests, a store filled once) run whole on one xdist worker; every other test is scheduled on its
# own, so that the two workers of `make test` end together. xdist's own --dist loadgroup cannot
# do it under pytest 9 (it renames items through Node._nodeid, which pytest 9 no longer reads),
# hence this scheduler. The browser tests go first (their smoke book is the longest piece of
# work), then the other whole files, so that the single tests fill the end: on the built book
# (TAPKIT_NO_BUILD=1) the suite took 271 s instead of 297 s of wall time.
SHARED_FIXTURE_FILES = ("test_browser.py", "test_medical.py", "test_packaging.py",
                        "test_sweep.py")


def _scope(nodeid: str) -> str:
    """The unit of work a worker takes: the whole file for a file of :data:`SHARED_FIXTURE_FILES`,
    else the test itself."""
    path = nodeid.split("::", 1)[0]
    return path if Path(path).name in SHARED_FIXTURE_FILES else nodeid


def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope(nodeid)

    return SharedFixtureScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: (item.path.name != "test_browser.py",  # stable: order kept
                                 item.path.name not in SHARED_FIXTURE_FILES))

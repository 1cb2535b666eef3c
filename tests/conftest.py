import os

import pytest
import torch

# make test runs two pytest-xdist workers side by side on the 2-core machine: one thread each
# (two two-thread workers oversubscribe the cores); a lone pytest process uses both
THREADS = 1 if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1 else 2


@pytest.fixture(autouse=True)
def _threads():
    torch.set_num_threads(THREADS)
    yield

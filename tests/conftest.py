import pytest
import torch


@pytest.fixture(autouse=True)
def _threads():
    torch.set_num_threads(2)
    yield

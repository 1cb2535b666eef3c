"""The optimiser a run trains with: Adam fused where PyTorch has the kernel (a third of a
ResNet-18 step at 32 px went to Adam's per-tensor loop on a CPU), SGD as configured. That a CPU
run with it still repeats bit for bit and resumes is tests/test_training.py's
test_cpu_training_repeats_bit_for_bit_and_resumes (the default config trains with Adam)."""

import torch
from torch import nn

from tapkit.config import TrainConfig
from tapkit.fit import make_optimizer


def test_adam_is_fused_on_a_cpu():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = make_optimizer(model, TrainConfig(optimizer="adam", lr=1e-3))
    assert isinstance(opt, torch.optim.Adam) and opt.defaults["fused"] is True
    assert opt.defaults["lr"] == 1e-3


def test_fused_adam_takes_the_same_step_as_the_loop_up_to_rounding():
    torch.manual_seed(0)
    a = nn.Linear(5, 3)
    b = nn.Linear(5, 3)
    b.load_state_dict(a.state_dict())
    x = torch.randn(8, 5)
    fused = make_optimizer(a, TrainConfig(optimizer="adam", lr=1e-2))
    loop = torch.optim.Adam(b.parameters(), lr=1e-2, foreach=False)
    for _ in range(3):
        for model, opt in ((a, fused), (b, loop)):
            opt.zero_grad()
            model(x).square().mean().backward()
            opt.step()
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)
        assert not torch.equal(p, a.weight.new_zeros(p.shape))


def test_sgd_keeps_its_momentum():
    model = nn.Linear(3, 2)
    opt = make_optimizer(model, TrainConfig(optimizer="sgd", lr=0.1))
    assert isinstance(opt, torch.optim.SGD) and opt.defaults["momentum"] == TrainConfig().momentum

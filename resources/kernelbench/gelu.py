# A KernelBench level-1-style problem written for KernelLoop (not copied from KernelBench):
# elementwise GELU (the exact, erf form) over a float32 matrix. Memory-bound: one read, one write.
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = gelu(x) = x * 0.5 * (1 + erf(x / sqrt(2)))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x)


batch_size = 4096
dim = 8192


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []  # no parameters

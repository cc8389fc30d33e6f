# A KernelBench level-1-style problem written for KernelLoop (not copied from KernelBench):
# Swish (SiLU) elementwise over a float32 matrix. Memory-bound: one read, one write.
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = x * sigmoid(x)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


batch_size = 4096
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []

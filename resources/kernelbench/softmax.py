# A KernelBench level-1-style problem written for KernelLoop (not copied from KernelBench):
# softmax over each row of a float32 matrix. Memory-bound: one read and one write of the matrix,
# with a max and a sum per row in between.
import torch
import torch.nn as nn


class Model(nn.Module):
    """y[i, :] = exp(x[i, :] - max(x[i, :])) / sum(exp(x[i, :] - max(x[i, :])))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 4096
dim = 8192


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []  # no parameters

# A KernelBench level-1-style problem written for KernelLoop (not copied from KernelBench):
# log-softmax over the last dimension of a float32 matrix. Memory-bound: one read, one write.
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = x - logsumexp(x, dim=1)."""

    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=self.dim)


batch_size = 4096
dim = 8192


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [1]

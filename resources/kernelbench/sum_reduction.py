# A KernelBench level-1-style problem written for KernelLoop (not copied from KernelBench):
# sum over the middle dimension of a 3-D float32 tensor, keeping the dimension.
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = sum(x, dim=1, keepdim=True)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 64
dim1 = 1024
dim2 = 2048
reduce_dim = 1


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]

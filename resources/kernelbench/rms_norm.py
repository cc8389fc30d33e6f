# A KernelBench level-1-style problem written for KernelLoop (not copied from KernelBench):
# RMSNorm over the last dimension with a learned scale, as in LLM decoders. Memory-bound: one read
# of x, one write of y, and the (small) weight vector.
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = x / sqrt(mean(x^2 over the last dimension) + eps) * weight."""

    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + self.eps)
        return x / rms * self.weight


tokens = 8192
hidden = 4096
eps = 1e-6


def get_inputs():
    x = torch.randn(tokens, hidden)
    return [x]


def get_init_inputs():
    return [hidden, eps]

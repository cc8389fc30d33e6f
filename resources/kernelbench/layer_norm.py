# A KernelBench level-1-style problem written for KernelLoop (not copied from KernelBench):
# LayerNorm over the last dimension with a learned scale and shift. Memory-bound.
import torch
import torch.nn as nn


class Model(nn.Module):
    """y = layer_norm(x) * weight + bias over the last dimension."""

    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


tokens = 8192
hidden = 4096


def get_inputs():
    x = torch.randn(tokens, hidden)
    return [x]


def get_init_inputs():
    return [hidden]

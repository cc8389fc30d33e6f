# A KernelBench level-1-style problem written for KernelLoop (not copied from KernelBench):
# the tanh approximation of GELU used by GPT-2 / minGPT, elementwise over a float32 matrix.
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))
        return 0.5 * x * (1.0 + torch.tanh(inner))


batch_size = 4096
dim = 8192


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []

import math
import torch
import torch.nn as nn

class Model(nn.Module):
    """Attention written out: softmax(Q K^T / sqrt(d)) V, as KernelBench's level-3 attention blocks do."""
    def __init__(self):
        super().__init__()
    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        return torch.matmul(torch.softmax(scores, dim=-1), v)

batch_size = 4
heads = 8
seq_len = 512
head_dim = 64

def get_inputs():
    shape = (batch_size, heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]

def get_init_inputs():
    return []

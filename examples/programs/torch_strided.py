"""A strided read in PyTorch: every 8th float of each row copied into a contiguous tensor, in the NVTX
range "strided"."""

import torch

n = 1 << 24
x = torch.empty((n // 8, 64), device="cuda")
torch.cuda.nvtx.range_push("strided")
y = x[:, ::8].contiguous()  # each lane reads a float 32 bytes from its neighbour's
torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()

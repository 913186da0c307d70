"""Two vectors added by PyTorch, the launch to gate marked with an NVTX range."""

import torch

n = 1 << 24
x = torch.ones(n, device="cuda")
y = torch.full((n,), 2.0, device="cuda")
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("add")
z = x + y
torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
assert z[0].item() == 3.0

"""An elementwise add of two 2^24-float tensors in PyTorch, inside the NVTX range "add"."""

import torch

n = 1 << 24
a = torch.empty(n, device="cuda")  # empty: no fill kernel launches before the add
b = torch.empty(n, device="cuda")
torch.cuda.nvtx.range_push("add")
c = a + b
torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()

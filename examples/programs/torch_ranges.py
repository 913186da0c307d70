"""Four PyTorch operations on 2^24-float tensors, each in an NVTX range of its own: add, mul, scale
and relu (each an elementwise kernel; a copy would be a cudaMemcpy, no kernel). One command for four program cases (ranges.yaml), profiled in one ncu process."""

import torch

n = 1 << 24
a = torch.empty(n, device="cuda")  # empty: no fill kernel launches before the ranges
b = torch.empty(n, device="cuda")
out = torch.empty(n, device="cuda")
for name, operation in (
    ("add", lambda: torch.add(a, b, out=out)),
    ("mul", lambda: torch.mul(a, b, out=out)),
    ("scale", lambda: torch.mul(a, 2.0, out=out)),
    ("relu", lambda: torch.relu(a)),
):
    torch.cuda.nvtx.range_push(name)
    operation()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()

"""A half-precision matmul of two 4096 x 4096 matrices in PyTorch (cuBLAS chooses the kernel), inside
the NVTX range "matmul"."""

import torch

n = 4096
a = torch.empty(n, n, device="cuda", dtype=torch.float16)  # empty: no fill kernel before the matmul
b = torch.empty(n, n, device="cuda", dtype=torch.float16)
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("matmul")
c = a @ b
torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()

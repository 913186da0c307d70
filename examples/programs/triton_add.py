"""A Triton add kernel of its own over two 2^24-float tensors."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out + offsets, tl.load(x + offsets, mask=mask) + tl.load(y + offsets, mask=mask), mask=mask)


n = 1 << 24
a = torch.empty(n, device="cuda")
b = torch.empty(n, device="cuda")
c = torch.empty(n, device="cuda")
add_kernel[(triton.cdiv(n, 1024),)](a, b, c, n, BLOCK=1024)
torch.cuda.synchronize()

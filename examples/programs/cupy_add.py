"""A CuPy RawKernel: one float of each array per thread."""

import cupy

source = r"""
extern "C" __global__ void cupy_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""
n = 1 << 24
kernel = cupy.RawKernel(source, "cupy_add")
a = cupy.empty(n, dtype=cupy.float32)
b = cupy.empty(n, dtype=cupy.float32)
c = cupy.empty(n, dtype=cupy.float32)
kernel(((n + 255) // 256,), (256,), (a, b, c, cupy.int32(n)))
cupy.cuda.Device().synchronize()

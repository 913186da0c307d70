// A kernel shipped in a shared library, with the C entry point the library exports.
#include <cuda_runtime.h>

namespace ops {
__global__ void scale(float* data, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
}  // namespace ops

extern "C" cudaError_t ops_scale(float* data, float factor, int n, cudaStream_t stream) {
    ops::scale<<<(n + 255) / 256, 256, 0, stream>>>(data, factor, n);
    return cudaGetLastError();
}

// The host side of the block sum: the template is instantiated where it is launched.
#include <cuda_runtime.h>

#include "block_sum.cuh"

void launch_block_sum(const float* in, float* out, int n, cudaStream_t stream) {
    constexpr int block = 256;
    block_sum<block><<<(n + block - 1) / block, block, 0, stream>>>(in, out, n);
}

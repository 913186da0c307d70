// A block-wide sum over shared memory, templated on the block size as reduction kernels usually are.
#pragma once

template <int BLOCK>
__global__ void block_sum(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float partial[BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    partial[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

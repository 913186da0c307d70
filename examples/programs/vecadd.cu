// A vector add, built with nvcc into an executable: one float of each array per thread.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void vecadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main() {
    const int n = 1 << 24;
    float *a, *b, *c;
    if (cudaMalloc(&a, n * sizeof(float)) || cudaMalloc(&b, n * sizeof(float)) || cudaMalloc(&c, n * sizeof(float))) {
        std::fprintf(stderr, "cudaMalloc failed\n");
        return 1;
    }
    vecadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
    cudaError_t status = cudaDeviceSynchronize();
    if (status != cudaSuccess) {
        std::fprintf(stderr, "vecadd: %s\n", cudaGetErrorString(status));
        return 1;
    }
    return 0;
}

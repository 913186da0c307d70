// A whole program as CUDA programs are published: host code, host headers and the kernels in one
// file, compiled by nvcc as it is. examples/whole-program/transpose.yaml checks its kernels.
//
//   nvcc -arch=sm_90 -o transpose transpose.cu && ./transpose
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

constexpr int TILE = 32;
constexpr int ROWS = 8;  // a block is TILE x ROWS threads; each thread moves TILE / ROWS elements

// Reads rows, writes columns: the stores of a warp land TILE * 4 bytes apart, one sector each.
__global__ void transposeNaive(float* out, const float* in, int width, int height) {
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        out[x * height + (y + j)] = in[(y + j) * width + x];
    }
}

// Through a padded shared-memory tile: reads and writes are both whole rows.
__global__ void transposeTiled(float* out, const float* in, int width, int height) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

// A copy with a compile-time stride, instantiated for float below.
template <typename T>
__global__ void stridedCopy(T* out, const T* in, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i * stride];
}

template __global__ void stridedCopy<float>(float*, const float*, int);

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t status = (call);                                                     \
        if (status != cudaSuccess) {                                                     \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(status)); \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

int main() {
    const int n = 1024;
    const size_t bytes = size_t(n) * n * sizeof(float);
    float* host = static_cast<float*>(malloc(bytes));
    for (int i = 0; i < n * n; ++i) host[i] = float(i);
    float *in, *out;
    CHECK(cudaMalloc(&in, bytes));
    CHECK(cudaMalloc(&out, bytes));
    CHECK(cudaMemcpy(in, host, bytes, cudaMemcpyHostToDevice));
    dim3 grid(n / TILE, n / TILE), block(TILE, ROWS);
    transposeTiled<<<grid, block>>>(out, in, n, n);
    CHECK(cudaMemcpy(host, out, bytes, cudaMemcpyDeviceToHost));
    assert(host[1] == float(n));  // out[0][1] is in[1][0]
    printf("transposed %d x %d\n", n, n);
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    free(host);
    return 0;
}

// Vectorized (float4) against scalar (float) copies: kernels for expectations/vectorization.yaml.
//
// Each kernel is the code a teaching document shows, verbatim apart from extern "C" (so that it can be
// launched by name). Every kernel stores what it loads, so the compiler cannot remove the loads.
//
// Documents:
//   000_41d4bba01cd90206.txt  "Why did one changed index line drop kernel throughput tenfold?"
//                             (section 3.4 and Lab 2, vectorized_load_benchmark.cu)
//   002_b48240abed923777.txt  memory-optimisation notes ("AoS, SoA and vectorization")
//   003_a7bdf3f6b43d9421.txt  ECE408 lecture 1 notes (vector add, optimisation 2: float4)

// ---------------------------------------------------------------------------------------------------
// 000, section 3.4: the two copies of the text, without __restrict__ and with dst first.

// Scalar load: each thread moves 4 bytes, a warp 128 bytes, with one "LDG.32" instruction.
extern "C" __global__ void copy_scalar(float* dst, const float* src, int n) {
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx < n) {
        dst[idx] = src[idx];
    }
}

// Vectorized load: each thread moves 16 bytes, a warp 512 bytes at once.
extern "C" __global__ void copy_vectorized(float4* dst, const float4* src, int n_vec) {
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx < n_vec) {
        dst[idx] = src[idx]; // compiles directly to LDG.128 / STG.128
    }
}

// ---------------------------------------------------------------------------------------------------
// 000, section 7, Lab 2 (vectorized_load_benchmark.cu). N = 256 Mi floats (1 GiB), 256 threads per
// block; the scalar copy runs N / 256 blocks, the vector copy N / 4 / 256.

// Scalar version: each thread reads and writes one float (4 bytes).
extern "C" __global__ void scalar_copy_kernel(const float* __restrict__ src, float* __restrict__ dst, int n) {
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx < n) {
        dst[idx] = src[idx];
    }
}

// Vectorized version: each thread reads and writes one float4 (16 bytes).
extern "C" __global__ void vectorized_copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, int n_vec) {
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx < n_vec) {
        dst[idx] = src[idx];
    }
}

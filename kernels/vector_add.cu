// Vector add, grid-stride loops and kernel fusion: kernels for expectations/vector_add.yaml.
//
// Each kernel is the code a teaching document shows (verbatim where the document gives code), wrapped
// in an extern "C" entry point so that it can be launched by name. Every kernel writes its result to
// global memory.
//
// Documents:
//   003_a7bdf3f6b43d9421.txt  ECE408 lecture 1 notes, example 3 (vecadd.cu) and its analysis
//   002_b48240abed923777.txt  memory-optimisation notes ("Bandwidth calculation": vector add, 12N bytes)

// ---------------------------------------------------------------------------------------------------
// 003, example 3 (vecadd.cu), verbatim apart from extern "C". BLOCK_SIZE 256.

// Version 1: one thread per element (the simplest). Launch: (n + 255) / 256 blocks of 256.
extern "C" __global__ void vecAddKernel(const float *A, const float *B, float *C, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {                       // bounds check: rounding the grid up always leaves extra threads
        C[i] = A[i] + B[i];
    }
}

// Version 2: grid-stride loop (a fixed number of threads, each handling several elements). Launch:
// SMs x resident blocks per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor) blocks of 256.
extern "C" __global__ void vecAddKernelGridStride(const float *A, const float *B, float *C, int n)
{
    int stride = gridDim.x * blockDim.x;            // all the threads of the grid
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        C[i] = A[i] + B[i];
    }
}

// ---------------------------------------------------------------------------------------------------
// 003, example 3, optimisation 1 (kernel fusion): "merge C = A + B and the following D = C * s into
// D = (A + B) * s: traffic falls from 5N x 4 B to 3N x 4 B". The document describes the kernels in one
// sentence; these are written in the style of version 1. Unfused: vecAddKernel, then vecScaleKernel.
extern "C" __global__ void vecScaleKernel(const float *C, float *D, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        D[i] = C[i] * s;
    }
}

extern "C" __global__ void vecAddScaleKernel(const float *A, const float *B, float *D, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        D[i] = (A[i] + B[i]) * s;
    }
}

// 003 Q3 (example E7): 1 float read, 1 float written, 4 FLOP (two FMAs) per element: AI = 4 / 8 = 0.5.
extern "C" __global__ void aiHalfKernel(const float *in, float *out, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = in[i];
        x = fmaf(x, a, b);
        x = fmaf(x, a, b);
        out[i] = x;
    }
}

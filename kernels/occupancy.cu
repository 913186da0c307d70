// Occupancy, launch geometry, latency hiding and Little's law: kernels for expectations/occupancy.yaml.
//
// Each kernel is the code a teaching document shows (verbatim where the document gives code), wrapped
// in an extern "C" entry point or a template so that it can be launched by name. Every kernel writes a
// result to global memory, so the compiler cannot remove the work being measured.
//
// Occupancy is decided at launch, from the block size, the registers per thread and the shared memory
// per block; the kernels' bodies matter only through their register count and their shared memory.
//
// Documents:
//   000_41d4bba01cd90206.txt  "Why did one changed index line drop kernel throughput tenfold?"
//                             (1.1 launch geometry, 5.1-5.4 occupancy and Little's law, Lab 2
//                             vectorized_load_benchmark.cu, appendix A questions 3 and 4, 8.2 item 8)
//   003_a7bdf3f6b43d9421.txt  ECE408 lecture 1 notes (SM and SIMT, latency hiding and occupancy,
//                             Lab 0 deviceQuery.cu with its occupancy probe kernel)
//   004_e4370fce40a887a3.txt  FlashAttention book, chapter 1 (1.3.1: warps, schedulers, zero-cost switch)

// ---------------------------------------------------------------------------------------------------
// 003, Lab 0 (deviceQuery.cu): the document's occupancy probe kernel, verbatim apart from extern "C".
// deviceQuery.cu never launches it; it only asks the occupancy API about it for block sizes 64, 128,
// 256, 512 and 1024. The expectation file launches it with each block size (and 32), one thread per
// element.

// The smallest kernel for the occupancy query: no meaningful work, only its real register and shared
// memory use.
extern "C" __global__ void occupancyProbeKernel(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * 2.0f + 1.0f;
    }
}

// ---------------------------------------------------------------------------------------------------
// 000, section 1.1: `dim3 grid(4, 2, 1); dim3 block(256, 1, 1); my_kernel<<<grid, block>>>(d_in, d_out);`
// The document gives only the launch; the body copies one float per thread, with a linear index over
// the 2-D grid so that the 8 blocks write 8 different slices of d_out (2048 floats).
extern "C" __global__ void my_kernel(const float* d_in, float* d_out) {
    int block = blockIdx.y * gridDim.x + blockIdx.x;
    int i = block * blockDim.x + threadIdx.x;
    d_out[i] = d_in[i] + 1.0f;
}

// ---------------------------------------------------------------------------------------------------
// 000, section 5.3 and 5.4; 003 "SM and SIMT" (40 registers); appendix A question 3 (registers and
// 256-thread blocks): a kernel whose register count is chosen. The documents give no code for it: this
// is the body of 000's Lab 4 (occupancy_spill_benchmark.cu) with R independent live floats instead of
// 16, so that ptxas needs about R + 6 registers. The expectation file pins the count with
// max_registers (--maxrregcount) where the free count is not the one wanted.
// Launch: blocks of 256 threads (other sizes where a claim says so), one float of d_out per thread.
template <int R>
__global__ void registers_live(float* d_out, int iterations) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    float r[R];
    #pragma unroll
    for (int i = 0; i < R; ++i) {
        r[i] = (float)tid + i;
    }

    #pragma unroll 1
    for (int iter = 0; iter < iterations; ++iter) {
        #pragma unroll
        for (int i = 0; i < R; ++i) {
            r[i] = r[i] * 1.001f + 0.002f;
        }
    }

    float sum = 0.0f;
    #pragma unroll
    for (int i = 0; i < R; ++i) sum += r[i];
    d_out[tid] = sum;
}

// ---------------------------------------------------------------------------------------------------
// 000, section 5.3; 003 "SM and SIMT" and "common pitfalls": 48 KB of static shared memory per block,
// the largest static allocation (more needs dynamic shared memory and an opt-in). Each thread stores
// one float into the tile and reads back its neighbour's after the barrier, so the tile is really
// used. Launch with blockDim.x = 256: the 256 threads touch words 0-255 of the 12288.
extern "C" __global__ void smem_48k_per_block(const float* in, float* out) {
    __shared__ float tile[12288];  // 48 KB = 49152 bytes
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = tile[(threadIdx.x + 1) % blockDim.x];
}

// ---------------------------------------------------------------------------------------------------
// 000, section 7, Lab 2 (vectorized_load_benchmark.cu), verbatim apart from extern "C": the copies the
// Little's-law claims of 5.2 and appendix A question 4 are about (float4: 512 bytes in flight per warp
// instruction, float: 128). The expectation file caps the warps per SM with dynamic shared memory
// (48 KB per block: 4 blocks per SM on an H100/H200) and the block size.

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

// ---------------------------------------------------------------------------------------------------
// 004, section 1.3.1 (4 warp schedulers, one instruction per cycle each; zero-cost warp switch) and
// 000, section 5.1 (zero-overhead switch between warps). The documents give no code: each thread runs
// one dependent FMA chain, so a warp can issue at most one instruction every FMA latency (about 4
// cycles); only other warps can fill the cycles between. The chain is unrolled 16 times so that the
// loop's own instructions are few.
extern "C" __global__ void one_dependent_chain(float* out, int iterations) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    float x = (float)tid;
    #pragma unroll 1
    for (int iter = 0; iter < iterations; ++iter) {
        #pragma unroll
        for (int i = 0; i < 16; ++i) {
            x = x * 1.0001f + 0.5f;
        }
    }
    out[tid] = x;
}

// Sum reductions: kernels for expectations/reduction.yaml.
//
// Documents:
//   004_e4370fce40a887a3.txt  FlashAttention book, chapter 1, 1.4 (reduce_naive, reduce_v2) and the
//                             chapter's exercises (1.6)
//   003_a7bdf3f6b43d9421.txt  ECE408 lecture 1 notes (arithmetic-intensity table: reduction)

// ---------------------------------------------------------------------------------------------------
// 004, 1.4.2, verbatim apart from extern "C": every thread adds its element to one global result.
extern "C" __global__ void reduce_naive(const float* arr, float* result, int N) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < N) {
        atomicAdd(result, arr[tid]);
    }
}

// ---------------------------------------------------------------------------------------------------
// 004, 1.4.2, verbatim: one partial sum per block, reduced in shared memory. The second launch that
// reduces block_sums to one number is not profiled; the expectation file sums block_sums on the host.
template <int BLOCK_SIZE>
__global__ void reduce_v2(const float* arr, float* block_sums, int N) {
    __shared__ float smem[BLOCK_SIZE];
    int tid = threadIdx.x;
    int gid = blockIdx.x * blockDim.x + tid;

    // 1. each thread reads one element into SMEM
    smem[tid] = (gid < N) ? arr[gid] : 0.0f;
    __syncthreads();

    // 2. tree reduction in the block: every step halves the active threads
    for (int s = BLOCK_SIZE / 2; s > 0; s >>= 1) {
        if (tid < s) {
            smem[tid] += smem[tid + s];
        }
        __syncthreads();
    }

    // 3. each block writes one partial sum
    if (tid == 0) {
        block_sums[blockIdx.x] = smem[0];
    }
}

// ---------------------------------------------------------------------------------------------------
// 004, 1.4.2 looks ahead: chapter 5 "uses warp shuffle, cluster reduce and vectorized loads to push
// the reduce close to the HBM peak (about 90%)". Chapter 5 is not part of this document, so this is
// not the book's kernel but the usual form of those techniques: a grid of one wave reads float4s in a
// grid-stride loop with four loads in flight per thread, reduces in registers, then across the warp
// with shuffles, then across the block's warps; one partial sum per block. n4 = number of float4s.
__device__ __forceinline__ float warp_sum(float v) {
    #pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__device__ __forceinline__ float sum4(float4 v) { return (v.x + v.y) + (v.z + v.w); }

extern "C" __global__ void reduce_vec4_shuffle(const float4* __restrict__ arr, float* __restrict__ block_sums, int n4) {
    int stride = gridDim.x * blockDim.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        float4 a = arr[i], b = arr[i + stride], c = arr[i + 2 * stride], d = arr[i + 3 * stride];
        sum += (sum4(a) + sum4(b)) + (sum4(c) + sum4(d));
    }
    for (; i < n4; i += stride) sum += sum4(arr[i]);

    __shared__ float warp_sums[32];
    sum = warp_sum(sum);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (threadIdx.x < 32) {
        sum = (threadIdx.x < blockDim.x / 32) ? warp_sums[threadIdx.x] : 0.0f;
        sum = warp_sum(sum);
        if (threadIdx.x == 0) block_sums[blockIdx.x] = sum;
    }
}

// Asynchronous global-to-shared copies: kernels for expectations/async_copy.yaml.
//
// The documents name the mechanisms without code:
//   002_b48240abed923777.txt  "Asynchronous copies": from compute capability 8.0 a hardware-accelerated
//                             global -> shared memcpy_async path exists; from 9.0 TMA extends it to
//                             larger, multi-dimensional bulk copies (through Cooperative Groups,
//                             cuda::pipeline / cuda::barrier or lower-level APIs).
//   000_41d4bba01cd90206.txt  6.1 (Ampere cp.async: data goes from L2/global straight to shared memory,
//                             bypassing the registers) and 6.2 (Hopper TMA: one thread issues one
//                             instruction for a 1D-5D tensor tile).
//
// So the kernels are the smallest programs that use each path through each API the document names,
// all with the same job: every block copies one 4 KiB tile (256 float4) of `in` into shared memory,
// waits for it, and each thread then sums a float4 that another thread copied
// (tile[255 - threadIdx.x]), so the result is right only if the whole tile arrived.
//   tile_sum_sync      the classic path: LDG into a register, STS into shared memory, __syncthreads()
//   tile_sum_cg        cooperative_groups::memcpy_async + cg::wait (Cooperative Groups)
//   tile_sum_pipeline  __pipeline_memcpy_async + __pipeline_commit / __pipeline_wait_prior (the
//                      lower-level primitives of cuda_pipeline.h)
//   tile_sum_barrier   cuda::memcpy_async with a cuda::barrier in shared memory (libcu++)
//   tile_sum_bulk      cp.async.bulk with an mbarrier, in PTX: one thread copies the whole tile, the
//                      mbarrier counts the bytes in, every thread waits on it
//   tile_sum_tensor    cp.async.bulk.tensor.2d (the TMA's tensor copy), in PTX. Its tensor map must be
//                      encoded on the host (cuTensorMapEncodeTiled), which this project's launcher
//                      cannot do: the kernel is compiled and its SASS checked, and it must never be
//                      launched.
// The PTX TMA kernels need sm_90; built for an older GPU their bodies are empty.

#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
#include <cuda_pipeline.h>

namespace cg = cooperative_groups;

#define TILE_FLOAT4 256  // 256 float4 = 1024 floats = 4 KiB per block

extern "C" __global__ void tile_sum_sync(const float4* __restrict__ in, float* __restrict__ out) {
    __shared__ float4 tile[TILE_FLOAT4];
    size_t base = (size_t)blockIdx.x * TILE_FLOAT4;
    tile[threadIdx.x] = in[base + threadIdx.x];
    __syncthreads();
    float4 v = tile[TILE_FLOAT4 - 1 - threadIdx.x];
    out[base + threadIdx.x] = v.x + v.y + v.z + v.w;
}

extern "C" __global__ void tile_sum_cg(const float4* __restrict__ in, float* __restrict__ out) {
    __shared__ alignas(16) float4 tile[TILE_FLOAT4];
    cg::thread_block block = cg::this_thread_block();
    size_t base = (size_t)blockIdx.x * TILE_FLOAT4;
    cg::memcpy_async(block, tile, in + base, sizeof(tile));
    cg::wait(block);
    float4 v = tile[TILE_FLOAT4 - 1 - threadIdx.x];
    out[base + threadIdx.x] = v.x + v.y + v.z + v.w;
}

extern "C" __global__ void tile_sum_pipeline(const float4* __restrict__ in, float* __restrict__ out) {
    __shared__ float4 tile[TILE_FLOAT4];
    size_t base = (size_t)blockIdx.x * TILE_FLOAT4;
    __pipeline_memcpy_async(&tile[threadIdx.x], &in[base + threadIdx.x], sizeof(float4));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    float4 v = tile[TILE_FLOAT4 - 1 - threadIdx.x];
    out[base + threadIdx.x] = v.x + v.y + v.z + v.w;
}

extern "C" __global__ void tile_sum_barrier(const float4* __restrict__ in, float* __restrict__ out) {
    __shared__ alignas(128) float4 tile[TILE_FLOAT4];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> arrived;
    cg::thread_block block = cg::this_thread_block();
    if (block.thread_rank() == 0) init(&arrived, block.size());
    block.sync();
    size_t base = (size_t)blockIdx.x * TILE_FLOAT4;
    cuda::memcpy_async(block, tile, in + base, cuda::aligned_size_t<16>(sizeof(tile)), arrived);
    arrived.arrive_and_wait();
    float4 v = tile[TILE_FLOAT4 - 1 - threadIdx.x];
    out[base + threadIdx.x] = v.x + v.y + v.z + v.w;
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define HAS_TMA 1
#endif

#ifdef HAS_TMA
__device__ __forceinline__ void mbarrier_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" : : "r"(bar), "r"(count) : "memory");
    // make the initialised barrier visible to the asynchronous (TMA) proxy
    asm volatile("fence.mbarrier_init.release.cluster;" : : : "memory");
}

__device__ __forceinline__ void mbarrier_expect_bytes(unsigned bar, unsigned bytes) {
    unsigned long long state;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(state)
                 : "r"(bar), "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void mbarrier_wait(unsigned bar, unsigned phase) {
    unsigned done = 0;
    while (!done) {
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
            : "=r"(done)
            : "r"(bar), "r"(phase)
            : "memory");
    }
}
#endif

extern "C" __global__ void tile_sum_bulk(const float4* __restrict__ in, float* __restrict__ out) {
#ifdef HAS_TMA
    __shared__ alignas(128) float4 tile[TILE_FLOAT4];
    __shared__ alignas(8) unsigned long long arrived;
    size_t base = (size_t)blockIdx.x * TILE_FLOAT4;
    unsigned bar = (unsigned)__cvta_generic_to_shared(&arrived);
    unsigned dst = (unsigned)__cvta_generic_to_shared(tile);
    if (threadIdx.x == 0) mbarrier_init(bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        mbarrier_expect_bytes(bar, sizeof(tile));
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
            :
            : "r"(dst), "l"(in + base), "r"((unsigned)sizeof(tile)), "r"(bar)
            : "memory");
    }
    mbarrier_wait(bar, 0);
    float4 v = tile[TILE_FLOAT4 - 1 - threadIdx.x];
    out[base + threadIdx.x] = v.x + v.y + v.z + v.w;
#endif
}

// `tensor_map` points to a CUtensorMap (128 bytes, 64-byte aligned) describing `in` as a 2D tensor of
// floats with a 32 x 32 box. Never launched (see above).
extern "C" __global__ void tile_sum_tensor(const void* tensor_map, float* __restrict__ out) {
#ifdef HAS_TMA
    __shared__ alignas(128) float tile[32 * 32];
    __shared__ alignas(8) unsigned long long arrived;
    unsigned bar = (unsigned)__cvta_generic_to_shared(&arrived);
    unsigned dst = (unsigned)__cvta_generic_to_shared(tile);
    if (threadIdx.x == 0) mbarrier_init(bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        mbarrier_expect_bytes(bar, sizeof(tile));
        int x = 32 * blockIdx.x, y = 32 * blockIdx.y;
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
            :
            : "r"(dst), "l"(tensor_map), "r"(x), "r"(y), "r"(bar)
            : "memory");
    }
    mbarrier_wait(bar, 0);
    size_t i = ((size_t)blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
    out[i] = tile[1023 - threadIdx.x];
#endif
}

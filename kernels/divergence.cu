// Warp divergence, reconvergence and predication: kernels for expectations/divergence.yaml.
//
// Each kernel is the code a teaching document shows (verbatim where the document gives code), wrapped
// in an extern "C" entry point so that it can be launched by name. Every kernel writes its result to
// global memory, so the compiler cannot remove the work being measured.
//
// The branch bodies are __device__ __noinline__ functions, as the documents intend: 004 puts work_a
// and work_b in another translation unit (-rdc=true) so that the compiler cannot see them and turn
// the branch into predication. A __noinline__ function in the same source gives the same SASS shape
// (the call inside a BSSY / BSYNC pair), and needs neither -rdc nor a device linker. Each body is a
// dependent FMA chain of WORK_ITERS steps, long enough that the divergent part dominates the kernel;
// its loop is unrolled 8 times only, so that the code of both paths stays small (a fully unrolled
// body of 2048 FMAs is 32 KB of instructions, and would make the times depend on instruction fetch).
//
// Documents:
//   000_41d4bba01cd90206.txt  "Why did one changed index line drop kernel throughput tenfold?"
//                             (1.2: `if (threadIdx.x < 2) { do_A(); } else { do_B(); }`)
//   003_a7bdf3f6b43d9421.txt  ECE408 lecture 1 notes (SM and SIMT: `if (tid % 2 == 0) { A; } else
//                             { B; }`; performance tips and pitfalls: "first half-warp does A, second
//                             half-warp does B")
//   004_e4370fce40a887a3.txt  FlashAttention book, chapter 1 (1.3.2: diverge_kernel, predication of
//                             short visible bodies, BSSY / BSYNC; 1.6: a 32-way split costs up to 32x)

#ifndef WORK_ITERS
#define WORK_ITERS 2048
#endif

// ---------------------------------------------------------------------------------------------------
// 004, section 1.3.2. The document declares `__device__ int work_a();` and `__device__ int work_b();`
// and defines them elsewhere; these are two different dependent FMA chains over the thread's index.

__device__ __noinline__ int work_a() {
    float x = (float)threadIdx.x;
    #pragma unroll 8
    for (int i = 0; i < WORK_ITERS; ++i) {
        x = x * 1.0001f + 0.5f;
    }
    return (int)x;
}

__device__ __noinline__ int work_b() {
    float x = (float)threadIdx.x;
    #pragma unroll 8
    for (int i = 0; i < WORK_ITERS; ++i) {
        x = x * 0.9999f + 0.25f;
    }
    return (int)x;
}

// The document's kernel, verbatim apart from extern "C" (its comments translated). tid is
// threadIdx.x, as in the document: every block writes arr[0 .. blockDim.x - 1] with the same values.
extern "C" __global__ void diverge_kernel(int* arr) {
    int tid = threadIdx.x;
    if (tid % 2 == 0) {
        arr[tid] = work_a();   // even threads do work_a
    } else {
        arr[tid] = work_b();   // odd threads do work_b
    }
}

// Its uniform twin (not in the document): the same per-thread work, but the branch is taken per warp
// ((tid / 32) % 2), so no warp ever diverges.
extern "C" __global__ void uniform_kernel(int* arr) {
    int tid = threadIdx.x;
    if ((tid / 32) % 2 == 0) {
        arr[tid] = work_a();
    } else {
        arr[tid] = work_b();
    }
}

// ---------------------------------------------------------------------------------------------------
// 004, section 1.6 ("a 32-way split can fall to 1/32"): every lane of a warp takes its own path. The
// document gives no code: lane k calls work_c(k) alone, so the warp runs the body 32 times with one
// active lane each. The twin calls work_c(lane) once with all 32 lanes: the same per-thread work.

__device__ __noinline__ int work_c(int k) {
    float x = (float)k;
    #pragma unroll 8
    for (int i = 0; i < WORK_ITERS; ++i) {
        x = x * 1.0001f + 0.5f;
    }
    return (int)x;
}

extern "C" __global__ void diverge32_kernel(int* arr) {
    int tid = threadIdx.x;
    int lane = tid % 32;
    int r = 0;
    for (int k = 0; k < 32; ++k) {
        if (lane == k) {
            r = work_c(k);   // only lane k of the warp runs this call
        }
    }
    arr[tid] = r;
}

extern "C" __global__ void uniform32_kernel(int* arr) {
    int tid = threadIdx.x;
    int lane = tid % 32;
    arr[tid] = work_c(lane);
}

// ---------------------------------------------------------------------------------------------------
// 004, section 1.3.2: "if both bodies are short and visible to the compiler, it often uses predication
// instead, and the SASS has no jump at all". The document describes it without code; the bodies are
// one integer expression each.
extern "C" __global__ void diverge_visible(int* arr) {
    int tid = threadIdx.x;
    if (tid % 2 == 0) {
        arr[tid] = tid * 3 + 1;
    } else {
        arr[tid] = tid ^ 0x55;
    }
}

// ---------------------------------------------------------------------------------------------------
// 003, "SM and SIMT execution model" and the performance tips and pitfalls; 000, section 1.2. The
// documents name the two paths A and B (000: do_A() and do_B()) without code: two different dependent
// FMA chains over the thread's input. Each kernel reads one float per thread and writes one.

__device__ __noinline__ float do_A(float x) {
    #pragma unroll 8
    for (int i = 0; i < WORK_ITERS; ++i) {
        x = x * 1.0001f + 0.5f;
    }
    return x;
}

__device__ __noinline__ float do_B(float x) {
    #pragma unroll 8
    for (int i = 0; i < WORK_ITERS; ++i) {
        x = x * 0.9999f + 0.25f;
    }
    return x;
}

// 003: `if (tid % 2 == 0) { A; } else { B; }`: lanes alternate between the paths.
extern "C" __global__ void branch_odd_even(const float* in, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[tid];
    if (tid % 2 == 0) { x = do_A(x); } else { x = do_B(x); }
    out[tid] = x;
}

// 003's proposed fix: "the first half-warp does A, the second half-warp does B" (the first 16 lanes
// take A, the last 16 take B). Both halves are still in one warp.
extern "C" __global__ void branch_half_warp(const float* in, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[tid];
    if ((tid % 32) < 16) { x = do_A(x); } else { x = do_B(x); }
    out[tid] = x;
}

// A branch aligned with warp boundaries: whole warps alternate between the paths.
extern "C" __global__ void branch_warp_aligned(const float* in, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[tid];
    if ((tid / 32) % 2 == 0) { x = do_A(x); } else { x = do_B(x); }
    out[tid] = x;
}

// 000, section 1.2: `if (threadIdx.x < 2) { do_A(); } else { do_B(); }`. Launch with blockDim.x = 32,
// so that threadIdx.x is the lane and every warp has 2 lanes on one path and 30 on the other.
extern "C" __global__ void branch_first_two(const float* in, float* out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[tid];
    if (threadIdx.x < 2) { x = do_A(x); } else { x = do_B(x); }
    out[tid] = x;
}

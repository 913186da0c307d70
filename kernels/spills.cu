// Registers, spills and local arrays: kernels for expectations/spills.yaml.
//
// Each kernel is the code a teaching document shows (verbatim where the document gives code), wrapped
// in an extern "C" entry point or a template so that it can be launched by name. Every kernel writes a
// result to global memory, so the compiler cannot remove the work being measured.
//
// Documents:
//   000_41d4bba01cd90206.txt  "Why did one changed index line drop kernel throughput tenfold?"
//                             (section 5.4, Lab 4 occupancy_spill_benchmark.cu, section 8.1 #5 and #6)
//   002_b48240abed923777.txt  memory-optimisation notes ("Register, spill and local arrays")
//   003_a7bdf3f6b43d9421.txt  ECE408 lecture 1 notes (thought question Q2: 40 registers, launch bounds)

// ---------------------------------------------------------------------------------------------------
// 000, section 7, Lab 4 (occupancy_spill_benchmark.cu), verbatim apart from extern "C".
// Launch: 1,048,576 threads in blocks of 256 (4096 blocks), iterations = 10000.

// Version 1: compiled normally; the compiler may use as many registers as it likes.
extern "C" __global__ void kernel_normal_registers(float* d_out, int iterations) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    float r[16];
    #pragma unroll
    for (int i = 0; i < 16; ++i) {
        r[i] = (float)tid + i;
    }

    #pragma unroll 1
    for (int iter = 0; iter < iterations; ++iter) {
        #pragma unroll
        for (int i = 0; i < 16; ++i) {
            r[i] = r[i] * 1.001f + 0.002f;
        }
    }

    float sum = 0.0f;
    #pragma unroll
    for (int i = 0; i < 16; ++i) sum += r[i];
    d_out[tid] = sum;
}

// Version 2: launch bounds ask for 8 blocks of 256 threads per SM, which the document says forces the
// compiler to squeeze the registers so far that the local variables spill to local memory. The cap is
// 65536 / (256 x 8) = 32 registers per thread, above the 22 this body needs with CUDA 13.
extern "C" __global__ void __launch_bounds__(256, 8)
kernel_forced_occupancy_spill(float* d_out, int iterations) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    float r[16];
    #pragma unroll
    for (int i = 0; i < 16; ++i) {
        r[i] = (float)tid + i;
    }

    #pragma unroll 1
    for (int iter = 0; iter < iterations; ++iter) {
        #pragma unroll
        for (int i = 0; i < 16; ++i) {
            r[i] = r[i] * 1.001f + 0.002f;
        }
    }

    float sum = 0.0f;
    #pragma unroll
    for (int i = 0; i < 16; ++i) sum += r[i];
    d_out[tid] = sum;
}

// ---------------------------------------------------------------------------------------------------
// 000, section 5.4 and 8.1 #5; 002 "Register, spill and local arrays"; 003 Q2 (c): a register-hungry
// kernel under a register cap. The documents give no code for it: this is Lab 4's body with R live
// floats instead of 16, so that it needs more than 32 registers and a cap of 32 (or 40) really spills.
// Launch: 1,048,576 threads in blocks of 256 (4096 blocks), iterations = 2000.

// No bounds: the compiler keeps all R values in registers. The same entry, built with
// --maxrregcount 40 or 32 (the expectation file's max_registers), is the capped variant.
template <int R>
__global__ void registers_free(float* d_out, int iterations) {
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

// Lab 4's __launch_bounds__(256, 8) on the same body: at most 32 registers per thread.
template <int R>
__global__ void __launch_bounds__(256, 8) registers_bounded_256x8(float* d_out, int iterations) {
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
// 000, section 8.1 #6: "a local float a[10] stays in registers only if every index is a compile-time
// constant; any dynamic index a[i] moves the whole array to local memory". 002 says the same of local
// arrays whose index cannot be resolved at compile time. The documents describe the pattern without
// code: NA values loaded from global memory (so nothing folds), then read back n times at an index
// known only at run time.
// Launch: 1,048,576 threads in blocks of 256; `in` holds at least threads + (NA - 1) * 4096 floats.
//
// Whether ptxas keeps the array in registers depends on the code around the access, not only on the
// index being dynamic: the two kernels below differ in one pragma. With the read loop kept rolled, one
// dynamic read per iteration, CUDA 13.0's ptxas turns a[(i * 7 + tid) % NA] into a chain of selects
// over registers up to NA = 15 and uses local memory from NA = 16. Unrolled (the compiler's default,
// 4 reads per iteration), the same array goes to local memory already at NA = 10.

// The read loop kept rolled.
template <int NA>
__global__ void local_array_dynamic(const float* __restrict__ in, float* __restrict__ out, int n) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    float a[NA];
    #pragma unroll
    for (int i = 0; i < NA; ++i) {
        a[i] = in[tid + i * 4096];
    }

    float s = 0.0f;
    #pragma unroll 1
    for (int i = 0; i < n; ++i) {
        s += a[(i * 7 + tid) % NA];  // dynamic index: neither i nor tid is known at compile time
    }
    out[tid] = s;
}

// The same kernel with the read loop left to the compiler, which unrolls it by 4.
template <int NA>
__global__ void local_array_dynamic_unrolled(const float* __restrict__ in, float* __restrict__ out, int n) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    float a[NA];
    #pragma unroll
    for (int i = 0; i < NA; ++i) {
        a[i] = in[tid + i * 4096];
    }

    float s = 0.0f;
    for (int i = 0; i < n; ++i) {
        s += a[(i * 7 + tid) % NA];
    }
    out[tid] = s;
}

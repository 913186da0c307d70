// Latency and throughput probes for expectations/latency.yaml.
//
// The documents state latencies in cycles (an FP32 add, a shared-memory read, an L1 hit, an L2 hit, a
// DRAM access) and a peak FP32 rate, but give no code for them. These kernels are the classic
// microbenchmarks that measure such figures:
//   - a latency probe is one thread running a chain of dependent operations, each one's result the
//     next one's input (an add chain, or a pointer chase: the value loaded is the next address). The
//     thread times the chain with clock64() and writes the cycles to a buffer, which the expectation
//     file reads back (cycles / chain length = cycles per operation);
//   - a throughput probe keeps every SM full of independent work and is timed by the profiler.
// Every kernel writes its result to global memory, so the compiler cannot remove the work.
//
// The loads of the chases are inline PTX, so that the compiler keeps every one of them, in program
// order, after the stores that build the chain (`volatile` and the "memory" clobber): ld.global is the
// ordinary load (SASS LDG.E.64), which sm_70 and later cache in L1; ld.global.cg caches only in L2
// (LDG.E.64.STRONG.GPU: L1 is bypassed); ld.shared reads shared memory (LDS).
//
// Documents:
//   000_41d4bba01cd90206.txt  section 0.3 (latency table), 4.1, 5.1, 5.2
//   003_a7bdf3f6b43d9421.txt  latency hierarchy, device query (peak FP32), memory wall
//   004_e4370fce40a887a3.txt  1.1 table (FP32 add ~4 cycles, L1 hit ~40, 67 TFLOPs), 1.3.1 (schedulers)

// ---------------------------------------------------------------------------------------------------
// FP32 add latency (004, 1.1: "an FP32 add takes about 4 cycles"). Each thread runs `iters` x 256
// dependent add.f32 (x = x + y): every add waits for the previous result. With one thread (<<<1, 1>>>)
// cycles / adds is the add's latency. With a full GPU (8 blocks of 256 threads per SM) the same chain
// measures how the schedulers interleave warps: each warp waits 4 cycles per add, but 16 warps per
// scheduler hide that wait, and each thread's add then costs one issue slot per warp of its scheduler.
extern "C" __global__ void fadd_chain(float* out, long long* cycles, int iters, float y) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float x = (float)tid;
    long long start = clock64();
    for (int i = 0; i < iters; ++i) {
        #pragma unroll
        for (int k = 0; k < 256; ++k) {
            asm volatile("add.f32 %0, %0, %1;" : "+f"(x) : "f"(y));
        }
    }
    long long stop = clock64();
    out[tid] = x;
    cycles[tid] = stop - start;
}

// ---------------------------------------------------------------------------------------------------
// Peak FP32 throughput (004, 1.1: "132 SMs x 128 FP32 cores, ~67 TFLOPs"; 003 device query: peak FP32 =
// 2 x lanes x clock). Each thread runs 8 independent FMA chains, unrolled 16 times: 128 FFMA per
// iteration, 2 FLOP each. With 8 chains per thread and 16 warps per scheduler there is always an FFMA
// ready to issue, so the FP32 pipes, not latency, set the pace.
extern "C" __global__ void ffma_peak(float* out, int iters, float x, float y) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float a[8];
    #pragma unroll
    for (int c = 0; c < 8; ++c) a[c] = (float)tid * 1.0e-6f + (float)c;
    for (int i = 0; i < iters; ++i) {
        #pragma unroll
        for (int u = 0; u < 16; ++u) {
            #pragma unroll
            for (int c = 0; c < 8; ++c) a[c] = fmaf(a[c], x, y);
        }
    }
    float sum = 0.0f;
    #pragma unroll
    for (int c = 0; c < 8; ++c) sum += a[c];
    out[tid] = sum;
}

// ---------------------------------------------------------------------------------------------------
// Shared-memory latency (000 section 0.3 and 4.1, 003 latency hierarchy: "20-30 cycles"). The block
// writes a ring of 1024 shared words, each holding the shared-window address of the next, 33 words on
// (so consecutive reads fall in different banks and rows); one thread then walks it. A read's address
// is the previous read's value, so each LDS waits for the one before.
extern "C" __global__ void shared_chase(unsigned* out, long long* cycles, int steps) {
    __shared__ unsigned ring[1024];
    unsigned base = (unsigned)__cvta_generic_to_shared(ring);
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) {
        ring[i] = base + 4u * (unsigned)((i + 33) % 1024);
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    unsigned p = base;
    for (int i = 0; i < 1024; ++i) {  // one lap first: the timed walk starts in steady state
        asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p) : : "memory");
    }
    long long start = clock64();
    #pragma unroll 8
    for (int i = 0; i < steps; ++i) {
        asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p) : : "memory");
    }
    long long stop = clock64();
    out[0] = p;
    cycles[0] = stop - start;
}

// ---------------------------------------------------------------------------------------------------
// Global-memory pointer chase with the chain built by the kernel: `buf` holds `elems` 8-byte slots;
// the chain visits slot 0, stride, 2 x stride, ... and wraps. One thread writes the chain (each visited
// slot holds the address of the next), walks it once so that every line is where the cache operator
// puts it, then times `steps` dependent loads.
template <bool L1>
__device__ __forceinline__ unsigned long long chase_load(unsigned long long p) {
    if (L1) {
        asm volatile("ld.global.u64 %0, [%0];" : "+l"(p) : : "memory");
    } else {
        asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p) : : "memory");
    }
    return p;
}

template <bool L1>
__device__ void global_chase(unsigned long long* buf, long long* cycles, int elems, int stride, int steps) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    int n = elems / stride;
    for (int i = 0; i < n; ++i) {
        buf[(long long)i * stride] = (unsigned long long)&buf[(long long)((i + 1) % n) * stride];
    }
    unsigned long long p = (unsigned long long)buf;
    for (int i = 0; i < n; ++i) p = chase_load<L1>(p);  // warm-up lap
    long long start = clock64();
    #pragma unroll 8
    for (int i = 0; i < steps; ++i) p = chase_load<L1>(p);
    long long stop = clock64();
    cycles[0] = stop - start;
    cycles[1] = (long long)p;  // the walk's end, so that the loads are kept
}

// L1 hit latency (004, 1.1: "a read that hits L1 takes about 40 cycles"; 000 section 0.3: "~30-40").
// A small ring (16 KiB in 128-byte steps) fits in L1: after the warm-up lap every load hits.
extern "C" __global__ void l1_chase(unsigned long long* buf, long long* cycles, int elems, int stride, int steps) {
    global_chase<true>(buf, cycles, elems, stride, steps);
}

// L2 hit latency (000 section 0.3: "~180-200 cycles"; 003: "~200 cycles"). ld.global.cg skips L1, and a
// ring of a few MiB stays in the 50-60 MB L2 after the warm-up lap.
extern "C" __global__ void l2_chase(unsigned long long* buf, long long* cycles, int elems, int stride, int steps) {
    global_chase<false>(buf, cycles, elems, stride, steps);
}

// ---------------------------------------------------------------------------------------------------
// DRAM latency (000 section 0.3 and 5.1: "400-600 cycles"; 003: "400-800 cycles"; 004, 1.3.1: "a warp
// waits ~800 cycles for memory"). Every 8-byte slot of `buf` holds the chase's step in bytes (a
// constant fill), so each load's value moves the pointer to the next address: `steps` dependent loads,
// each to a line no earlier step touched, over more memory than the L2 holds, with no warm-up. Every
// load misses in L1 (ld.global.cg) and in L2 and goes to DRAM. The 64-bit add that forms the next
// address adds a few cycles per step (well under 2% of a DRAM access).
extern "C" __global__ void dram_chase(const long long* buf, long long* cycles, int steps) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const char* p = (const char*)buf;
    long long start = clock64();
    for (int i = 0; i < steps; ++i) {
        long long step;
        asm volatile("ld.global.cg.s64 %0, [%1];" : "=l"(step) : "l"(p) : "memory");
        p += step;
    }
    long long stop = clock64();
    cycles[0] = stop - start;
    cycles[1] = (long long)(p - (const char*)buf);  // bytes walked, so that the loads are kept
}

// Global-memory coalescing kernels for expectations/coalescing.yaml.
//
// Each kernel is the code a teaching document shows (verbatim where the document gives code), wrapped
// in an extern "C" entry point so that it can be launched by name. Every kernel writes a result to
// global memory, so the compiler cannot remove the loads being measured.
//
// Documents:
//   000_41d4bba01cd90206.txt  "Why did one changed index line drop kernel throughput tenfold?"
//   002_b48240abed923777.txt  memory-optimisation notes
//   003_a7bdf3f6b43d9421.txt  ECE408 lecture 1 notes (vector add)
//   004_e4370fce40a887a3.txt  FlashAttention book, chapter 1 (SIMT, coalescing)

// ---------------------------------------------------------------------------------------------------
// 000, section 0.1: the two kernels of the opening example. Launch exactly one thread per output
// element (no bounds check, as in the document).

// Scenario A: coalesced access, each thread reads a consecutive 4-byte float.
extern "C" __global__ void scenario_a_coalesced(const float* in, float* out) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    out[tid] = in[tid];
}

// Scenario B: strided access, adjacent threads read floats 32 elements (128 B) apart.
// `in` must hold 32 * threads floats.
extern "C" __global__ void scenario_b_strided(const float* in, float* out) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    out[tid] = in[tid * 32];
}

// ---------------------------------------------------------------------------------------------------
// 000, section 2.2: "all 32 lanes of a warp fall inside one 32 B sector". The document describes the
// pattern without code: 32 lanes read the 8 floats of one aligned sector.
extern "C" __global__ void one_sector_read(const float* in, float* out) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    out[tid] = in[tid % 8];
}

// ---------------------------------------------------------------------------------------------------
// 000, section 7, Lab 1 (coalescing_benchmark.cu), verbatim apart from extern "C".
// Launch: 256 threads per block, (N / stride + 255) / 256 blocks, N = 64 Mi floats.
extern "C" __global__ void strided_read_kernel(const float* __restrict__ in, float* __restrict__ out, int N, int stride) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    int idx = tid * stride;
    if (idx < N) {
        // Simple add and write-back, so that the compiler cannot eliminate the load as dead code.
        out[tid] = in[idx] + 1.0f;
    }
}

// ---------------------------------------------------------------------------------------------------
// 000, section 3.2 (row-major trap), with dim3 block(32, 8). The document's two index mappings are
// verbatim; each kernel stores `val` to the same coalesced linear index, so only the load differs.

// Mode A: row-direction coalesced read (Good).
extern "C" __global__ void row_major_read(const float* __restrict__ matrix, float* __restrict__ out, int Cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;  // threadIdx.x varies fastest
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    float val = matrix[row * Cols + col];

    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    out[y * (gridDim.x * blockDim.x) + x] = val;
}

// Mode B: column-direction uncoalesced read (Catastrophic). Adjacent lanes are Cols floats apart.
extern "C" __global__ void column_major_read(const float* __restrict__ matrix, float* __restrict__ out, int Cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;  // threadIdx.x varies fastest
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    float val = matrix[row * Cols + col];

    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    out[y * (gridDim.x * blockDim.x) + x] = val;
}

// ---------------------------------------------------------------------------------------------------
// 000, section 3.3: AoS against SoA. The struct and the update line are verbatim.
struct Particle {
    float x, y, z;     // position
    float vx, vy, vz;  // velocity
    float mass;        // mass
};  // sizeof(Particle) = 28 Bytes

static_assert(sizeof(Particle) == 28, "the document's Particle is 28 bytes");

extern "C" __global__ void aos_update(Particle* particles, float dt, int n) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n) {
        particles[tid].x += particles[tid].vx * dt;
    }
}

// SoA: the same update over the document's struct-of-arrays layout. Only the two arrays the update
// touches (x and vx) are passed.
extern "C" __global__ void soa_update(float* __restrict__ x, const float* __restrict__ vx, float dt, int n) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n) {
        x[tid] += vx[tid] * dt;
    }
}

// ---------------------------------------------------------------------------------------------------
// 002, "AoS, SoA and vectorization": struct Particle { float x, y, z, mass; }. Renamed here because
// 000's 28-byte Particle lives in the same file.
struct ParticleXYZM {
    float x, y, z, mass;
};

static_assert(sizeof(ParticleXYZM) == 16, "002's Particle is 16 bytes");

// A kernel that reads only x: AoS drags y, z and mass into every sector it fetches.
extern "C" __global__ void aos_read_x(const ParticleXYZM* __restrict__ p, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = p[i].x * 2.0f;
    }
}

// A kernel that consumes the whole naturally aligned struct, loaded as one 16-byte access.
extern "C" __global__ void aos_read_whole(const ParticleXYZM* __restrict__ p, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = reinterpret_cast<const float4*>(p)[i];
        out[i] = v.x + v.y + v.z + v.w;
    }
}

// ---------------------------------------------------------------------------------------------------
// 003, example 3 (vecadd.cu), version 1, verbatim apart from extern "C".
extern "C" __global__ void vecAddKernel(const float *A, const float *B, float *C, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {                       // bounds check: the rounded-up grid always has surplus threads
        C[i] = A[i] + B[i];
    }
}

// ---------------------------------------------------------------------------------------------------
// 004, section 1.3.3: scattered access, `arr[idx[tid]]` with random idx. Here the random index is an
// integer hash of the thread index, computed in the kernel: an index array would add its own coalesced
// load (4 sectors per request) to the same load counters and blur the gather's figure. The hash
// (a 32-bit bijective mixer) is masked to the array size, a power of two. With 2^28 floats (2^25
// sectors), two lanes of a warp share a sector with probability about 496 / 2^25, so a request
// touches 32 sectors to within 1e-4 on average.
__device__ __forceinline__ unsigned int mix32(unsigned int h) {
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}

extern "C" __global__ void scattered_gather(const float* __restrict__ arr, float* __restrict__ out, unsigned int mask) {
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    out[tid] = arr[mix32(tid) & mask];
}

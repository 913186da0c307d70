// Shared-memory bank-conflict kernels for expectations/bank_conflicts.yaml.
//
// Each kernel is the access pattern a teaching document describes, with the document's own code lines
// verbatim (and its comments translated) where it gives code. Shared memory is always filled at run time and every kernel writes what
// it read to global memory, so the compiler can neither fold the shared loads nor remove them.
// Every pattern is written for a warp of 32 consecutive threadIdx.x: the launches in the expectation
// file pin blockDim.x to a multiple of 32 (and to 32 where a warp must be exactly one tile).
//
// Documents:
//   000_41d4bba01cd90206.txt  "Why did one changed index line drop kernel throughput tenfold?"
//                             (section 4: 32 banks, gcd(stride, 32), broadcast, padding, XOR swizzle;
//                             section 9.3, question 2)
//   003_a7bdf3f6b43d9421.txt  ECE408 lecture 1 notes (tile[threadIdx.x] against tile[threadIdx.x * 32])

// ---------------------------------------------------------------------------------------------------
// 000, sections 4.1 and 4.2: lane i of a warp reads the 4-byte word base + i * STRIDE, so it hits bank
// (i * STRIDE) mod 32 and the warp's load is a gcd(STRIDE, 32)-way conflict. The document describes the
// pattern without code. Each iteration adds (it & 31) to every lane's word: that moves all lanes by the
// same number of banks, so every load of the loop has the same conflict degree, and the loop makes the
// kernel's time the time of its shared loads. 003's tile[threadIdx.x] and tile[threadIdx.x * 32] are
// STRIDE 1 and 32.
//
// The largest word read is 31 * 33 + 31 = 1054, inside the 32 * 33 words. Launch with blockDim.x a
// multiple of 32.
template <int STRIDE>
__global__ void smem_stride_read(float* __restrict__ out, int iters) {
    __shared__ float s[32 * 33];
    for (int i = threadIdx.x; i < 32 * 33; i += blockDim.x) {
        s[i] = (float)i;
    }
    __syncthreads();

    int lane = threadIdx.x & 31;
    float acc = 0.0f;
    for (int it = 0; it < iters; ++it) {
        acc += s[lane * STRIDE + (it & 31)];  // bank (lane * STRIDE + it) mod 32
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// ---------------------------------------------------------------------------------------------------
// 000, section 4.3 (and 8.1 item 4): every lane of the warp reads the same word: a broadcast.
// The two lines with s_val are the document's. Thread 0 stores a value read from global memory: with a
// compile-time constant the compiler folds the value and no shared load is left to measure.
extern "C" __global__ void broadcast_read(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float s_val;
    if (threadIdx.x == 0) {
        s_val = in[blockIdx.x];
    }
    __syncthreads();

    float v = s_val;  // all 32 lanes of the warp read the same address
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// ---------------------------------------------------------------------------------------------------
// 000, section 9.3, question 2: lanes 0-15 read word A of bank 0 and lanes 16-31 read word B of bank 0
// (words 0 and 32). The word index is computed, not selected between two loads, so the warp issues a
// single shared load whose lanes ask for two different words of one bank. Launch with blockDim.x = 32.
extern "C" __global__ void two_words_one_bank(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float s[64];
    s[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
    s[threadIdx.x + 32] = in[blockIdx.x * 64 + threadIdx.x + 32];
    __syncthreads();

    int word = (threadIdx.x / 16) * 32;  // lanes 0-15: word 0 (A); lanes 16-31: word 32 (B)
    float v = s[word];
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// ---------------------------------------------------------------------------------------------------
// 000, section 4.4, padding: `__shared__ float tile_bad[32][32];` against `__shared__ float
// tile_good[32][33];`, read along a column as the document does (tile[threadIdx.x][0]). COLS = 32 is
// tile_bad, COLS = 33 is tile_good. Lane r fills row r of the 32x32 tile from global memory (the loads
// are coalesced: at each step the 32 lanes read 32 consecutive floats). Launch with blockDim.x = 32:
// one warp per block, lane r = row r.
template <int COLS>
__global__ void tile_column_read(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float tile[32][COLS];
    int row = threadIdx.x;
    for (int col = 0; col < 32; ++col) {
        tile[row][col] = in[blockIdx.x * 1024 + col * 32 + row];
    }
    __syncthreads();

    float v = tile[threadIdx.x][0];  // column 0: bank 0 for every lane with 32 columns, bank r with 33
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// ---------------------------------------------------------------------------------------------------
// 000, section 4.4, XOR swizzle: the same unpadded 32x32 tile, with the document's three lines
// (`int swizzled_col = col ^ (row % 32);`, the store and the load) around the same fill and the same
// column read as tile_column_read. Lane r = row r. At each fill step the 32 lanes store to columns
// col ^ r, 32 different banks; the column read (logical column 0) reads tile[r][r], 32 different banks.
// Launch with blockDim.x = 32.
extern "C" __global__ void tile_swizzled_column_read(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float tile[32][32];
    int row = threadIdx.x;
    for (int col = 0; col < 32; ++col) {
        float val = in[blockIdx.x * 1024 + col * 32 + row];
        // Scramble the column index on the way in
        int swizzled_col = col ^ (row % 32);
        tile[row][swizzled_col] = val;
    }
    __syncthreads();

    int col = 0;
    // Restore it on the way out
    int swizzled_col = col ^ (row % 32);
    float val = tile[row][swizzled_col];
    out[blockIdx.x * blockDim.x + threadIdx.x] = val;
}

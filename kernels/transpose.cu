// Matrix-transpose kernels for expectations/transpose.yaml: global coalescing on both sides and the
// shared-memory bank conflicts of the tile in between.
//
// Each kernel is the code a teaching document shows, wrapped in an extern "C" entry point (or kept as
// the document's template) so that it can be launched by name. Where the document gives code, its code
// lines are verbatim and its (Chinese) comments translated. Every kernel stores what it loads to global
// memory, so no load is dead.
//
// Documents:
//   000_41d4bba01cd90206.txt  "Why did one changed index line drop kernel throughput tenfold?"
//                             (section 0.2 incident; 4.5 two-phase transpose; Lab 3,
//                             bank_conflict_benchmark.cu; appendix A, question 1)
//   002_b48240abed923777.txt  memory-optimisation notes ("Bank conflict": the transpose template)

#define TILE_DIM 32
#define BLOCK_ROWS 8

// ---------------------------------------------------------------------------------------------------
// 000, section 0.2: the incident kernel. The code from the declaration to the output line is the
// document's. The document shows one 32x32 tile; here every block of (32, 32) threads handles its own
// tile, the blockIdx.x-th 1024 floats of input and output, so that a big grid can be timed.
// threadIdx.x is the fastest index: a warp is one value of ty with tx = 0..31.
//   Store output[tx * 32 + ty]: the 32 lanes write 32 floats 128 B apart, one sector each.
//   Load smem_buffer[tx][ty]: the 32 lanes read one column of a 32-float-wide tile, all in one bank.
// (As written, the two lines put input[tx * 32 + ty] back at output[tx * 32 + ty]: the transposed read
// and the transposed write cancel. The counters and the time do not depend on it.)
extern "C" __global__ void incident_transpose(const float* input, float* output) {
    input += (size_t)blockIdx.x * 1024;
    output += (size_t)blockIdx.x * 1024;

    __shared__ float smem_buffer[32][32];  // a 32x32 shared array
    int tx = threadIdx.x;  // 0 ~ 31
    int ty = threadIdx.y;  // 0 ~ 31

    // Step 1: write shared memory (consecutive threads write a row)
    smem_buffer[ty][tx] = input[ty * 32 + tx];
    __syncthreads();

    // Step 2: transposed read of shared memory (consecutive threads read a column)
    output[tx * 32 + ty] = smem_buffer[tx][ty];
}

// 000, section 0.2: the fix. The document says only that the declaration became
// `__shared__ float smem_buffer[32][33];` and that the global write-back index was adjusted; this is
// the standard form of both: the column read of the padded tile is conflict-free, and consecutive
// threads write consecutive floats of an output row. It stores the transposed tile; the bytes moved
// are those of the incident kernel.
extern "C" __global__ void incident_transpose_fixed(const float* input, float* output) {
    input += (size_t)blockIdx.x * 1024;
    output += (size_t)blockIdx.x * 1024;

    __shared__ float smem_buffer[32][33];  // one padding column
    int tx = threadIdx.x;  // 0 ~ 31
    int ty = threadIdx.y;  // 0 ~ 31

    smem_buffer[ty][tx] = input[ty * 32 + tx];
    __syncthreads();

    // output[ty][tx] = input[tx][ty], with tx on the contiguous side of the output
    output[ty * 32 + tx] = smem_buffer[tx][ty];
}

// ---------------------------------------------------------------------------------------------------
// 000, Lab 3 (bank_conflict_benchmark.cu), verbatim apart from extern "C" and the translated comments.
// Launch dim3 block(32, 8)
// (TILE_DIM, BLOCK_ROWS) and dim3 grid(N / 32, M / 32): a warp is one tile row, and each thread moves
// four elements.

// 1. Transpose without padding: coalesced writes, but reading shared memory is a 32-way bank conflict!
extern "C" __global__ void transpose_conflict(const float* __restrict__ in, float* __restrict__ out, int width, int height) {
    __shared__ float tile[TILE_DIM][TILE_DIM]; // 32 x 32, no padding

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;

    // Coalesced global read, conflict-free write of a shared-memory row
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < width && (y + j) < height) {
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
        }
    }
    __syncthreads();

    // Swap coordinates: reading shared memory by column => 32-way bank conflict!
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;

    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < height && (y + j) < width) {
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

// 2. Transpose with +1 padding: the bank conflict is gone!
extern "C" __global__ void transpose_padded(const float* __restrict__ in, float* __restrict__ out, int width, int height) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1]; // +1 padding breaks the 32 alignment

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;

    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < width && (y + j) < height) {
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
        }
    }
    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;

    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < height && (y + j) < width) {
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

// ---------------------------------------------------------------------------------------------------
// 002, "Bank conflict": the document's template, verbatim. Launch dim3 block(32, 8); each thread loops
// over four elements. It is Lab 3's transpose_padded without __restrict__.
template<int TILE = 32, int ROWS = 8>
__global__ void transpose(const float* in, float* out, int width, int height) {
  __shared__ float tile[TILE][TILE + 1];

  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < width && y + j < height)
      tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];

  __syncthreads();

  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < height && y + j < width)
      out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

// ---------------------------------------------------------------------------------------------------
// 000, appendix A, question 1, step 1: the naive transpose, without shared memory. It reads
// in[row * width + col] (coalesced) and writes out[col * height + row], so adjacent lanes write
// `height` floats apart. The document gives the two index expressions; the loop is Lab 3's tiling
// (block (32, 8), four rows per thread), so that it moves the same elements as the tiled kernels.
extern "C" __global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int width, int height) {
    int col = blockIdx.x * TILE_DIM + threadIdx.x;
    int row = blockIdx.y * TILE_DIM + threadIdx.y;

    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (col < width && (row + j) < height) {
            out[col * height + (row + j)] = in[(row + j) * width + col];
        }
    }
}

// 000, section 4.5: the other horn of the "double-edged sword": map threadIdx.x to the contiguous side
// of the output instead, and the write is coalesced but the read strides by `width`. Same tiling.
extern "C" __global__ void transpose_naive_coalesced_write(const float* __restrict__ in, float* __restrict__ out, int width, int height) {
    int col = blockIdx.x * TILE_DIM + threadIdx.x;  // column of out = row of in
    int row = blockIdx.y * TILE_DIM + threadIdx.y;  // row of out = column of in

    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (col < height && (row + j) < width) {
            out[(row + j) * height + col] = in[col * width + (row + j)];
        }
    }
}

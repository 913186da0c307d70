// Kernels whose claims in explain.yaml fail on purpose, so that ncuverify's second pass has something
// to explain: a strided global load and a shared-memory tile read down its columns.

extern "C" __global__ void gather_stride32(const float* __restrict__ in, float* __restrict__ out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = in[t * 32];  // neighbouring threads 128 B apart: one sector each
}

extern "C" __global__ void tile_columns(float* __restrict__ out) {
    __shared__ float tile[32][32];
    tile[threadIdx.y][threadIdx.x] = threadIdx.x + threadIdx.y;
    __syncthreads();
    int t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    out[t] = tile[threadIdx.x][threadIdx.y];  // a warp reads one bank: 32-way conflict
}

// A sum in two launches, the way a reduction too large for one block is written: the first kernel
// sums each block's 256 floats into partial[blockIdx.x], the second sums those partials into
// total[0] with one block. The second reads what the first wrote: the two are one case of two steps.
//
// Both reduce in shared memory by halving strides (s = blockDim.x / 2, ..., 1): thread t adds
// cache[t + s] to cache[t], consecutive threads on consecutive words, so no two lanes of a warp
// touch one bank at two addresses.

#define BLOCK_SUMS 256
#define FINAL_BLOCK 1024

extern "C" __global__ void block_sums(const float* in, float* partial, int n)
{
    __shared__ float cache[BLOCK_SUMS];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cache[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            cache[threadIdx.x] += cache[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = cache[0];
    }
}

extern "C" __global__ void final_sum(const float* partial, float* total, int count)
{
    __shared__ float cache[FINAL_BLOCK];
    float sum = 0.0f;
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
        sum += partial[i];
    }
    cache[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            cache[threadIdx.x] += cache[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        total[0] = cache[0];
    }
}

// Two copies whose loads a sweep checks at several sizes: each thread copies one float.
//   coalesced_copy: lane i of a warp reads in[i]; the warp's 32 loads fill one 128-byte line,
//                   4 sectors of 32 bytes.
//   strided_copy:   lane i reads in[32 * i]; the lanes are 128 bytes apart, each in a sector of its
//                   own: 32 sectors per request.
// Both write out[i] contiguously; n is a multiple of the block, so every warp is full.

extern "C" __global__ void coalesced_copy(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i];
    }
}

extern "C" __global__ void strided_copy(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[static_cast<long long>(i) * 32];
    }
}

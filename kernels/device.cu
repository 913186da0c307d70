// Small kernels for expectations/device.yaml: the device-query and hello programs of a teaching
// document, and a pitched 2D write. The device facts themselves are read from the profiler's device
// attributes of any launch; these kernels give the profiler a launch and carry a few claims of their own.
//
// Documents:
//   003_a7bdf3f6b43d9421.txt  ECE408 lecture 1 notes: example 1 (deviceQuery.cu), example 2 (hello_gpu.cu)
//   002_b48240abed923777.txt  memory-optimisation notes ("Pitched allocation and 2D data")

// ---------------------------------------------------------------------------------------------------
// 003, example 1 (deviceQuery.cu), verbatim apart from extern "C": the minimal kernel the program only
// passes to cudaFuncGetAttributes and cudaOccupancyMaxActiveBlocksPerMultiprocessor (it never launches
// it; here it is launched so that the profiler reports its occupancy).
extern "C" __global__ void occupancyProbeKernel(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * 2.0f + 1.0f;
    }
}

// ---------------------------------------------------------------------------------------------------
// 003, example 2 (hello_gpu.cu), verbatim apart from extern "C". Default launch <<<4, 8>>>, n = 32.
extern "C" __global__ void helloKernel(const float *in, float *out, int n)
{
    unsigned int gtid = blockIdx.x * blockDim.x + threadIdx.x;  // global linear index

    // device printf: the order of the lines is not defined; the buffer is flushed when the kernel ends
    printf("  [device] blk %u/%u  thr %2u/%-2u  warp %u lane %2u  gtid %2u  %s\n",
           blockIdx.x, gridDim.x,
           threadIdx.x, blockDim.x,
           threadIdx.x / warpSize, threadIdx.x % warpSize,
           gtid,
           (gtid < (unsigned)n) ? "work" : "idle");

    if (gtid < (unsigned)n) {
        out[gtid] = in[gtid] + 1.0f;   // every working thread really touches global memory once
    }
}

// ---------------------------------------------------------------------------------------------------
// 002, "Pitched allocation and 2D data": the document's kernel, with its elided index lines filled in
// the usual way (x from the block's x, y from its y) and a value to store. `base` points to h rows of
// pitch_bytes bytes each, of which the first w floats are used; pitch_bytes is a byte count.
extern "C" __global__ void k(float* base, size_t pitch_bytes, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    auto* row = reinterpret_cast<float*>(
        reinterpret_cast<char*>(base) + y * pitch_bytes);
    row[x] = (float)(x + y);
  }
}

// 003 example 2's kernel without its printf (which adds traffic of its own): at <<<4, 8>>> each warp
// has 8 active lanes, reading and writing 8 consecutive floats: 32 B, one sector.
extern "C" __global__ void helloNoPrint(const float *in, float *out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    out[g] = in[g] + 1.0f;
}

// 000 5.3, shared memory allocation granularity: 4 B and 132 B of static shared memory.
extern "C" __global__ void smem4(float *out)
{
    __shared__ float s[1];
    s[0] = out[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[0];
}

extern "C" __global__ void smem132(float *out)
{
    __shared__ float s[33];
    s[threadIdx.x % 33] = out[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % 33];
}

// Baseline of bank_conflict: rows of 32 floats in shared memory, read column by column, so the
// 32 lanes of a warp read 32 addresses of one bank at once. The read on line 19 must be hot with
// mio_throttle / short_scoreboard.
// @kl launch rows grid=(B) block=(256) args=(x, y, B)

extern "C" __global__ void rows(const float* __restrict__ x, float* __restrict__ y, int b)
{
    __shared__ float tile[256 * 32];
    const int t = threadIdx.x;
    const long long base = (long long)blockIdx.x * 8192;
    for (int k = 0; k < 32; ++k)
        tile[k * 256 + t] = x[base + k * 256 + t];
    __syncthreads();
    volatile float* row = tile + t * 32;
    float acc = 0.0f;
#pragma unroll 1
    for (int r = 0; r < 256; ++r) {
        const int c = (r * 7) & 31;
        acc += row[c]; // @hot
    }
    y[(long long)blockIdx.x * 256 + t] = acc;
}

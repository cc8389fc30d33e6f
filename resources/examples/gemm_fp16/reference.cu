// Reference for gemm_fp16: one thread per element of C, the K products summed in order in fp32 (as the
// problem states its accumulation), rounded once to fp16. Slow on purpose; it only has to be obviously right.
#include <cuda_fp16.h>

// @kl launch gemm_reference grid=(cdiv(N, 16), cdiv(M, 16)) block=(16, 16) args=(a, b, c, M, N, K)

extern "C" __global__ void gemm_reference(const __half* a, const __half* b, __half* c, int M, int N, int K)
{
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N)
        return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k)
        sum += __half2float(a[(long long)row * K + k]) * __half2float(b[(long long)k * N + col]);
    c[(long long)row * N + col] = __float2half(sum);
}

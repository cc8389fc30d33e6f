// Reference for softmax_bf16: one thread per row, double-precision maths.
#include <cuda_bf16.h>
#include <math_constants.h> // INFINITY comes from the host math.h, which NVRTC lacks

// @kl launch softmax_reference grid=(cdiv(ROWS, 64)) block=(64) args=(x, y, ROWS, COLS)

extern "C" __global__ void softmax_reference(const __nv_bfloat16* x, __nv_bfloat16* y, int rows, int cols)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    const __nv_bfloat16* xr = x + (long long)row * cols;
    double m = -CUDART_INF;
    for (int j = 0; j < cols; ++j)
        m = fmax(m, (double)__bfloat162float(xr[j]));
    double sum = 0.0;
    for (int j = 0; j < cols; ++j)
        sum += exp((double)__bfloat162float(xr[j]) - m);
    for (int j = 0; j < cols; ++j)
        y[(long long)row * cols + j] = __float2bfloat16((float)(exp((double)__bfloat162float(xr[j]) - m) / sum));
}

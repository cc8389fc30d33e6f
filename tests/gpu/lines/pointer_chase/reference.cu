// Reference for pointer_chase: one thread per start index, the same 64 links.
// @kl launch chase_reference grid=(cdiv(T, 128)) block=(128) args=(next, y, N, T)

extern "C" __global__ void chase_reference(const int* next, int* y, int n, int t)
{
    const int start = blockIdx.x * blockDim.x + threadIdx.x;
    if (start >= t)
        return;
    unsigned j = (unsigned)start % (unsigned)n;
    for (int k = 0; k < 64; ++k)
        j = (unsigned)next[j] % (unsigned)n;
    y[start] = (int)j;
}

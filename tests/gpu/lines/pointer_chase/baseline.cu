// Baseline of pointer_chase: the planted dependent-load loop. Line 11 must be the hottest line,
// long_scoreboard dominant (each load waits for the one before).
// @kl launch chase grid=(cdiv(T, 256)) block=(256) args=(next, y, N, T)

extern "C" __global__ void chase(const int* __restrict__ next, int* __restrict__ y, int n, int t)
{
    const int start = blockIdx.x * blockDim.x + threadIdx.x;
    if (start >= t)
        return;
    unsigned j = (unsigned)start % (unsigned)n;
    for (int k = 0; k < 64; ++k) j = (unsigned)next[j] % (unsigned)n; // @hot
    y[start] = (int)j;
}

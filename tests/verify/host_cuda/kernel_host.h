#pragma once
#pragma GCC system_header
// Host stand-ins for what a CUDA kernel's text uses (tests/verify/test_gemm_wmma_host.cpp): the index
// variables, __global__ and friends, __syncwarp. __shared__ becomes static: one block runs at a time.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#define __global__
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct HostDim3 {
    unsigned x = 0, y = 0, z = 0;
};
inline HostDim3 threadIdx, blockIdx, blockDim, gridDim;

inline void __syncwarp() { }

namespace kl::host_cuda {

// A use of a device API that CUDA documents as undefined (a fault or garbage on the device).
struct Misuse : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The problem's buffers, registered by the test. A pointer into none of them is a shared array (a static
// here), whose bounds are the compiler's to check.
struct Allocation {
    const void* begin;
    std::size_t bytes;
};
inline std::vector<Allocation> allocations;

inline void checkRange(const void* p, std::size_t bytes, const char* what)
{
    const auto* at = static_cast<const char*>(p);
    for (const auto& a : allocations) {
        const auto* begin = static_cast<const char*>(a.begin);
        if (at >= begin && at < begin + a.bytes && at + bytes > begin + a.bytes)
            throw Misuse(std::string(what) + ": reads or writes past the end of a buffer");
    }
}

} // namespace kl::host_cuda

#pragma once
#pragma GCC system_header
// Host stand-in for <cuda_fp16.h> (tests/verify/test_gemm_wmma_host.cpp): __half as IEEE binary16 with
// round-to-nearest-even conversions (GCC's _Float16), as the device rounds them.
struct __half {
    _Float16 value;
};

inline __half __float2half(float f) { return __half { static_cast<_Float16>(f) }; }
inline float __half2float(__half h) { return static_cast<float>(h.value); }

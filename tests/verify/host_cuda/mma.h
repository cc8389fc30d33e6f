#pragma once
#pragma GCC system_header
// Host stand-in for <mma.h> (tests/verify/test_gemm_wmma_host.cpp): nvcuda::wmma's m16n16k16 fragments
// as whole tiles, and the preconditions CUDA's programming guide states for them enforced. A kernel run
// on the host runs its lanes one after another; each lane holds the warp's whole fragment, so collective
// loads, products and stores give every lane what the warp would have. A precondition broken throws
// kl::host_cuda::Misuse where the device would fault (misaligned address) or read garbage.
#include "kernel_host.h"

#include <cstdint>
#include <string>
#include <type_traits>

namespace nvcuda::wmma {

struct matrix_a { };
struct matrix_b { };
struct accumulator { };
struct row_major { };
struct col_major { };
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
    static constexpr int rows = std::is_same_v<Use, matrix_b> ? K : M;
    static constexpr int cols = std::is_same_v<Use, matrix_a> ? K : N;
    T x[rows * cols];
};

namespace detail {

// "mptr must be a 256-bit aligned pointer"; "ldm must be a multiple of 8 for __half element type or
// multiple of 4 for float element type (i.e., multiple of 16 bytes in both cases)"; and every row read
// or written must lie inside one allocation.
template <class T> void check(const T* p, unsigned ldm, int rows, int cols, const char* what)
{
    if (reinterpret_cast<std::uintptr_t>(p) % 32 != 0)
        throw kl::host_cuda::Misuse(std::string(what) + ": pointer not 256-bit aligned");
    if ((ldm * sizeof(T)) % 16 != 0)
        throw kl::host_cuda::Misuse(
            std::string(what) + ": ldm " + std::to_string(ldm) + " is not a multiple of 16 bytes");
    for (int r = 0; r < rows; ++r)
        kl::host_cuda::checkRange(p + std::size_t(r) * ldm, cols * sizeof(T), what);
}

} // namespace detail

template <class Use, int M, int N, int K, class T, class Layout>
void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, T value)
{
    for (auto& e : f.x)
        e = value;
}

template <class Use, int M, int N, int K, class T>
void load_matrix_sync(fragment<Use, M, N, K, T, row_major>& f, const T* p, unsigned ldm)
{
    using F = fragment<Use, M, N, K, T, row_major>;
    detail::check(p, ldm, F::rows, F::cols, "wmma::load_matrix_sync");
    for (int r = 0; r < F::rows; ++r)
        for (int c = 0; c < F::cols; ++c)
            f.x[r * F::cols + c] = p[std::size_t(r) * ldm + c];
}

template <int M, int N, int K, class AT, class AL, class BL>
void mma_sync(fragment<accumulator, M, N, K, float>& d, const fragment<matrix_a, M, N, K, AT, AL>& a,
    const fragment<matrix_b, M, N, K, AT, BL>& b, const fragment<accumulator, M, N, K, float>& c)
{
    fragment<accumulator, M, N, K, float> out;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float sum = c.x[i * N + j];
            for (int k = 0; k < K; ++k)
                sum += __half2float(a.x[i * K + k]) * __half2float(b.x[k * N + j]);
            out.x[i * N + j] = sum;
        }
    d = out;
}

template <int M, int N, int K>
void store_matrix_sync(float* p, const fragment<accumulator, M, N, K, float>& f, unsigned ldm, layout_t layout)
{
    detail::check(p, ldm, M, N, "wmma::store_matrix_sync");
    for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c)
            p[layout == mem_row_major ? std::size_t(r) * ldm + c : std::size_t(c) * ldm + r] = f.x[r * N + c];
}

} // namespace nvcuda::wmma

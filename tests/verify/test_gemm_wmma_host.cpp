// The bundled WMMA candidate for gemm_fp16 (resources/examples/gemm_fp16/wmma.cu) run on the CPU, without a
// GPU: its own source compiled for the host against stand-ins for <mma.h> and <cuda_fp16.h> that enforce
// what CUDA documents for WMMA (256-bit aligned pointers, a leading dimension that is a multiple of 16
// bytes, rows inside their buffers), launched as the problem's launch plan says at every fuzz size, its
// fp16 C compared with the reference's arithmetic (K products summed in order in fp32, rounded once) under
// the problem's f16 tolerances. On the H200 the candidate's evaluate failed: at the fuzz size M=1031,
// N=67, K=1024 the fragment path loaded B with ldm=67 halves (134 bytes), a misaligned address there.
#include "core/model/launch_plan.h"
#include "core/model/problem.h"
#include "core/verify/output_check.h"

#include "host_cuda/kernel_host.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast" // the kernel's own text
#pragma GCC diagnostic ignored "-Wpedantic"
#include "wmma.cu"
#pragma GCC diagnostic pop

#include <QTest>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

namespace {

const std::string kExample = KL_SOURCE_DIR "/resources/examples/gemm_fp16/";

// A device allocation's alignment (cuMemAlloc gives 256 bytes or more; the runner's guards keep it).
struct DeviceLike {
    std::unique_ptr<__half[], void (*)(__half*)> data { nullptr, [](__half*) {} };
    std::size_t count = 0;
    explicit DeviceLike(std::size_t n)
        : data(
            static_cast<__half*>(::operator new[](std::max<std::size_t>(n, 1) * sizeof(__half), std::align_val_t(256))),
            [](__half* p) { ::operator delete[](p, std::align_val_t(256)); })
        , count(n)
    {
        kl::host_cuda::allocations.push_back({ data.get(), n * sizeof(__half) });
    }
};

struct Outcome {
    QString failure; // empty: every element within tolerance
    std::int64_t elements = 0;
};

Outcome runAt(const kl::Problem& problem, const kl::Candidate& candidate, const kl::SizeSet& sizes)
{
    const auto plan = kl::planLaunches(problem, candidate, sizes, candidate.defaults());
    const auto M = sizes.values.at("M"), N = sizes.values.at("N"), K = sizes.values.at("K");
    kl::host_cuda::allocations.clear();
    DeviceLike a(std::size_t(M * K)), b(std::size_t(K * N)), c(std::size_t(M * N));
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (std::size_t i = 0; i < a.count; ++i)
        a.data[i] = __float2half(uniform(rng));
    for (std::size_t i = 0; i < b.count; ++i)
        b.data[i] = __float2half(uniform(rng));
    for (std::size_t i = 0; i < c.count; ++i)
        c.data[i] = __float2half(NAN); // poisoned: an element left unwritten fails
    Outcome out;
    if (plan.launches.size() != 1 || plan.launches.front().kernel != "gemm_wmma")
        return { QStringLiteral("expected one launch of gemm_wmma") };
    const auto& launch = plan.launches.front();
    try {
        for (std::int64_t by = 0; by < launch.grid[1]; ++by)
            for (std::int64_t bx = 0; bx < launch.grid[0]; ++bx)
                for (std::int64_t tx = 0; tx < launch.block[0]; ++tx) {
                    blockIdx = { unsigned(bx), unsigned(by), 0 };
                    threadIdx = { unsigned(tx), 0, 0 };
                    gemm_wmma(a.data.get(), b.data.get(), c.data.get(), int(M), int(N), int(K));
                }
    } catch (const kl::host_cuda::Misuse& misuse) {
        return { QString::fromStdString(misuse.what()) };
    }
    const auto tolerance = problem.tolerance(kl::DType::F16);
    for (std::int64_t row = 0; row < M; ++row)
        for (std::int64_t col = 0; col < N; ++col) {
            float sum = 0.0f;
            for (std::int64_t k = 0; k < K; ++k)
                sum += __half2float(a.data[std::size_t(row * K + k)]) * __half2float(b.data[std::size_t(k * N + col)]);
            const double want = __half2float(__float2half(sum));
            const double got = __half2float(c.data[std::size_t(row * N + col)]);
            if (!kl::verify::withinTolerance(got, want, tolerance))
                return { QStringLiteral("c[%1, %2] = %3, expected %4").arg(row).arg(col).arg(got).arg(want) };
            ++out.elements;
        }
    return out;
}

} // namespace

class TestGemmWmmaHost : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyFuzzSizeVerifies_data()
    {
        QTest::addColumn<int>("index");
        const auto problem = kl::loadProblem(kExample + "problem.json");
        for (std::size_t i = 0; i < problem.fuzzSizes.size(); ++i) {
            const auto& v = problem.fuzzSizes[i].values;
            QTest::newRow(qPrintable(QStringLiteral("M=%1 N=%2 K=%3").arg(v.at("M")).arg(v.at("N")).arg(v.at("K"))))
                << int(i);
        }
    }

    void everyFuzzSizeVerifies()
    {
        QFETCH(int, index);
        const auto problem = kl::loadProblem(kExample + "problem.json");
        const auto candidate = kl::loadCandidate(kExample + "wmma.cu");
        const auto& sizes = problem.fuzzSizes[std::size_t(index)];
        const auto outcome = runAt(problem, candidate, sizes);
        QVERIFY2(outcome.failure.isEmpty(), qPrintable(outcome.failure));
        QCOMPARE(outcome.elements, sizes.values.at("M") * sizes.values.at("N"));
    }

    // The stand-ins themselves: a leading dimension of 67 halves is refused, as the device would fault.
    void misalignedFragmentsAreRefused()
    {
        kl::host_cuda::allocations.clear();
        DeviceLike b(16 * 67);
        nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, __half, nvcuda::wmma::row_major> f;
        QVERIFY_THROWS_EXCEPTION(kl::host_cuda::Misuse, nvcuda::wmma::load_matrix_sync(f, b.data.get(), 67));
        QVERIFY_THROWS_EXCEPTION(kl::host_cuda::Misuse, nvcuda::wmma::load_matrix_sync(f, b.data.get() + 8, 64));
        DeviceLike small(16 * 16 - 1);
        QVERIFY_THROWS_EXCEPTION(kl::host_cuda::Misuse, nvcuda::wmma::load_matrix_sync(f, small.data.get(), 16));
    }
};

QTEST_GUILESS_MAIN(TestGemmWmmaHost)
#include "test_gemm_wmma_host.moc"

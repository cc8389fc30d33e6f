#include "runner/tensor_peak.h"

namespace kl::runner {

namespace {
constexpr int kThreads = 256; // 8 warps
constexpr int kBlocksPerSm = 4; // 32 warps per SM: every SM sub-partition has 8 to switch between
constexpr int kChains = 8; // KL_MMA_CHAINS in runner_kernels.cu.inc
constexpr int kIterations = 1024; // ~0.2 ms per launch on an H200
} // namespace

double mmaPeakFlops(std::int64_t blocks, int iterations)
{
    return static_cast<double>(blocks) * (kThreads / 32) * iterations * kChains * 2.0 * 16 * 8 * 16;
}

double measureTensorPeak(const Device& device, const RunnerKernels& ownKernels, Timer& timer)
{
    if (device.computeMajor() < 8)
        return 0.0;
    const std::int64_t blocks
        = std::int64_t { kBlocksPerSm } * device.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    const Measurement m
        = timer.measure([&] { ownKernels.mmaPeak(blocks, kThreads, kIterations); }, TimingBudget { 5.0, 10, 20, 20.0 });
    return m.summary.median > 0.0 ? mmaPeakFlops(blocks, kIterations) / (m.summary.median * 1e6) : 0.0;
}

} // namespace kl::runner

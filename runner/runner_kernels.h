#pragma once
// The runner's own kernels (runner_kernels.cu.inc): inputs generated on the device from a seed,
// pattern fills for poison and sentinels, checksums. Compiled with NVRTC once per process for the
// device's architecture.
#include "core/model/problem.h"
#include "core/verify/device_scan.h"
#include "core/verify/patterns.h"
#include "runner/device.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace kl::runner {

class RunnerKernels {
public:
    // Throws std::runtime_error with NVRTC's log when the source does not compile.
    explicit RunnerKernels(const Device& device);
    ~RunnerKernels();
    RunnerKernels(const RunnerKernels&) = delete;
    RunnerKernels& operator=(const RunnerKernels&) = delete;

    double compileMillis() const { return m_compileMillis; }

    // Writes rows x row_length values of `distribution` at `data` (row stride from the layout),
    // from the counter-based generator keyed by `key`; gaps are left alone.
    void generate(CUdeviceptr data, const verify::TensorLayout& layout, const Distribution& distribution,
        std::uint64_t key) const;
    // `bytes` bytes at `pointer` (8-byte aligned) := pattern repeated (byte i = byte i % 8).
    void fill(CUdeviceptr pointer, std::size_t bytes, std::uint64_t pattern) const;
    // The padding gap after every row := sentinel. No-op for a contiguous layout.
    void fillGaps(CUdeviceptr data, const verify::TensorLayout& layout, std::byte sentinel) const;
    // Reads `bytes` bytes at `pointer` (8-byte aligned) on the stream without waiting: after the
    // timer's memset, this leaves clean lines in L2 instead of dirty ones (see Timer::flush).
    void touch(CUdeviceptr pointer, std::size_t bytes) const;
    // Order-independent checksum of `bytes` bytes at `pointer` (8-byte aligned); synchronises.
    std::uint64_t checksum(CUdeviceptr pointer, std::size_t bytes) const;

    // core/verify's checks of one output on the device: counts, maximum errors, and where the worst mismatch
    // and the first unwritten element are (a second pass, after a mismatch only). `actual` and `expected`
    // point at data regions of the same layout; synchronises.
    verify::DeviceScan compare(
        CUdeviceptr actual, CUdeviceptr expected, const verify::TensorLayout& layout, const Tolerance& tolerance) const;
    // Bytes other than the sentinel in the guards around `data` and in the layout's padding gaps, and the
    // first one's offset from the allocation's start (-1 when none); synchronises.
    std::pair<std::int64_t, std::int64_t> changedGuardBytes(
        CUdeviceptr data, const verify::TensorLayout& layout, std::size_t guardBytes) const;

    // One launch of kl_mma_peak (runner/tensor_peak.h): `blocks` x `threads`, `iterations` rounds of
    // mma.sync per warp; enqueued on the stream, not waited for.
    void mmaPeak(std::int64_t blocks, int threads, int iterations) const;

    // A key per buffer and trial: the same seed and name give the same values in every run.
    static std::uint64_t keyFor(std::uint64_t seed, const std::string& bufferName);

private:
    void launch(CUfunction function, std::int64_t work, void** args) const;
    const Device& m_device;
    CUmodule m_module = nullptr;
    std::map<DType, CUfunction> m_generate;
    std::map<DType, CUfunction> m_compare;
    std::map<DType, CUfunction> m_worst;
    CUfunction m_countOther = nullptr;
    CUfunction m_countOtherInGaps = nullptr;
    DeviceBuffer m_results; // eight 64-bit slots for the checks
    CUfunction m_fill = nullptr;
    CUfunction m_fillGaps = nullptr;
    CUfunction m_checksum = nullptr;
    CUfunction m_mmaPeak = nullptr;
    DeviceBuffer m_checksumSlot;
    DeviceBuffer m_touchSlot;
    double m_compileMillis = 0.0;
    std::int64_t m_maxBlocks = 2048;
};

} // namespace kl::runner

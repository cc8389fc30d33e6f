#pragma once
// The runner's own kernels (helper_kernels.cu.inc): inputs generated on the device from a seed,
// pattern fills for poison and sentinels, checksums. Compiled with NVRTC once per process for the
// device's architecture.
#include "core/model/problem.h"
#include "core/verify/patterns.h"
#include "runner/device.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace kl::runner {

class HelperKernels {
public:
    // Throws std::runtime_error with NVRTC's log when the source does not compile.
    explicit HelperKernels(const Device& device);
    ~HelperKernels();
    HelperKernels(const HelperKernels&) = delete;
    HelperKernels& operator=(const HelperKernels&) = delete;

    double compileMillis() const { return m_compileMillis; }

    // Writes rows x row_length values of `distribution` at `data` (row stride from the layout),
    // from the counter-based generator keyed by `key`; gaps are left alone.
    void generate(CUdeviceptr data, const verify::TensorLayout& layout, const Distribution& distribution,
                  std::uint64_t key) const;
    // `bytes` bytes at `pointer` (8-byte aligned) := pattern repeated (byte i = byte i % 8).
    void fill(CUdeviceptr pointer, std::size_t bytes, std::uint64_t pattern) const;
    // The padding gap after every row := sentinel. No-op for a contiguous layout.
    void fillGaps(CUdeviceptr data, const verify::TensorLayout& layout, std::byte sentinel) const;
    // Order-independent checksum of `bytes` bytes at `pointer` (8-byte aligned); synchronises.
    std::uint64_t checksum(CUdeviceptr pointer, std::size_t bytes) const;

    // A key per buffer and trial: the same seed and name give the same values in every run.
    static std::uint64_t keyFor(std::uint64_t seed, const std::string& bufferName);

private:
    void launch(CUfunction function, std::int64_t work, void** args) const;
    const Device& m_device;
    CUmodule m_module = nullptr;
    std::map<DType, CUfunction> m_generate;
    CUfunction m_fill = nullptr;
    CUfunction m_fillGaps = nullptr;
    CUfunction m_checksum = nullptr;
    DeviceBuffer m_checksumSlot;
    double m_compileMillis = 0.0;
    std::int64_t m_maxBlocks = 2048;
};

} // namespace kl::runner

#pragma once
// Tensor-core instructions in a candidate's code: whether a kernel whose FLOPs run in a tensor precision
// uses the tensor cores at all. Counted statically (instructions in the listing, not executed ones) in
// the SASS where it was disassembled (HMMA, HGMMA, IMMA, IGMMA, QGMMA, DMMA, ...: every opcode ending in
// MMA), else in the PTX (mma.sync, wgmma.mma_async, wmma.mma, tcgen05.mma).
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kl::lines {

struct TensorInstructions {
    std::int64_t count = 0;
    std::string source; // "SASS" | "PTX"
    std::map<std::string, std::int64_t> byOpcode; // "HMMA" → 64, "mma.sync" → 8
    // "no HMMA/HGMMA/IMMA/IGMMA/QGMMA in the SASS", or "64 HMMA in the SASS".
    std::string text() const;
};

// From the SASS when it holds any instruction, else from the PTX; nothing when both are empty.
std::optional<TensorInstructions> countTensorInstructions(const std::string& sass, const std::string& ptx);

} // namespace kl::lines

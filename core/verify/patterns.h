#pragma once
// The byte patterns the runner writes before a candidate runs, so that afterwards we can tell what
// the candidate touched: outputs are poisoned (a NaN no arithmetic produces; 0xA5 bytes for
// integers), padding gaps and the guard zones around each output hold a sentinel byte.
#include "core/model/dtype.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kl::verify {

// Every output allocation is laid out as [guard | rows * row_stride elements | guard].
constexpr std::size_t kGuardBytes = 64 * 1024;
constexpr std::byte kSentinelByte { 0x5a };

// One element of poison, little-endian: f16 0x7da5, bf16 0x7fa5, f32 0x7fa5a5a5,
// f64 0x7ff5a5a5a5a5a5a5 (signalling NaNs with a payload no arithmetic produces), integers 0xa5
// in every byte.
std::vector<std::byte> poisonElement(DType type);
// The element repeated to fill 8 bytes (little-endian): byte i of a poisoned buffer is byte
// (i % 8) of this word, which is how the runner's fill kernel writes it.
std::uint64_t poisonPattern(DType type);
// The sentinel byte repeated to 8 bytes.
constexpr std::uint64_t kSentinelPattern = 0x5a5a5a5a5a5a5a5aull;

// Where a tensor's data lives inside its buffer (the same fields as a launch plan's buffer).
struct TensorLayout {
    DType type = DType::F32;
    std::int64_t rows = 1;
    std::int64_t rowLength = 0;
    std::int64_t rowStride = 0;

    std::int64_t elements() const { return rows * rowStride; }
    std::int64_t dataElements() const { return rows * rowLength; }
    std::size_t elementBytes() const { return dtypeSize(type); }
    std::size_t bytes() const { return static_cast<std::size_t>(elements()) * elementBytes(); }
    bool padded() const { return rowStride > rowLength; }
};

} // namespace kl::verify

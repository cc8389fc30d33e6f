#pragma once
// Reading and writing single elements of a raw device buffer on the host, for every dtype a problem
// may use. f16 and bf16 are decoded by hand: the host compiler has no half type we can rely on.
#include "core/model/dtype.h"

#include <cstddef>
#include <cstdint>

namespace kl::verify {

double halfToDouble(std::uint16_t bits);
double bfloat16ToDouble(std::uint16_t bits);
std::uint16_t doubleToHalf(double value); // round to nearest even, saturating to ±inf
std::uint16_t doubleToBfloat16(double value); // round to nearest even

// `data` points at the element's first byte (any alignment).
double readElement(DType type, const std::byte* data);
void writeElement(DType type, double value, std::byte* data);

} // namespace kl::verify

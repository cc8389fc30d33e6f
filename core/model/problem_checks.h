#pragma once
// The checks of a problem that need values, not just the JSON's shape: scalars and distributions
// within their dtype, and every expression (shapes, row padding, bytes, flops) evaluated at every
// size set, main and fuzz, so that "check" refuses a problem the runner would choke on.
#include "core/model/problem.h"

#include <string>

namespace kl {

// Largest value of one size symbol, and of one tensor's bytes at any size set.
constexpr std::int64_t kMaxSizeValue = std::int64_t(1) << 40;
constexpr double kMaxTensorBytes = 64.0 * 1024 * 1024 * 1024;

// How many of each a problem may declare: every size set is planned, checked and verified on the GPU,
// so a file with 100,000 of them would hold `check` for minutes (and verification for hours).
constexpr std::size_t kMaxMainSizes = 64;
constexpr std::size_t kMaxFuzzSizes = 512;
constexpr std::size_t kMaxSymbols = 32;
constexpr std::size_t kMaxTensors = 64; // inputs, and outputs, each
constexpr std::size_t kMaxScalars = 64;

// Throws kl::Error(category) when `count` entries at `where` are more than `limit` ("problem.too-many-sizes",
// "problem.too-many-symbols", "problem.too-many-tensors", "problem.too-many-scalars").
void checkCount(std::size_t count, std::size_t limit, const std::string& category, const std::string& file,
    const std::string& where);

// Throws kl::Error("problem.bad-scalar"): outside the dtype's range, or not whole for an integer dtype.
void checkScalarValue(const ScalarSpec& scalar, const std::string& file, const std::string& where);

// Throws kl::Error("problem.bad-distribution"): bounds outside the tensor's dtype, or integers
// bounds that are not whole numbers.
void checkDistribution(const Distribution& distribution, DType type, const std::string& file, const std::string& where);

// Throws kl::Error: "problem.bad-shape" (a dimension below 1, a tensor over kMaxTensorBytes),
// "problem.bad-padding" (row padding negative or not whole), "problem.bad-bytes" (not above zero or
// not finite), "problem.bad-flops" (negative or not finite), each naming the size set.
void checkAtEverySize(const Problem& problem);

} // namespace kl

#pragma once
// Checking one output of a candidate against the reference, on host copies of the device buffers.
// The order of the checks is the protocol's (docs/runner-protocol.md): guards and padding, then
// unwritten elements, then NaN/Inf, then stale output, then the tolerance.
#include "core/model/problem.h"
#include "core/verify/patterns.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kl::verify {

// A few elements of one row around the worst one, for a person or an LLM to read.
struct ErrorWindow {
    std::array<std::int64_t, 2> start { 0, 0 }; // [row, column] of the first element shown
    std::vector<double> expected; // NaN where the value is not a number
    std::vector<double> actual;
};

struct OutputReport {
    std::string category; // empty when the output passed; else a protocol category
    std::int64_t elements = 0; // data elements compared (rows * row_length)
    std::int64_t mismatches = 0; // outside tolerance (NaN/Inf where the reference is finite included)
    std::int64_t unwritten = 0; // still holding the poison
    std::int64_t nonFinite = 0; // NaN/Inf where the reference is finite (poison excluded)
    std::int64_t guardBytesChanged = 0; // in the guard zones and padding gaps
    std::int64_t firstChangedGuardOffset = -1; // byte offset from the buffer's start (guard included)
    double maxAbsError = 0.0;
    double maxRelError = 0.0;
    std::array<std::int64_t, 2> worstIndex { 0, 0 };
    ErrorWindow window;
    bool passed() const { return category.empty(); }
};

struct OutputEvidence {
    TensorLayout layout;
    Tolerance tolerance;
    std::size_t guardBytes = kGuardBytes;
    // The candidate's whole allocation: guard, rows * row_stride elements, guard.
    std::span<const std::byte> actual;
    // The reference's data region (rows * row_stride elements, no guards).
    std::span<const std::byte> expected;
    // The previous trial's data regions (candidate and reference); empty on the first trial.
    std::span<const std::byte> previousActual;
    std::span<const std::byte> previousExpected;
};

// Runs every check and names the first that failed. Throws std::invalid_argument when the spans
// are smaller than the layout says.
OutputReport checkOutput(const OutputEvidence& evidence);

// The parts, for tests and for callers that need only one.
// Bytes other than the sentinel in the guards and the padding gaps (data excluded).
std::int64_t countChangedGuardBytes(const TensorLayout& layout, std::span<const std::byte> whole,
    std::size_t guardBytes, std::int64_t* firstOffset = nullptr);
std::int64_t countPoisoned(const TensorLayout& layout, std::span<const std::byte> data);
// Bit-identical data (padding ignored).
bool sameData(const TensorLayout& layout, std::span<const std::byte> a, std::span<const std::byte> b);

// |actual - expected| <= atol + rtol * |expected|; NaN matches NaN, ±Inf matches the same Inf.
bool withinTolerance(double actual, double expected, const Tolerance& tolerance);

// The window's elements: kWindowLength of one row around `worst` ([row, column]), kWindowBefore of them
// before it where the row allows; nullopt for rows of no elements. Host and device reports share it.
constexpr std::int64_t kWindowBefore = 3;
constexpr std::int64_t kWindowLength = 8;
struct WindowSpan {
    std::int64_t row = 0;
    std::int64_t start = 0; // first column shown
    std::int64_t end = 0; // one past the last
};
std::optional<WindowSpan> windowAround(const TensorLayout& layout, std::array<std::int64_t, 2> worst);
// The window's values, read by `expectedAndActual(row, column)` (from host copies or the device).
ErrorWindow readWindow(const WindowSpan& span,
    const std::function<std::pair<double, double>(std::int64_t row, std::int64_t column)>& expectedAndActual);

// "[3, 517]" style text of a report, one line, for logs and LLM prompts.
std::string describe(const OutputReport& report, const std::string& outputName);

} // namespace kl::verify

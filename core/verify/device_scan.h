#pragma once
// The runner's comparison on the device (runner/runner_kernels.cu.inc) returns counts and two indices, not
// the tensors: this is that small report, the report a person reads built from it, and the device's
// algorithm run on host copies so that the CPU tests can hold it against checkOutput.
#include "core/verify/output_check.h"

#include <cstdint>
#include <functional>

namespace kl::verify {

struct DeviceScan {
    std::int64_t elements = 0;
    std::int64_t unwritten = 0;
    std::int64_t nonFinite = 0;
    std::int64_t mismatches = 0;
    double maxAbsError = 0.0;
    double maxRelError = 0.0;
    double maxScore = -1.0; // how far the worst mismatch is outside tolerance (element_verdict.h)
    std::int64_t firstUnwritten = -1; // flat index row * row_length + column, -1 when none
    std::int64_t worstMismatch = -1; // the lowest flat index whose score is maxScore, -1 when none
    std::int64_t guardBytesChanged = 0;
    std::int64_t firstChangedGuardOffset = -1; // bytes from the allocation's start (guard included)
};

// The failed check's category in the protocol's order, empty when none failed.
std::string categoryOf(std::int64_t guardBytesChanged, std::int64_t unwritten, std::int64_t nonFinite, bool stale,
    std::int64_t mismatches);

// The report checkOutput gives on the same data: counts, category, worst index, and the window whose
// values `read(row, column)` returns as (expected, actual) (two small copies from the device).
OutputReport reportFromScan(const TensorLayout& layout, const DeviceScan& scan, bool stale,
    const std::function<std::pair<double, double>(std::int64_t row, std::int64_t column)>& read);

// The device's algorithm on host copies: the same per-element verdict, then the same reductions (counts,
// maxima, the maximum score, then the lowest index holding it, the lowest unwritten index).
DeviceScan scanAsTheDevice(const OutputEvidence& evidence);

} // namespace kl::verify

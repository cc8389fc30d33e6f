#include "core/verify/device_scan.h"

#include "core/verify/element.h"
#include "core/verify/element_verdict.h"

#include <algorithm>
#include <cstring>

namespace kl::verify {

std::string categoryOf(
    std::int64_t guardBytesChanged, std::int64_t unwritten, std::int64_t nonFinite, bool stale, std::int64_t mismatches)
{
    if (guardBytesChanged > 0)
        return "out-of-bounds-write";
    if (unwritten > 0)
        return "unwritten-output";
    if (nonFinite > 0)
        return "nan-output";
    if (stale)
        return "stale-output";
    if (mismatches > 0)
        return "wrong-result";
    return {};
}

OutputReport reportFromScan(const TensorLayout& layout, const DeviceScan& scan, bool stale,
    const std::function<std::pair<double, double>(std::int64_t row, std::int64_t column)>& read)
{
    OutputReport report;
    report.elements = scan.elements;
    report.unwritten = scan.unwritten;
    report.nonFinite = scan.nonFinite;
    report.mismatches = scan.mismatches;
    report.maxAbsError = scan.maxAbsError;
    report.maxRelError = scan.maxRelError;
    report.guardBytesChanged = scan.guardBytesChanged;
    report.firstChangedGuardOffset = scan.firstChangedGuardOffset;
    report.category = categoryOf(scan.guardBytesChanged, scan.unwritten, scan.nonFinite, stale, scan.mismatches);
    const std::int64_t length = std::max<std::int64_t>(layout.rowLength, 1);
    const std::int64_t flat
        = scan.mismatches > 0 ? scan.worstMismatch : (scan.unwritten > 0 ? scan.firstUnwritten : -1);
    if (flat >= 0)
        report.worstIndex = { flat / length, flat % length };
    if (!report.passed())
        if (const std::optional<WindowSpan> span = windowAround(layout, report.worstIndex))
            report.window = readWindow(*span, read);
    return report;
}

DeviceScan scanAsTheDevice(const OutputEvidence& evidence)
{
    const TensorLayout& layout = evidence.layout;
    DeviceScan scan;
    scan.elements = layout.dataElements();
    scan.guardBytesChanged
        = countChangedGuardBytes(layout, evidence.actual, evidence.guardBytes, &scan.firstChangedGuardOffset);
    const std::byte* actual = evidence.actual.data() + evidence.guardBytes;
    const std::byte* expected = evidence.expected.data();
    const auto poison = poisonElement(layout.type);
    const std::size_t size = layout.elementBytes();
    auto at = [&](std::int64_t flat) {
        const std::int64_t row = flat / layout.rowLength, column = flat % layout.rowLength;
        return static_cast<std::size_t>(row * layout.rowStride + column) * size;
    };
    auto verdict = [&](std::int64_t flat) {
        return klElementVerdict(readElement(layout.type, actual + at(flat)),
            readElement(layout.type, expected + at(flat)), isFloating(layout.type), evidence.tolerance.atol,
            evidence.tolerance.rtol);
    };
    // First pass (kl_compare_*): counts, maxima, the maximum score, the lowest unwritten index.
    for (std::int64_t i = 0; i < scan.elements; ++i) {
        if (std::memcmp(actual + at(i), poison.data(), size) == 0) {
            ++scan.unwritten;
            if (scan.firstUnwritten < 0)
                scan.firstUnwritten = i;
            continue;
        }
        const KlElementVerdict v = verdict(i);
        scan.nonFinite += v.nonFinite;
        if (!v.counted)
            continue;
        scan.maxAbsError = std::max(scan.maxAbsError, v.absError);
        scan.maxRelError = std::max(scan.maxRelError, v.relError);
        if (!v.within) {
            ++scan.mismatches;
            scan.maxScore = std::max(scan.maxScore, v.score);
        }
    }
    // Second pass (kl_worst_*), only after a mismatch: the lowest index whose score is the maximum.
    if (scan.mismatches > 0)
        for (std::int64_t i = 0; i < scan.elements && scan.worstMismatch < 0; ++i)
            if (std::memcmp(actual + at(i), poison.data(), size) != 0) {
                const KlElementVerdict v = verdict(i);
                if (!v.within && v.score == scan.maxScore)
                    scan.worstMismatch = i;
            }
    return scan;
}

} // namespace kl::verify

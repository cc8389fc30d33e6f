#include "core/verify/output_check.h"

#include "core/verify/device_scan.h"
#include "core/verify/element.h"
#include "core/verify/element_verdict.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace kl::verify {

namespace {

void requireSize(std::span<const std::byte> span, std::size_t bytes, const char* what)
{
    if (span.size() < bytes)
        throw std::invalid_argument(std::string("verify: ") + what + " holds " + std::to_string(span.size())
            + " bytes, the layout needs " + std::to_string(bytes));
}

std::size_t offsetOf(const TensorLayout& layout, std::int64_t row, std::int64_t column)
{
    return static_cast<std::size_t>(row * layout.rowStride + column) * layout.elementBytes();
}

bool isPoison(const std::byte* element, const std::vector<std::byte>& poison)
{
    return std::memcmp(element, poison.data(), poison.size()) == 0;
}

// Decoders inlined per dtype: the scan touches tens of millions of elements per case, so the
// 16-bit types go through a table instead of bit fiddling per element.
const std::vector<float>& table16(DType type)
{
    static const std::vector<float> half = [] {
        std::vector<float> t(65536);
        for (std::uint32_t i = 0; i < 65536; ++i)
            t[i] = static_cast<float>(halfToDouble(static_cast<std::uint16_t>(i)));
        return t;
    }();
    static const std::vector<float> bfloat = [] {
        std::vector<float> t(65536);
        for (std::uint32_t i = 0; i < 65536; ++i)
            t[i] = static_cast<float>(bfloat16ToDouble(static_cast<std::uint16_t>(i)));
        return t;
    }();
    return type == DType::F16 ? half : bfloat;
}

template <typename Raw, typename Decode>
void scanTyped(const TensorLayout& layout, std::span<const std::byte> actual, std::span<const std::byte> expected,
    const Tolerance& tolerance, OutputReport& report, Decode decode)
{
    Raw poison;
    const auto poisonBytes = poisonElement(layout.type);
    std::memcpy(&poison, poisonBytes.data(), sizeof(Raw));
    const bool floating = isFloating(layout.type);
    double worstScore = -1.0;
    std::vector<Raw> gotRow(static_cast<std::size_t>(layout.rowLength));
    std::vector<Raw> wantRow(static_cast<std::size_t>(layout.rowLength));
    for (std::int64_t row = 0; row < layout.rows; ++row) {
        const std::size_t offset = offsetOf(layout, row, 0);
        std::memcpy(gotRow.data(), actual.data() + offset, gotRow.size() * sizeof(Raw));
        std::memcpy(wantRow.data(), expected.data() + offset, wantRow.size() * sizeof(Raw));
        for (std::int64_t column = 0; column < layout.rowLength; ++column) {
            const Raw rawGot = gotRow[static_cast<std::size_t>(column)];
            if (rawGot == poison) {
                ++report.unwritten;
                continue;
            }
            const KlElementVerdict v = klElementVerdict(decode(rawGot),
                decode(wantRow[static_cast<std::size_t>(column)]), floating, tolerance.atol, tolerance.rtol);
            report.nonFinite += v.nonFinite;
            if (!v.counted)
                continue; // NaN where NaN was expected, or the same infinity
            report.maxAbsError = std::max(report.maxAbsError, v.absError);
            if (v.relError >= 0.0)
                report.maxRelError = std::max(report.maxRelError, v.relError);
            if (v.within)
                continue;
            ++report.mismatches;
            const double score = v.score;
            if (score > worstScore) {
                worstScore = score;
                report.worstIndex = { row, column };
            }
        }
    }
}

template <typename T> double plain(T value) { return static_cast<double>(value); }

void scanElements(const TensorLayout& layout, std::span<const std::byte> actual, std::span<const std::byte> expected,
    const Tolerance& tolerance, OutputReport& report)
{
    switch (layout.type) {
    case DType::F16:
    case DType::BF16: {
        const float* table = table16(layout.type).data();
        scanTyped<std::uint16_t>(layout, actual, expected, tolerance, report,
            [table](std::uint16_t v) { return static_cast<double>(table[v]); });
        break;
    }
    case DType::F32:
        scanTyped<std::uint32_t>(layout, actual, expected, tolerance, report,
            [](std::uint32_t v) { return static_cast<double>(std::bit_cast<float>(v)); });
        break;
    case DType::F64:
        scanTyped<std::uint64_t>(
            layout, actual, expected, tolerance, report, [](std::uint64_t v) { return std::bit_cast<double>(v); });
        break;
    case DType::I8:
        scanTyped<std::uint8_t>(layout, actual, expected, tolerance, report,
            [](std::uint8_t v) { return plain(static_cast<std::int8_t>(v)); });
        break;
    case DType::U8:
        scanTyped<std::uint8_t>(layout, actual, expected, tolerance, report, [](std::uint8_t v) { return plain(v); });
        break;
    case DType::I32:
        scanTyped<std::uint32_t>(layout, actual, expected, tolerance, report,
            [](std::uint32_t v) { return plain(static_cast<std::int32_t>(v)); });
        break;
    case DType::I64:
        scanTyped<std::uint64_t>(layout, actual, expected, tolerance, report,
            [](std::uint64_t v) { return plain(static_cast<std::int64_t>(v)); });
        break;
    }
}
} // namespace

bool withinTolerance(double actual, double expected, const Tolerance& tolerance)
{
    return klElementVerdict(actual, expected, 1, tolerance.atol, tolerance.rtol).within != 0;
}

std::int64_t countChangedGuardBytes(
    const TensorLayout& layout, std::span<const std::byte> whole, std::size_t guardBytes, std::int64_t* firstOffset)
{
    requireSize(whole, layout.bytes() + 2 * guardBytes, "the output allocation");
    std::int64_t changed = 0;
    std::int64_t first = -1;
    auto scan = [&](std::size_t from, std::size_t to) {
        for (std::size_t i = from; i < to; ++i) {
            if (whole[i] != kSentinelByte) {
                if (first < 0)
                    first = static_cast<std::int64_t>(i);
                ++changed;
            }
        }
    };
    scan(0, guardBytes);
    if (layout.padded()) {
        const std::size_t rowBytes = static_cast<std::size_t>(layout.rowLength) * layout.elementBytes();
        const std::size_t strideBytes = static_cast<std::size_t>(layout.rowStride) * layout.elementBytes();
        for (std::int64_t row = 0; row < layout.rows; ++row) {
            const std::size_t rowStart = guardBytes + static_cast<std::size_t>(row) * strideBytes;
            scan(rowStart + rowBytes, rowStart + strideBytes);
        }
    }
    scan(guardBytes + layout.bytes(), layout.bytes() + 2 * guardBytes);
    if (firstOffset)
        *firstOffset = first;
    return changed;
}

std::int64_t countPoisoned(const TensorLayout& layout, std::span<const std::byte> data)
{
    requireSize(data, layout.bytes(), "the output");
    const auto poison = poisonElement(layout.type);
    std::int64_t count = 0;
    for (std::int64_t row = 0; row < layout.rows; ++row)
        for (std::int64_t column = 0; column < layout.rowLength; ++column)
            count += isPoison(data.data() + offsetOf(layout, row, column), poison);
    return count;
}

bool sameData(const TensorLayout& layout, std::span<const std::byte> a, std::span<const std::byte> b)
{
    requireSize(a, layout.bytes(), "the first output");
    requireSize(b, layout.bytes(), "the second output");
    const std::size_t rowBytes = static_cast<std::size_t>(layout.rowLength) * layout.elementBytes();
    for (std::int64_t row = 0; row < layout.rows; ++row) {
        const std::size_t offset = offsetOf(layout, row, 0);
        if (std::memcmp(a.data() + offset, b.data() + offset, rowBytes) != 0)
            return false;
    }
    return true;
}

OutputReport checkOutput(const OutputEvidence& evidence)
{
    const TensorLayout& layout = evidence.layout;
    requireSize(evidence.actual, layout.bytes() + 2 * evidence.guardBytes, "the output allocation");
    requireSize(evidence.expected, layout.bytes(), "the reference output");
    const std::span<const std::byte> actual = evidence.actual.subspan(evidence.guardBytes, layout.bytes());
    const std::span<const std::byte> expected = evidence.expected.first(layout.bytes());

    OutputReport report;
    report.elements = layout.dataElements();
    report.guardBytesChanged
        = countChangedGuardBytes(layout, evidence.actual, evidence.guardBytes, &report.firstChangedGuardOffset);

    scanElements(layout, actual, expected, evidence.tolerance, report);

    bool stale = false;
    if (!evidence.previousActual.empty() && !evidence.previousExpected.empty())
        stale = sameData(layout, actual, evidence.previousActual)
            && !sameData(layout, expected, evidence.previousExpected);

    report.category
        = categoryOf(report.guardBytesChanged, report.unwritten, report.nonFinite, stale, report.mismatches);

    // The window: around the worst mismatch, else around the first unwritten element.
    if (report.mismatches == 0 && report.unwritten > 0) {
        const auto poison = poisonElement(layout.type);
        for (std::int64_t i = 0; i < layout.dataElements(); ++i) {
            const std::int64_t row = i / std::max<std::int64_t>(layout.rowLength, 1);
            const std::int64_t column = i % std::max<std::int64_t>(layout.rowLength, 1);
            if (isPoison(actual.data() + offsetOf(layout, row, column), poison)) {
                report.worstIndex = { row, column };
                break;
            }
        }
    }
    if (!report.passed())
        if (const std::optional<WindowSpan> span = windowAround(layout, report.worstIndex))
            report.window = readWindow(*span, [&](std::int64_t row, std::int64_t column) {
                const std::size_t offset = offsetOf(layout, row, column);
                return std::pair { readElement(layout.type, expected.data() + offset),
                    readElement(layout.type, actual.data() + offset) };
            });
    return report;
}

std::optional<WindowSpan> windowAround(const TensorLayout& layout, std::array<std::int64_t, 2> worst)
{
    if (layout.rowLength <= 0)
        return std::nullopt;
    const std::int64_t start = std::clamp<std::int64_t>(
        worst[1] - kWindowBefore, 0, std::max<std::int64_t>(layout.rowLength - kWindowLength, 0));
    return WindowSpan { worst[0], start, std::min(start + kWindowLength, layout.rowLength) };
}

ErrorWindow readWindow(const WindowSpan& span,
    const std::function<std::pair<double, double>(std::int64_t row, std::int64_t column)>& expectedAndActual)
{
    ErrorWindow window;
    window.start = { span.row, span.start };
    for (std::int64_t c = span.start; c < span.end; ++c) {
        const auto [expected, actual] = expectedAndActual(span.row, c);
        window.expected.push_back(expected);
        window.actual.push_back(actual);
    }
    return window;
}

std::string describe(const OutputReport& report, const std::string& outputName)
{
    std::ostringstream out;
    if (report.passed()) {
        out << outputName << ": " << report.elements << " elements within tolerance";
        return out.str();
    }
    out << outputName << ": " << report.category;
    if (report.category == "out-of-bounds-write")
        out << " (" << report.guardBytesChanged << " guard/padding bytes changed, first at byte "
            << report.firstChangedGuardOffset << ")";
    else if (report.category == "unwritten-output")
        out << " (" << report.unwritten << " of " << report.elements << " elements never written, first at ["
            << report.worstIndex[0] << ", " << report.worstIndex[1] << "])";
    else if (report.category == "stale-output")
        out << " (bit-identical to the previous trial's output although the inputs changed)";
    else
        out << " (" << report.mismatches << " of " << report.elements << " elements off, " << report.nonFinite
            << " NaN/Inf; max abs error " << report.maxAbsError << ", max rel error " << report.maxRelError
            << ", worst at [" << report.worstIndex[0] << ", " << report.worstIndex[1] << "])";
    return out.str();
}

} // namespace kl::verify

// The runner's device comparison (issue 27) held against the host's checkOutput: the device's algorithm
// (core/verify/device_scan: the shared per-element verdict, then counts, maxima, the maximum score and the
// lowest index holding it) run on host copies must give the same report — category, counts, errors, worst
// index, window — for every dtype and every kind of failure. The kernels themselves run in the GPU suites.
#include "core/verify/device_scan.h"
#include "core/verify/element.h"
#include "core/verify/output_check.h"

#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace kl;
using namespace kl::verify;

namespace {

struct Case {
    TensorLayout layout;
    std::size_t guard = 64;
    std::vector<std::byte> actual; // guard + data + guard
    std::vector<std::byte> expected;

    Case(DType type, std::int64_t rows, std::int64_t length, std::int64_t stride, unsigned seed)
        : layout { type, rows, length, stride }
    {
        actual.assign(layout.bytes() + 2 * guard, kSentinelByte);
        expected.assign(layout.bytes(), kSentinelByte);
        std::mt19937 random(seed);
        std::normal_distribution<double> normal(0.0, 3.0);
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t c = 0; c < length; ++c) {
                const double v = isFloating(type) ? normal(random) : std::round(normal(random) * 10.0);
                set(r, c, v, v);
            }
    }
    std::size_t at(std::int64_t r, std::int64_t c) const
    {
        return static_cast<std::size_t>(r * layout.rowStride + c) * layout.elementBytes();
    }
    void set(std::int64_t r, std::int64_t c, double got, double want)
    {
        writeElement(layout.type, got, actual.data() + guard + at(r, c));
        writeElement(layout.type, want, expected.data() + at(r, c));
    }
    void setActual(std::int64_t r, std::int64_t c, double got)
    {
        writeElement(layout.type, got, actual.data() + guard + at(r, c));
    }
    void poison(std::int64_t r, std::int64_t c)
    {
        const auto p = poisonElement(layout.type);
        std::memcpy(actual.data() + guard + at(r, c), p.data(), p.size());
    }
    OutputEvidence evidence(Tolerance tolerance) const
    {
        return { layout, tolerance, guard, actual, expected, {}, {} };
    }
};

Case make(const std::string& scenario, DType type)
{
    const bool floating = isFloating(type);
    Case c(type, 37, 61, scenario == "padded" || scenario == "gap-write" ? 64 : 61, 1234);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    if (scenario == "one-wrong")
        c.setActual(20, 59, 1000.0);
    else if (scenario == "tie") { // two equally bad elements: the lower index is the worst
        c.set(30, 5, 50.0, 10.0);
        c.set(2, 40, 50.0, 10.0);
    } else if (scenario == "noise") { // many small errors, one of them worst
        for (std::int64_t r = 0; r < 37; ++r)
            for (std::int64_t col = r % 3; col < 61; col += 3)
                c.set(r, col, 1.0 + 0.02 * ((r + col) % 5), 1.0);
    } else if (scenario == "nan" && floating) {
        c.setActual(11, 3, nan);
        c.setActual(12, 4, 7.0);
    } else if (scenario == "inf" && floating) {
        c.set(4, 4, inf, inf); // the same infinity: no error
        c.setActual(5, 6, -inf);
    } else if (scenario == "nan-expected" && floating) {
        c.set(8, 8, nan, nan); // NaN where NaN was expected: passes
        c.set(9, 9, 1.0, nan);
    } else if (scenario == "unwritten") {
        c.poison(36, 60);
        c.poison(17, 0);
    } else if (scenario == "unwritten-and-wrong") {
        c.poison(3, 3);
        c.setActual(1, 1, 999.0);
    } else if (scenario == "guard-write") {
        c.actual[c.guard + c.layout.bytes() + 5] = std::byte { 0 };
        c.setActual(0, 0, 500.0);
    } else if (scenario == "gap-write") {
        c.actual[c.guard + c.at(6, 62)] = std::byte { 1 };
    } else if (scenario == "zero-tolerance")
        c.setActual(7, 7, 1e-3 + 3.0);
    return c;
}

} // namespace

class TestDeviceScan : public QObject {
    Q_OBJECT
private slots:
    void sameReportAsTheHost_data()
    {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<int>("type");
        const char* const scenarios[] = { "pass", "padded", "one-wrong", "tie", "noise", "nan", "inf", "nan-expected",
            "unwritten", "unwritten-and-wrong", "guard-write", "gap-write", "zero-tolerance" };
        const std::pair<DType, const char*> types[]
            = { { DType::F16, "f16" }, { DType::BF16, "bf16" }, { DType::F32, "f32" }, { DType::F64, "f64" },
                  { DType::I8, "i8" }, { DType::I32, "i32" }, { DType::I64, "i64" } };
        for (const char* s : scenarios)
            for (const auto& [type, name] : types)
                QTest::addRow("%s/%s", s, name) << QString::fromLatin1(s) << static_cast<int>(type);
    }
    void sameReportAsTheHost()
    {
        QFETCH(QString, scenario);
        QFETCH(int, type);
        const Case c = make(scenario.toStdString(), static_cast<DType>(type));
        const Tolerance tolerance
            = scenario == QLatin1String("zero-tolerance") ? Tolerance { 0.0, 0.0 } : Tolerance { 1e-2, 1e-2 };
        const OutputEvidence evidence = c.evidence(tolerance);
        const OutputReport host = checkOutput(evidence);
        const DeviceScan scan = scanAsTheDevice(evidence);
        const std::span<const std::byte> data(c.actual.data() + c.guard, c.layout.bytes());
        const OutputReport device = reportFromScan(c.layout, scan, false, [&](std::int64_t r, std::int64_t col) {
            return std::pair { readElement(c.layout.type, c.expected.data() + c.at(r, col)),
                readElement(c.layout.type, data.data() + c.at(r, col)) };
        });
        QCOMPARE(QString::fromStdString(device.category), QString::fromStdString(host.category));
        QCOMPARE(device.elements, host.elements);
        QCOMPARE(device.mismatches, host.mismatches);
        QCOMPARE(device.unwritten, host.unwritten);
        QCOMPARE(device.nonFinite, host.nonFinite);
        QCOMPARE(device.guardBytesChanged, host.guardBytesChanged);
        QCOMPARE(device.firstChangedGuardOffset, host.firstChangedGuardOffset);
        QCOMPARE(device.maxAbsError, host.maxAbsError);
        QCOMPARE(device.maxRelError, host.maxRelError);
        QCOMPARE(device.worstIndex, host.worstIndex);
        QCOMPARE(device.window.start, host.window.start);
        QCOMPARE(device.window.expected.size(), host.window.expected.size());
        for (std::size_t i = 0; i < host.window.expected.size(); ++i) {
            const bool bothNan = std::isnan(device.window.actual[i]) && std::isnan(host.window.actual[i]);
            QVERIFY(bothNan || device.window.actual[i] == host.window.actual[i]);
            QCOMPARE(device.window.expected[i], host.window.expected[i]);
        }
        QCOMPARE(QString::fromStdString(describe(device, "y")), QString::fromStdString(describe(host, "y")));
    }

    // The scenarios do fail where they should: the comparison above is not between two empty reports.
    void scenariosFail()
    {
        QCOMPARE(QString::fromStdString(checkOutput(make("tie", DType::F32).evidence({ 1e-2, 1e-2 })).category),
            QStringLiteral("wrong-result"));
        const OutputReport tie = checkOutput(make("tie", DType::F32).evidence({ 1e-2, 1e-2 }));
        QCOMPARE(tie.worstIndex, (std::array<std::int64_t, 2> { 2, 40 }));
        QCOMPARE(QString::fromStdString(
                     checkOutput(make("unwritten-and-wrong", DType::F16).evidence({ 1e-2, 1e-2 })).category),
            QStringLiteral("unwritten-output"));
        QCOMPARE(QString::fromStdString(checkOutput(make("gap-write", DType::F32).evidence({ 1e-2, 1e-2 })).category),
            QStringLiteral("out-of-bounds-write"));
        QCOMPARE(QString::fromStdString(checkOutput(make("nan", DType::BF16).evidence({ 1e-2, 1e-2 })).category),
            QStringLiteral("nan-output"));
        QVERIFY(checkOutput(make("nan-expected", DType::F32).evidence({ 1e-2, 1e-2 })).mismatches == 1);
    }
};

QTEST_APPLESS_MAIN(TestDeviceScan)
#include "test_device_scan.moc"

// Verification maths on host arrays: the checks the runner applies to every candidate output,
// in the protocol's order, and the timing statistics and memory floor.
#include "core/verify/element.h"
#include "core/verify/output_check.h"
#include "core/verify/physical_floor.h"
#include "core/verify/statistics.h"

#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>

using namespace kl;
using namespace kl::verify;

namespace {

// A candidate's allocation (guards, data, padding) and a reference data region for one layout.
struct Buffers {
    TensorLayout layout;
    std::size_t guard = 256;
    std::vector<std::byte> actual; // guard + data + guard
    std::vector<std::byte> expected; // data only

    Buffers(DType type, std::int64_t rows, std::int64_t length, std::int64_t stride)
        : layout { type, rows, length, stride }
    {
        actual.assign(layout.bytes() + 2 * guard, kSentinelByte);
        expected.assign(layout.bytes(), kSentinelByte);
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t c = 0; c < length; ++c)
                setBoth(r, c, 0.25 * static_cast<double>((r * 7 + c * 3) % 17) - 2.0);
    }
    std::size_t offset(std::int64_t r, std::int64_t c) const
    {
        return static_cast<std::size_t>(r * layout.rowStride + c) * layout.elementBytes();
    }
    void setActual(std::int64_t r, std::int64_t c, double v)
    {
        writeElement(layout.type, v, actual.data() + guard + offset(r, c));
    }
    void setBoth(std::int64_t r, std::int64_t c, double v)
    {
        setActual(r, c, v);
        writeElement(layout.type, v, expected.data() + offset(r, c));
    }
    void poison(std::int64_t r, std::int64_t c)
    {
        const auto p = poisonElement(layout.type);
        std::memcpy(actual.data() + guard + offset(r, c), p.data(), p.size());
    }
    std::span<const std::byte> data() const { return std::span(actual).subspan(guard, layout.bytes()); }
    OutputReport check(Tolerance tolerance = { 1e-2, 1e-2 }) const
    {
        OutputEvidence evidence { layout, tolerance, guard, actual, expected, {}, {} };
        return checkOutput(evidence);
    }
};

} // namespace

class TestVerifyMaths : public QObject {
    Q_OBJECT

private slots:
    void halfEncoding_data()
    {
        QTest::addColumn<double>("value");
        QTest::addColumn<int>("bits");
        QTest::newRow("one") << 1.0 << 0x3c00;
        QTest::newRow("minus two") << -2.0 << 0xc000;
        QTest::newRow("largest") << 65504.0 << 0x7bff;
        QTest::newRow("overflow") << 70000.0 << 0x7c00;
        QTest::newRow("smallest subnormal") << std::ldexp(1.0, -24) << 0x0001;
        QTest::newRow("smallest normal") << std::ldexp(1.0, -14) << 0x0400;
        QTest::newRow("tie to even, down") << 1.0 + std::ldexp(1.0, -11) << 0x3c00;
        QTest::newRow("tie to even, up") << 1.0 + 3 * std::ldexp(1.0, -11) << 0x3c02;
        QTest::newRow("one third") << 1.0 / 3.0 << 0x3555;
    }
    void halfEncoding()
    {
        QFETCH(double, value);
        QFETCH(int, bits);
        QCOMPARE(int(doubleToHalf(value)), bits);
        if (bits != 0x7c00 && !QByteArray(QTest::currentDataTag()).startsWith("tie") && bits != 0x3555)
            QCOMPARE(halfToDouble(static_cast<std::uint16_t>(bits)), value);
    }

    void halfRoundTripsEveryFiniteValue()
    {
        for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
            const double v = halfToDouble(static_cast<std::uint16_t>(bits));
            if (std::isnan(v))
                continue;
            QCOMPARE(int(doubleToHalf(v)), int(bits == 0x8000 ? 0x8000 : bits));
        }
    }

    void bfloat16()
    {
        QCOMPARE(int(doubleToBfloat16(1.0)), 0x3f80);
        QCOMPARE(bfloat16ToDouble(0xc040), -3.0);
        QCOMPARE(int(doubleToBfloat16(1.0 + std::ldexp(1.0, -8))), 0x3f80); // tie to even
        QVERIFY(std::isnan(bfloat16ToDouble(0x7fa5)));
    }

    void poisonIsNaNForFloatTypes()
    {
        for (DType type : { DType::F16, DType::BF16, DType::F32, DType::F64 })
            QVERIFY(std::isnan(readElement(type, poisonElement(type).data())));
        QCOMPARE(int(poisonElement(DType::I32)[0]), 0xa5);
        QCOMPARE(poisonElement(DType::F16).size(), std::size_t(2));
    }

    void correctOutputPasses()
    {
        Buffers b(DType::F16, 5, 33, 40);
        const OutputReport report = b.check();
        QVERIFY2(report.passed(), describe(report, "y").c_str());
        QCOMPARE(report.elements, std::int64_t(5 * 33));
        QCOMPARE(report.mismatches, std::int64_t(0));
        QVERIFY(report.window.expected.empty());
    }

    void wrongValueReportsWhereAndWindow()
    {
        Buffers b(DType::F32, 4, 20, 20);
        b.setActual(2, 11, 5.0); // far off
        b.setActual(3, 1, -1.7); // expected -1.75 + ... small but outside atol 1e-3
        const OutputReport report = b.check({ 1e-3, 0.0 });
        QCOMPARE(QString::fromStdString(report.category), QStringLiteral("wrong-result"));
        QCOMPARE(report.mismatches, std::int64_t(2));
        QCOMPARE(report.worstIndex[0], std::int64_t(2));
        QCOMPARE(report.worstIndex[1], std::int64_t(11));
        QCOMPARE(report.window.start[0], std::int64_t(2));
        QCOMPARE(report.window.start[1], std::int64_t(8));
        QCOMPARE(report.window.actual.size(), std::size_t(8));
        QCOMPARE(report.window.actual[3], 5.0);
        const double expected = report.window.expected[3];
        QCOMPARE(report.maxAbsError, std::fabs(5.0 - expected));
        QVERIFY(describe(report, "y").find("[2, 11]") != std::string::npos);
    }

    void toleranceIsAbsolutePlusRelative()
    {
        QVERIFY(withinTolerance(101.0, 100.0, { 0.0, 0.01 }));
        QVERIFY(!withinTolerance(101.1, 100.0, { 0.0, 0.01 }));
        QVERIFY(withinTolerance(0.005, 0.0, { 0.01, 0.01 }));
        QVERIFY(withinTolerance(std::nan(""), std::nan(""), { 0.0, 0.0 }));
        QVERIFY(!withinTolerance(std::numeric_limits<double>::infinity(), 1e300, { 1.0, 1.0 }));
    }

    void unwrittenElementsAreCountedBeforeValues()
    {
        Buffers b(DType::F16, 3, 10, 10);
        for (int c = 5; c < 10; ++c)
            b.poison(1, c);
        b.setActual(0, 0, 100.0); // a wrong value too: unwritten still wins
        const OutputReport report = b.check();
        QCOMPARE(QString::fromStdString(report.category), QStringLiteral("unwritten-output"));
        QCOMPARE(report.unwritten, std::int64_t(5));
        QCOMPARE(countPoisoned(b.layout, b.data()), std::int64_t(5));
    }

    void nanWhereReferenceIsFinite()
    {
        Buffers b(DType::BF16, 2, 8, 8);
        b.setActual(1, 3, std::numeric_limits<double>::quiet_NaN());
        b.setActual(0, 2, std::numeric_limits<double>::infinity());
        const OutputReport report = b.check();
        QCOMPARE(QString::fromStdString(report.category), QStringLiteral("nan-output"));
        QCOMPARE(report.nonFinite, std::int64_t(2));
        QCOMPARE(report.unwritten, std::int64_t(0));
    }

    void writesPastTheEndOrIntoPaddingAreCaught_data()
    {
        QTest::addColumn<int>("where"); // 0: guard after, 1: padding gap, 2: guard before
        QTest::newRow("past the end") << 0;
        QTest::newRow("padding gap") << 1;
        QTest::newRow("before the start") << 2;
    }
    void writesPastTheEndOrIntoPaddingAreCaught()
    {
        QFETCH(int, where);
        Buffers b(DType::F16, 4, 6, 8);
        std::size_t at = 0;
        if (where == 0)
            at = b.guard + b.layout.bytes() + 10;
        else if (where == 1)
            at = b.guard + b.offset(2, 6);
        else
            at = b.guard - 2;
        b.actual[at] = std::byte { 0 };
        const OutputReport report = b.check();
        QCOMPARE(QString::fromStdString(report.category), QStringLiteral("out-of-bounds-write"));
        QCOMPARE(report.guardBytesChanged, std::int64_t(1));
        QCOMPARE(report.firstChangedGuardOffset, std::int64_t(at));
    }

    void staleOutputNeedsAChangedReference()
    {
        Buffers b(DType::F16, 2, 16, 16);
        std::vector<std::byte> previousActual(b.data().begin(), b.data().end());
        std::vector<std::byte> previousExpected = b.expected;
        previousExpected[0] = std::byte { 0x11 }; // the reference moved on
        OutputEvidence evidence { b.layout, { 1e-2, 1e-2 }, b.guard, b.actual, b.expected, previousActual,
            previousExpected };
        QCOMPARE(QString::fromStdString(checkOutput(evidence).category), QStringLiteral("stale-output"));
        // Same reference twice (e.g. an output independent of the inputs): not stale.
        evidence.previousExpected = b.expected;
        QVERIFY(checkOutput(evidence).passed());
    }

    void tooSmallBuffersAreRefused()
    {
        Buffers b(DType::F32, 2, 4, 4);
        OutputEvidence evidence { b.layout, {}, b.guard, std::span(b.actual).first(10), b.expected, {}, {} };
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, checkOutput(evidence));
    }

    void summaryOfSamples()
    {
        const SampleSummary s = summarize({ 5, 1, 4, 2, 3, 100 });
        QCOMPARE(s.count, std::int64_t(6));
        QCOMPARE(s.median, 3.5);
        QCOMPARE(s.min, 1.0);
        QCOMPARE(s.max, 100.0);
        QCOMPARE(s.p20, 2.0);
        QCOMPARE(s.p80, 5.0);
        QVERIFY(qFuzzyCompare(s.mean, 115.0 / 6.0));
        QVERIFY(s.cv > 1.0);
        QCOMPARE(summarize({}).count, std::int64_t(0));
        QCOMPARE(summarize({ 7.0 }).cv, 0.0);
    }

    void physicalFloor()
    {
        QVERIFY(std::fabs(floorMicros(134234112.0, 3750.0) - 35.7958) < 1e-3);
        QVERIFY(std::fabs(achievedGbps(134234112.0, 48.7) - 2756.347) < 1e-2);
        QVERIFY(!checkPhysicalFloor(48.7, 35.8).below);
        QVERIFY(!checkPhysicalFloor(34.0, 35.8).below); // within the slack: a kernel may beat memcpy a little
        const FloorCheck below = checkPhysicalFloor(20.0, 35.8);
        QVERIFY(below.below);
        QVERIFY(below.detail.find("faster than memory allows") != std::string::npos);
        QVERIFY(!checkPhysicalFloor(0.5, 1.5).below); // tiny copies are launch overhead: no verdict
    }
};

QTEST_APPLESS_MAIN(TestVerifyMaths)
#include "test_verify_maths.moc"

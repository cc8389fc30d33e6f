// The compute side of speed of light: precision names, the default precision of a problem from its
// inputs, the per-architecture ceiling table (docs/compute-ceilings.md) and the problem's "compute" field.
#include "core/model/precision.h"
#include "core/model/problem.h"
#include "expect_error.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using kl::Precision;

namespace {

void write(const fs::path& p, const std::string& text)
{
    std::ofstream out(p, std::ios::binary);
    out << text;
}

// A GEMM-shaped problem with inputs of `dtype` and, when given, "compute": `compute`.
kl::Problem gemmProblem(const fs::path& root, const std::string& dtype, const std::string& compute = {})
{
    write(root / "k.cu",
        "extern \"C\" __global__ void k(float* c, int n) {}\n// @kl launch k grid=(1) block=(32) args=(c, M)\n");
    write(root / "p.json",
        R"({"name":"p","sizes":{"symbols":["M"],"main":[{"M":64}]},
            "inputs":[{"name":"a","dtype":")"
            + dtype + R"(","shape":["M","M"]},{"name":"b","dtype":")" + dtype
            + R"(","shape":["M","M"]}],"outputs":[{"name":"c","dtype":"f32","shape":["M","M"]}],
            "reference":"k.cu","baseline":"k.cu","bytes":"12*M*M","flops":"2*M*M*M")"
            + (compute.empty() ? std::string() : ",\"compute\":\"" + compute + "\"") + "}");
    return kl::loadProblem(root / "p.json");
}

} // namespace

class TestPrecision : public QObject {
    Q_OBJECT

private slots:
    void namesRoundTrip()
    {
        for (const Precision p : kl::allPrecisions()) {
            QCOMPARE(kl::parsePrecision(kl::precisionName(p)), std::optional<Precision>(p));
            QVERIFY(!kl::precisionLabel(p).empty());
        }
        QVERIFY(!kl::parsePrecision("half"));
        QVERIFY(kl::isTensorPrecision(Precision::Fp16));
        QVERIFY(kl::isTensorPrecision(Precision::Fp64Tensor));
        QVERIFY(!kl::isTensorPrecision(Precision::Fp32));
        QVERIFY(!kl::isTensorPrecision(Precision::Fp64));
    }

    void defaultFromInputs()
    {
        using kl::DType;
        QCOMPARE(kl::defaultPrecision({ DType::F16, DType::F16 }), Precision::Fp16);
        QCOMPARE(kl::defaultPrecision({ DType::BF16 }), Precision::Bf16);
        QCOMPARE(kl::defaultPrecision({ DType::F32 }), Precision::Fp32);
        QCOMPARE(kl::defaultPrecision({ DType::F64 }), Precision::Fp64);
        QCOMPARE(kl::defaultPrecision({ DType::I8, DType::I8 }), Precision::Int8);
        QCOMPARE(kl::defaultPrecision({ DType::U8 }), Precision::Int8);
        // The narrowest floating type wins: its ceiling is the highest, so the floor is never too strict.
        QCOMPARE(kl::defaultPrecision({ DType::F32, DType::F16 }), Precision::Fp16);
        QCOMPARE(kl::defaultPrecision({ DType::F64, DType::F32 }), Precision::Fp32);
        QCOMPARE(kl::defaultPrecision({ DType::I32 }), Precision::Fp32);
        QCOMPARE(kl::defaultPrecision({}), Precision::Fp32);
    }

    void ceilingTable_data()
    {
        QTest::addColumn<QString>("cc");
        QTest::addColumn<int>("precision");
        QTest::addColumn<double>("rate");
        // sm_90 against docs/compute-ceilings.md's table (FP64 tensor 256: 67 TFLOP/s at 1980 MHz).
        QTest::newRow("sm_90 fp16") << "9.0" << int(Precision::Fp16) << 4096.0;
        QTest::newRow("sm_90 bf16") << "9.0" << int(Precision::Bf16) << 4096.0;
        QTest::newRow("sm_90 tf32") << "9.0" << int(Precision::Tf32) << 2048.0;
        QTest::newRow("sm_90 fp8") << "9.0" << int(Precision::Fp8) << 8192.0;
        QTest::newRow("sm_90 int8") << "9.0" << int(Precision::Int8) << 8192.0;
        QTest::newRow("sm_90 fp32") << "9.0" << int(Precision::Fp32) << 256.0;
        QTest::newRow("sm_90 fp64") << "9.0" << int(Precision::Fp64) << 128.0;
        QTest::newRow("sm_90 fp64 tensor") << "9.0" << int(Precision::Fp64Tensor) << 256.0;
        QTest::newRow("sm_80 fp16") << "8.0" << int(Precision::Fp16) << 2048.0;
        QTest::newRow("sm_80 fp32") << "8.0" << int(Precision::Fp32) << 128.0;
        QTest::newRow("sm_80 tf32") << "8.0" << int(Precision::Tf32) << 1024.0;
        QTest::newRow("sm_80 int8") << "8.0" << int(Precision::Int8) << 4096.0;
        QTest::newRow("sm_80 fp64 tensor") << "8.0" << int(Precision::Fp64Tensor) << 128.0;
        QTest::newRow("sm_80 no fp8") << "8.0" << int(Precision::Fp8) << 0.0;
        QTest::newRow("sm_86 fp16") << "8.6" << int(Precision::Fp16) << 1024.0;
        QTest::newRow("sm_86 fp32") << "8.6" << int(Precision::Fp32) << 256.0;
        QTest::newRow("sm_86 no fp64 tensor") << "8.6" << int(Precision::Fp64Tensor) << 0.0;
        QTest::newRow("sm_89 fp8") << "8.9" << int(Precision::Fp8) << 2048.0;
        QTest::newRow("sm_89 fp16") << "8.9" << int(Precision::Fp16) << 1024.0;
        QTest::newRow("sm_100 fp16") << "10.0" << int(Precision::Fp16) << 8192.0;
        QTest::newRow("sm_120 fp16") << "12.0" << int(Precision::Fp16) << 1024.0;
        QTest::newRow("arch name") << "sm_90a" << int(Precision::Fp16) << 4096.0;
        QTest::newRow("arch name sm_100") << "sm_100" << int(Precision::Fp8) << 16384.0;
    }

    void ceilingTable()
    {
        QFETCH(QString, cc);
        QFETCH(int, precision);
        QFETCH(double, rate);
        const auto got = kl::flopsPerSmPerClock(cc.toStdString(), static_cast<Precision>(precision));
        QVERIFY(got);
        QCOMPARE(*got, rate);
    }

    void everyArchitectureHasEveryPrecision()
    {
        QVERIFY(kl::knownArchitectures().size() >= 4);
        for (const auto& cc : kl::knownArchitectures())
            for (const Precision p : kl::allPrecisions())
                QVERIFY2(kl::flopsPerSmPerClock(cc, p), cc.c_str());
        QVERIFY(!kl::flopsPerSmPerClock("7.0", Precision::Fp16));
    }

    void ceilingsFromPublishedPeaks()
    {
        // H100 SXM: 989 TFLOP/s fp16 dense at 1830 MHz, 66.9 FP32 at 1980 MHz (132 SMs).
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp16, "9.0", 132, 1830) - 989.4) < 0.5);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp32, "9.0", 132, 1980) - 66.9) < 0.1);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp64Tensor, "9.0", 132, 1980) - 66.9) < 0.1);
        // A100 SXM: 312 fp16, 19.5 FP32, 9.7 FP64, 624 int8 at 1410 MHz (108 SMs).
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp16, "8.0", 108, 1410) - 311.9) < 0.5);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp32, "8.0", 108, 1410) - 19.5) < 0.1);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp64, "8.0", 108, 1410) - 9.7) < 0.1);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Int8, "8.0", 108, 1410) - 623.8) < 0.5);
        // L40S: 362 fp16 (fp32 accumulate), 733 fp8, 91.6 FP32 at 2520 MHz (142 SMs).
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp16, "8.9", 142, 2520) - 366.4) < 5.0);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp8, "8.9", 142, 2520) - 732.8) < 1.0);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp32, "8.9", 142, 2520) - 91.6) < 0.1);
        // A40: 149.7 fp16, 37.4 FP32 at 1740 MHz (84 SMs).
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp16, "8.6", 84, 1740) - 149.7) < 0.2);
        QVERIFY(std::abs(kl::ceilingTflops(Precision::Fp32, "8.6", 84, 1740) - 37.4) < 0.1);
        // Unknown parts: 0.
        QCOMPARE(kl::ceilingTflops(Precision::Fp16, "9.0", 0, 1980), 0.0);
        QCOMPARE(kl::ceilingTflops(Precision::Fp16, "9.0", 132, 0), 0.0);
        QCOMPARE(kl::ceilingTflops(Precision::Fp16, "6.1", 132, 1980), 0.0);
    }

    void problemComputeField()
    {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        QCOMPARE(gemmProblem(root, "f16").computePrecision(), Precision::Fp16);
        QVERIFY(!gemmProblem(root, "f16").compute);
        QCOMPARE(gemmProblem(root, "bf16").computePrecision(), Precision::Bf16);
        QCOMPARE(gemmProblem(root, "f32").computePrecision(), Precision::Fp32);
        QCOMPARE(gemmProblem(root, "f64").computePrecision(), Precision::Fp64);
        QCOMPARE(gemmProblem(root, "i8").computePrecision(), Precision::Int8);
        QCOMPARE(gemmProblem(root, "f32", "tf32").computePrecision(), Precision::Tf32);
        QCOMPARE(gemmProblem(root, "f16", "fp32").computePrecision(), Precision::Fp32);
        QCOMPARE(gemmProblem(root, "f16", "fp8").computePrecision(), Precision::Fp8);
        kl::test::expectError([&] { gemmProblem(root, "f16", "half"); }, "problem.bad-compute", "compute");
    }
};

QTEST_GUILESS_MAIN(TestPrecision)
#include "test_precision.moc"

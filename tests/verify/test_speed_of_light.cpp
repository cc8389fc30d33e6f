// Speed of light: the time floor is the larger of the same-size copy and FLOPs ÷ the precision's ceiling;
// % of SOL and the bound at several arithmetic intensities, and the compute floor check.
#include "core/model/precision.h"
#include "core/verify/speed_of_light.h"

#include <QtTest>

using namespace kl::verify;

namespace {
// H200 figures (docs/gpu-facts.md, "H200 ceilings"): ~4.25 TB/s copy, 132 SMs at 1980 MHz.
constexpr double kCopyGbps = 4250.0;
const double kFp16 = kl::ceilingTflops(kl::Precision::Fp16, "9.0", 132, 1980); // ~1070
const double kFp32 = kl::ceilingTflops(kl::Precision::Fp32, "9.0", 132, 1980); // ~66.9
} // namespace

class TestSpeedOfLight : public QObject {
    Q_OBJECT

private slots:
    void boundAtIntensity_data()
    {
        QTest::addColumn<double>("bytes");
        QTest::addColumn<double>("flops");
        QTest::addColumn<double>("ceiling");
        QTest::addColumn<QString>("bound");
        // Ridge of fp16 tensor vs copy: 1070e12 / 4.25e12 ≈ 252 FLOP/byte; of FP32 ≈ 15.7.
        QTest::newRow("layernorm, 20 FLOP/elem, fp16 (I≈2.5)") << 134.2e6 << 671e6 << kFp16 << "memory";
        QTest::newRow("layernorm at fp32 (I≈5)") << 134.2e6 << 671e6 << kFp32 << "memory";
        QTest::newRow("intensity 100 fp16: memory") << 1e9 << 100e9 << kFp16 << "memory";
        QTest::newRow("intensity 100 fp32: compute") << 1e9 << 100e9 << kFp32 << "compute";
        QTest::newRow("gemm 4096^3 fp16 (I≈1365)")
            << 3.0 * 4096 * 4096 * 2 << 2.0 * 4096 * 4096 * 4096 << kFp16 << "compute";
        QTest::newRow("no flops: memory") << 1e9 << 0.0 << kFp16 << "memory";
        QTest::newRow("no ceiling: memory") << 1e9 << 1e15 << 0.0 << "memory";
    }

    void boundAtIntensity()
    {
        QFETCH(double, bytes);
        QFETCH(double, flops);
        QFETCH(double, ceiling);
        QFETCH(QString, bound);
        const double median = 1000.0;
        const SpeedOfLight sol = speedOfLight(median, bytes, std::nullopt, kCopyGbps, flops, ceiling);
        QCOMPARE(QString::fromUtf8(boundName(sol.bound).data()), bound);
        const double memory = bytes / (kCopyGbps * 1e3);
        const double compute = flops > 0 && ceiling > 0 ? flops / (ceiling * 1e6) : 0.0;
        QVERIFY(std::abs(sol.floorUs - std::max(memory, compute)) < 1e-9 * sol.floorUs + 1e-12);
        QVERIFY(sol.pctOfSol);
        QVERIFY(std::abs(*sol.pctOfSol - 100.0 * sol.floorUs / median) < 1e-9);
    }

    void gemmOnH200()
    {
        // cuBLAS fp16 4096^3 in 181.3 us (docs/gpu-facts.md, "Compute, measured"): 758 TFLOP/s, ~71% of the
        // 1070 TFLOP/s ceiling.
        const double flops = 2.0 * 4096 * 4096 * 4096;
        const SpeedOfLight sol = speedOfLight(181.3, 3.0 * 4096 * 4096 * 2, 40.0, 0.0, flops, kFp16);
        QCOMPARE(sol.bound, Bound::Compute);
        QVERIFY(sol.computeFloorUs && std::abs(*sol.computeFloorUs - 128.5) < 0.5);
        QCOMPARE(*sol.memoryFloorUs, 40.0); // the same-size copy wins over the device's bandwidth
        QVERIFY(*sol.pctOfSol > 70.0 && *sol.pctOfSol < 72.0);
        // The WMMA kernel at 1963 us read 100% of the FP32 ceiling; against fp16 tensor it is 6.5%.
        const SpeedOfLight wmma = speedOfLight(1963.0, 3.0 * 4096 * 4096 * 2, 40.0, 0.0, flops, kFp16);
        QVERIFY(*wmma.pctOfSol > 6.0 && *wmma.pctOfSol < 7.0);
    }

    void memoryBoundReadsAsCopy()
    {
        // Layernorm at 48.7 us against a 35.8 us copy: % of SOL is % of copy.
        const SpeedOfLight sol = speedOfLight(48.7, 134.2e6, 35.8, kCopyGbps, 671e6, kFp16);
        QCOMPARE(sol.bound, Bound::Memory);
        QVERIFY(std::abs(*sol.pctOfSol - 100.0 * 35.8 / 48.7) < 1e-9);
    }

    void unknowns()
    {
        const SpeedOfLight none = speedOfLight(10.0, 0.0, std::nullopt, 0.0, 0.0, 0.0);
        QCOMPARE(none.floorUs, 0.0);
        QVERIFY(!none.pctOfSol);
        QVERIFY(!none.memoryFloorUs);
        QVERIFY(!none.computeFloorUs);
        const SpeedOfLight untimed = speedOfLight(0.0, 1e9, 100.0, 0.0, 0.0, 0.0);
        QVERIFY(!untimed.pctOfSol);
        QCOMPARE(parseBound("compute"), std::optional<Bound>(Bound::Compute));
        QCOMPARE(parseBound("memory"), std::optional<Bound>(Bound::Memory));
        QVERIFY(!parseBound("other"));
    }

    void computeFloorCheck()
    {
        const double flops = 2.0 * 4096 * 4096 * 4096; // floor 128.5 us at 1070 TFLOP/s
        const FloorCheck fast = checkComputeFloor(60.0, flops, kFp16, "FP16 tensor");
        QVERIFY(fast.below);
        QVERIFY(fast.detail.find("FP16 tensor") != std::string::npos);
        QVERIFY(fast.detail.find("faster than the arithmetic allows") != std::string::npos);
        QVERIFY(std::abs(fast.floorMicros - 128.5) < 0.5);
        // cuBLAS at 181 us, and a kernel within the slack (5% under): not below.
        QVERIFY(!checkComputeFloor(181.3, flops, kFp16, "FP16 tensor").below);
        QVERIFY(!checkComputeFloor(128.5 * 0.95, flops, kFp16, "FP16 tensor").below);
        QVERIFY(checkComputeFloor(128.5 * 0.85, flops, kFp16, "FP16 tensor").below);
        // Unknown ceiling or no FLOPs: no verdict; a floor under 2 us: no verdict (launch overhead).
        QVERIFY(!checkComputeFloor(1.0, flops, 0.0, "FP16 tensor").below);
        QVERIFY(!checkComputeFloor(1.0, 0.0, kFp16, "FP16 tensor").below);
        QVERIFY(!checkComputeFloor(0.1, 1e9, kFp16, "FP16 tensor").below);
        // The FP32 CUDA-core ceiling catches a CUDA-core GEMM "faster" than FP32 allows.
        QVERIFY(checkComputeFloor(1000.0, flops, kFp32, "FP32 CUDA cores").below);
    }
};

QTEST_GUILESS_MAIN(TestSpeedOfLight)
#include "test_speed_of_light.moc"

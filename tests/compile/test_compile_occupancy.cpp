// Theoretical occupancy through cuda_occupancy.h (no driver): the three H200 cases measured with
// the driver, one case per limiter, launches that cannot run, and a sweep against the closed-form
// sm_90 formula (both in docs/gpu-facts.md, "Occupancy").
#include "core/compile/occupancy.h"
#include "core/model/error.h"

#include <QTest>

using kl::OccupancyLimiter;

Q_DECLARE_METATYPE(kl::OccupancyLimiter)

namespace {

std::int64_t roundUp(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

// docs/gpu-facts.md, "Occupancy", for sm_90 with the 228 KiB carveout.
int formulaBlocks(int threads, int registers, std::int64_t shared)
{
    const int warps = (threads + 31) / 32;
    const int limitWarps = 64 / warps;
    const int limitBlocks = 32;
    const std::int64_t perWarp = roundUp(std::int64_t(registers) * 32, 256);
    const std::int64_t limitRegs
        = registers > 255 || perWarp * roundUp(warps, 4) > 65536 ? 0 : (16384 / perWarp) * 4 / warps;
    const std::int64_t s = roundUp(shared + 1024, 128);
    const std::int64_t maxPerBlock = (shared > 48 * 1024 ? 227 * 1024 : 48 * 1024) + 1024;
    const std::int64_t limitSmem = s > maxPerBlock ? 0 : 228 * 1024 / s;
    return int(std::min<std::int64_t>({ limitWarps, limitBlocks, limitRegs, limitSmem }));
}

} // namespace

class CompileOccupancyTest : public QObject {
    Q_OBJECT

private slots:
    void h200_data()
    {
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("registers");
        QTest::addColumn<qint64>("shared");
        QTest::addColumn<int>("barriers");
        QTest::addColumn<int>("blocks");
        QTest::addColumn<int>("warps");
        QTest::addColumn<OccupancyLimiter>("limiter");
        using L = OccupancyLimiter;
        // Measured on the H200 with cuOccupancyMaxActiveBlocksPerMultiprocessor.
        QTest::newRow("32 regs x 256 threads") << 256 << 32 << qint64(0) << 1 << 8 << 64 << L::Warps;
        QTest::newRow("72 regs x 128 threads") << 128 << 72 << qint64(0) << 1 << 7 << 28 << L::Registers;
        QTest::newRow("128 regs x 256 threads") << 256 << 128 << qint64(0) << 1 << 2 << 16 << L::Registers;
        // One per remaining limiter.
        QTest::newRow("100 KB shared memory") << 256 << 32 << qint64(100 * 1024) << 1 << 2 << 16 << L::SharedMemory;
        QTest::newRow("tiny blocks") << 32 << 16 << qint64(0) << 1 << 32 << 32 << L::Blocks;
        QTest::newRow("3-warp blocks") << 96 << 16 << qint64(0) << 1 << 21 << 63 << L::Warps;
        QTest::newRow("16 named barriers") << 64 << 16 << qint64(0) << 16 << 4 << 8 << L::Barriers;
        // The layernorm baseline at its defaults: 128 threads, 32 registers, 128 B static shared.
        QTest::newRow("layernorm baseline") << 128 << 32 << qint64(128) << 1 << 16 << 64 << L::Warps;
    }

    void h200()
    {
        QFETCH(int, threads);
        QFETCH(int, registers);
        QFETCH(qint64, shared);
        QFETCH(int, barriers);
        QFETCH(int, blocks);
        QFETCH(int, warps);
        const auto o = kl::theoreticalOccupancy(kl::DeviceLimits {}, threads, registers, shared, barriers);
        QVERIFY2(o.error.empty(), o.error.c_str());
        QCOMPARE(o.blocksPerSm, blocks);
        QCOMPARE(o.activeWarpsPerSm, warps);
        QCOMPARE(o.maxWarpsPerSm, 64);
        QCOMPARE(o.theoretical, warps / 64.0);
        QTEST(o.limiter, "limiter");
        // Every limit is at least what was granted, and the limiter's is exactly that.
        for (int limit : { o.limitWarps, o.limitRegisters, o.limitSharedMemory, o.limitBlocks, o.limitBarriers })
            QVERIFY(limit >= blocks);
    }

    void eachLimitOnItsOwn()
    {
        const auto o = kl::theoreticalOccupancy(kl::DeviceLimits {}, 128, 72, 0);
        QCOMPARE(o.limitRegisters, 7);
        QCOMPARE(o.limitWarps, 16);
        QCOMPARE(o.limitBlocks, 32);
        QCOMPARE(o.limitSharedMemory, 228); // 1 KiB reserved per block even without shared memory
        QCOMPARE(o.allocatedSharedBytes, std::int64_t(1024));
        QCOMPARE(QString::fromLatin1(kl::occupancyLimiterName(o.limiter)), QStringLiteral("registers"));
    }

    void cannotLaunch_data()
    {
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("registers");
        QTest::addColumn<qint64>("shared");
        QTest::addColumn<QString>("message");
        QTest::newRow("1024 threads x 72 registers") << 1024 << 72 << qint64(0) << QStringLiteral("more registers");
        QTest::newRow("257 registers") << 64 << 257 << qint64(0) << QStringLiteral("more registers");
        QTest::newRow("shared memory over the opt-in limit")
            << 128 << 32 << qint64(232449) << QStringLiteral("232449 B of shared memory");
        QTest::newRow("too many threads") << 2048 << 32 << qint64(0) << QStringLiteral("2048 threads per block");
        QTest::newRow("no threads") << 0 << 32 << qint64(0) << QStringLiteral("0 threads per block");
    }

    void cannotLaunch()
    {
        QFETCH(int, threads);
        QFETCH(int, registers);
        QFETCH(qint64, shared);
        QFETCH(QString, message);
        const auto o = kl::theoreticalOccupancy(kl::DeviceLimits {}, threads, registers, shared);
        QCOMPARE(o.blocksPerSm, 0);
        QCOMPARE(o.theoretical, 0.0);
        QVERIFY2(QString::fromStdString(o.error).contains(message), o.error.c_str());
    }

    void sharedOptInBoundary()
    {
        const kl::DeviceLimits h200;
        const auto largest = kl::theoreticalOccupancy(h200, 128, 32, h200.sharedPerBlockOptin);
        QCOMPARE(largest.blocksPerSm, 1);
        QCOMPARE(largest.limiter, OccupancyLimiter::SharedMemory);
        QCOMPARE(kl::theoreticalOccupancy(h200, 128, 32, 48 * 1024).blocksPerSm, 4); // 49 KiB + reserve each
    }

    // The header's arithmetic and the closed form of docs/gpu-facts.md agree everywhere on sm_90.
    void matchesTheClosedForm()
    {
        const kl::DeviceLimits h200;
        int cases = 0;
        for (int threads : { 1, 32, 33, 64, 96, 100, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1000, 1024 })
            for (int registers : { 1, 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 128, 168, 200, 232, 255 })
                for (std::int64_t shared :
                    { 0, 1, 1024, 4096, 16384, 40000, 49152, 49153, 65536, 100000, 166912, 232448, 232449 }) {
                    const auto o = kl::theoreticalOccupancy(h200, threads, registers, shared);
                    const int expected = formulaBlocks(threads, registers, shared);
                    if (o.blocksPerSm != expected)
                        QFAIL(qPrintable(QStringLiteral("%1 threads, %2 registers, %3 B: header %4, formula %5")
                                             .arg(threads)
                                             .arg(registers)
                                             .arg(shared)
                                             .arg(o.blocksPerSm)
                                             .arg(expected)));
                    QCOMPARE(o.error.empty(), expected > 0);
                    ++cases;
                }
        QCOMPARE(cases, 17 * 16 * 13);
    }

    void devicesByArch()
    {
        QCOMPARE(QString::fromStdString(kl::DeviceLimits::forArch("sm_90").name), QStringLiteral("NVIDIA H200"));
        QCOMPARE(kl::DeviceLimits::forArch("sm_90a").smCount, 132);
        const auto a100 = kl::DeviceLimits::forArch("compute_80");
        QCOMPARE(a100.computeMajor, 8);
        QCOMPARE(a100.smCount, 108);
        QCOMPARE(kl::theoreticalOccupancy(a100, 256, 32, 0).blocksPerSm, 8);
        QCOMPARE(kl::theoreticalOccupancy(a100, 256, 32, 100 * 1024).blocksPerSm, 1); // 164 KiB per SM
        const auto l40s = kl::DeviceLimits::forArch("sm_89");
        QCOMPARE(kl::theoreticalOccupancy(l40s, 256, 32, 0).blocksPerSm, 6); // 48 warps per SM
        QCOMPARE(kl::theoreticalOccupancy(kl::DeviceLimits::forArch("sm_75"), 256, 32, 0).blocksPerSm, 4);
        QCOMPARE(kl::DeviceLimits::forArch("sm_100").smCount, 148);
        try {
            kl::DeviceLimits::forArch("sm_61");
            QFAIL("sm_61 is not known");
        } catch (const kl::Error& e) {
            QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("device.unknown-arch"));
        }
    }
};

QTEST_GUILESS_MAIN(CompileOccupancyTest)
#include "test_compile_occupancy.moc"

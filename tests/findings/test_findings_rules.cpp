// Each findings rule has a row where it fires and one where it must stay silent, starting from a
// healthy kernel that produces no finding at all; then hand-built edge cases: missing metrics,
// ratios over 100%, zero and NaN values, ordering and thresholds.
#include "core/findings/synthesise.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <set>

using kl::Finding;
using kl::Telemetry;
using Mutation = std::function<void(Telemetry&)>;
Q_DECLARE_METATYPE(Mutation)

namespace {

namespace m = kl::metric;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A healthy memory-bound kernel: full occupancy, whole waves, no local memory, busy DRAM, no
// dominant stall, steady timing. No roofline inputs (flops, pct of copy): rows add them.
Telemetry quiet()
{
    Telemetry t;
    t.kernel = "k";
    t.registers = 32;
    t.threadsPerBlock = 256;
    t.blocksPerSm = 8;
    t.theoreticalOccupancy = 1.0;
    t.occupancyLimiter = "warps";
    t.smCount = 132;
    t.gridBlocks = 132 * 8 * 10;
    t.sizeLabel = "main";
    t.medianUs = 50.0;
    t.cv = 0.01;
    t.bytes = 1.5e8;
    t.copyGbps = 4000.0;
    t.gbps = 3000.0;
    t.peakTflops = 67.0;
    t.metrics = { { m::kAchievedOccupancy, 95.0 }, { m::kDramThroughput, 85.0 }, { m::kL2HitRate, 80.0 },
        { m::kSmThroughput, 70.0 }, { m::kMemoryThroughput, 85.0 }, { m::kLocalLoads, 0.0 }, { m::kLocalStores, 0.0 },
        { m::kSharedLoadConflicts, 0.0 }, { m::kSharedLoadWavefronts, 1e6 }, { m::kWarpLatency, 10.0 } };
    const std::pair<const char*, double> stalls[] = { { "long_scoreboard", 1.5 }, { "barrier", 1.0 }, { "wait", 1.0 },
        { "selected", 1.0 }, { "not_selected", 1.5 }, { "short_scoreboard", 1.0 }, { "math_pipe_throttle", 1.5 },
        { "mio_throttle", 1.0 }, { "no_instruction", 0.5 } };
    for (const auto& [reason, ratio] : stalls)
        t.metrics[m::stallRatio(reason)] = ratio;
    return t;
}

// A copy, so that a finding of a temporary result stays valid.
std::optional<Finding> find(const std::vector<Finding>& findings, const std::string& id)
{
    const auto it = std::find_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.id == id; });
    return it == findings.end() ? std::nullopt : std::optional<Finding>(*it);
}

QString ids(const std::vector<Finding>& findings)
{
    QStringList list;
    for (const auto& f : findings)
        list << QString::fromStdString(f.id);
    return list.join(QStringLiteral(", "));
}

void row(const char* name, const char* id, bool fires, int severity, Mutation mutate)
{
    QTest::newRow(name) << QString::fromLatin1(id) << fires << severity << std::move(mutate);
}

constexpr int kAny = -1, kInfo = 0, kWarning = 1, kCritical = 2;

void setRoofline(Telemetry& t, double intensity, std::optional<double> pct = std::nullopt)
{
    t.flops = *t.bytes * intensity;
    t.pctOfCopy = pct;
}

} // namespace

class TestFindingsRules : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void healthyKernelHasNoFindings()
    {
        const auto findings = kl::synthesise(quiet());
        QVERIFY2(findings.empty(), qPrintable(ids(findings)));
    }

    void rule_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<bool>("fires");
        QTest::addColumn<int>("severity");
        QTest::addColumn<Mutation>("mutate");

        // Occupancy and its limiter.
        row("registers 33%", "occupancy.register-limited", true, kWarning, [](Telemetry& t) {
            t.theoreticalOccupancy = 1.0 / 3, t.occupancyLimiter = "registers", t.registers = 64, t.blocksPerSm = 2;
        });
        row("registers 19% critical", "occupancy.register-limited", true, kCritical,
            [](Telemetry& t) { t.theoreticalOccupancy = 0.1875, t.occupancyLimiter = "registers"; });
        row("registers 50% silent", "occupancy.register-limited", false, kAny,
            [](Telemetry& t) { t.theoreticalOccupancy = 0.5, t.occupancyLimiter = "registers"; });
        row("at the copy ceiling: info", "occupancy.register-limited", true, kInfo,
            [](Telemetry& t) { t.theoreticalOccupancy = 0.3, t.occupancyLimiter = "registers", t.pctOfCopy = 90.0; });
        row("shared memory 38%", "occupancy.shared-memory-limited", true, kWarning,
            [](Telemetry& t) { t.theoreticalOccupancy = 0.375, t.occupancyLimiter = "shared memory"; });
        row("shared memory 75% silent", "occupancy.shared-memory-limited", false, kAny,
            [](Telemetry& t) { t.theoreticalOccupancy = 0.75, t.occupancyLimiter = "shared memory"; });
        row("warps 40%", "occupancy.warp-limited", true, kWarning,
            [](Telemetry& t) { t.theoreticalOccupancy = 0.4, t.occupancyLimiter = "warps"; });
        row("blocks 33% (sm_86)", "occupancy.block-limited", true, kWarning, [](Telemetry& t) {
            t.theoreticalOccupancy = 1.0 / 3, t.occupancyLimiter = "blocks", t.threadsPerBlock = 32;
        });
        row("blocks 50% silent", "occupancy.block-limited", false, kAny,
            [](Telemetry& t) { t.theoreticalOccupancy = 0.5, t.occupancyLimiter = "blocks"; });
        row("limiter unknown", "occupancy.low", true, kWarning,
            [](Telemetry& t) { t.theoreticalOccupancy = 0.3, t.occupancyLimiter.clear(); });
        row("occupancy unknown silent", "occupancy.low", false, kAny,
            [](Telemetry& t) { t.theoreticalOccupancy = 0.0, t.occupancyLimiter.clear(); });

        row("achieved 50% of 100%", "occupancy.achieved-below-theoretical", true, kWarning,
            [](Telemetry& t) { t.metrics[m::kAchievedOccupancy] = 50.0; });
        row("achieved 85% silent", "occupancy.achieved-below-theoretical", false, kAny,
            [](Telemetry& t) { t.metrics[m::kAchievedOccupancy] = 85.0; });
        row("small gap at low occupancy silent", "occupancy.achieved-below-theoretical", false, kAny,
            [](Telemetry& t) { t.theoreticalOccupancy = 0.25, t.metrics[m::kAchievedOccupancy] = 18.0; });
        row("achieved over 100% silent", "occupancy.achieved-below-theoretical", false, kAny,
            [](Telemetry& t) { t.metrics[m::kAchievedOccupancy] = 130.0; });

        // Grid shape.
        row("1.125 waves", "waves.tail-effect", true, kWarning, [](Telemetry& t) { t.gridBlocks = 132 * 8 + 132; });
        row("10.5 waves silent", "waves.tail-effect", false, kAny,
            [](Telemetry& t) { t.gridBlocks = 132 * 8 * 10 + 132 * 4; });
        row("1.99 waves silent", "waves.tail-effect", false, kAny, [](Telemetry& t) { t.gridBlocks = 132 * 16 - 10; });
        row("64 blocks", "grid.too-few-blocks", true, kCritical, [](Telemetry& t) { t.gridBlocks = 64; });
        row("500 blocks", "grid.too-few-blocks", true, kWarning, [](Telemetry& t) { t.gridBlocks = 500; });
        row("one full wave silent", "grid.too-few-blocks", false, kAny, [](Telemetry& t) { t.gridBlocks = 132 * 8; });

        // Local memory.
        row("16 spill bytes", "local-memory.spills", true, kWarning,
            [](Telemetry& t) { t.spillStores = 8, t.spillLoads = 8, t.stackFrame = 8; });
        row("300 spill bytes", "local-memory.spills", true, kCritical,
            [](Telemetry& t) { t.spillStores = 200, t.spillLoads = 100, t.stackFrame = 200; });
        row("stack frame alone", "local-memory.stack-frame", true, kWarning, [](Telemetry& t) { t.stackFrame = 256; });
        row("frame = spill area silent", "local-memory.stack-frame", false, kAny,
            [](Telemetry& t) { t.stackFrame = 64, t.spillStores = 64, t.spillLoads = 64; });
        row("frame beyond spills", "local-memory.stack-frame", true, kWarning,
            [](Telemetry& t) { t.stackFrame = 128, t.spillStores = 64; });
        row("no frame, no spills: spills silent", "local-memory.spills", false, kAny, [](Telemetry&) {});
        row("local loads", "local-memory.traffic", true, kWarning,
            [](Telemetry& t) { t.metrics[m::kLocalLoads] = 1000; });
        row("few local loads among many", "local-memory.traffic", true, kInfo,
            [](Telemetry& t) { t.metrics[m::kLocalLoads] = 10, t.metrics[m::kInstructions] = 1e8; });
        row("local NaN silent", "local-memory.traffic", false, kAny,
            [](Telemetry& t) { t.metrics[m::kLocalLoads] = kNaN; });

        // Roofline and ceilings.
        row("5 FLOP/byte", "roofline.memory-bound", true, kInfo, [](Telemetry& t) { setRoofline(t, 5); });
        row("100 FLOP/byte", "roofline.compute-bound", true, kInfo, [](Telemetry& t) { setRoofline(t, 100); });
        row("at the ridge", "roofline.balanced", true, kInfo, [](Telemetry& t) { setRoofline(t, 16); });
        row("no peak silent", "roofline.memory-bound", false, kAny,
            [](Telemetry& t) { setRoofline(t, 5), t.peakTflops = 0; });
        row("26% of copy", "bandwidth.under-ceiling", true, kCritical, [](Telemetry& t) { setRoofline(t, 5, 26.0); });
        row("55% of copy", "bandwidth.under-ceiling", true, kWarning, [](Telemetry& t) { setRoofline(t, 5, 55.0); });
        row("73% of copy", "bandwidth.under-ceiling", true, kInfo, [](Telemetry& t) { setRoofline(t, 5, 73.0); });
        row("no roofline, 40% of copy", "bandwidth.under-ceiling", true, kWarning,
            [](Telemetry& t) { t.pctOfCopy = 40.0; });
        row("compute-bound silent", "bandwidth.under-ceiling", false, kAny,
            [](Telemetry& t) { setRoofline(t, 100, 26.0); });
        row("90% of copy", "bandwidth.at-ceiling", true, kInfo, [](Telemetry& t) { setRoofline(t, 5, 90.0); });
        row("60% of copy not at ceiling", "bandwidth.at-ceiling", false, kAny,
            [](Telemetry& t) { setRoofline(t, 5, 60.0); });
        row("compute 15% of peak", "compute.under-ceiling", true, kWarning,
            [](Telemetry& t) { setRoofline(t, 100), t.tflops = 10.0; });
        row("compute 75% of peak silent", "compute.under-ceiling", false, kAny,
            [](Telemetry& t) { setRoofline(t, 100), t.tflops = 50.0; });
        row("DRAM 40%", "dram.low-throughput", true, kWarning,
            [](Telemetry& t) { t.metrics[m::kDramThroughput] = 40; });
        row("DRAM 40% tiny kernel silent", "dram.low-throughput", false, kAny,
            [](Telemetry& t) { t.metrics[m::kDramThroughput] = 40, t.medianUs = 3.0; });
        row("DRAM 40% compute-bound silent", "dram.low-throughput", false, kAny,
            [](Telemetry& t) { t.metrics[m::kDramThroughput] = 40, setRoofline(t, 100); });
        row("DRAM twice the bytes", "memory.excess-dram-traffic", true, kWarning,
            [](Telemetry& t) { t.metrics[m::kDramBytesRead] = 2e8, t.metrics[m::kDramBytesWrite] = 1e8; });
        row("DRAM the bytes silent", "memory.excess-dram-traffic", false, kAny,
            [](Telemetry& t) { t.metrics[m::kDramBytesRead] = 0.8e8, t.metrics[m::kDramBytesWrite] = 0.8e8; });
        row("L2 30%", "cache.l2-hit-rate-low", true, kInfo, [](Telemetry& t) { t.metrics[m::kL2HitRate] = 30; });
        row("L2 30% streaming silent", "cache.l2-hit-rate-low", false, kAny, [](Telemetry& t) {
            t.metrics[m::kL2HitRate] = 30, t.metrics[m::kDramBytesRead] = 0.75e8,
            t.metrics[m::kDramBytesWrite] = 0.75e8;
        });
        row("L2 101% silent", "cache.l2-hit-rate-low", false, kAny,
            [](Telemetry& t) { t.metrics[m::kL2HitRate] = 101.35; });
        row("conflicts half the wavefronts", "shared.bank-conflicts", true, kWarning,
            [](Telemetry& t) { t.metrics[m::kSharedLoadConflicts] = 5e5; });
        row("conflicts 1% silent", "shared.bank-conflicts", false, kAny,
            [](Telemetry& t) { t.metrics[m::kSharedLoadConflicts] = 1e4; });
        row("conflicts per instruction", "shared.bank-conflicts", true, kWarning, [](Telemetry& t) {
            t.metrics.erase(m::kSharedLoadWavefronts);
            t.metrics[m::kSharedStoreConflicts] = 3e5, t.metrics[m::kSharedStores] = 1e6;
        });
        row("conflicts, no denominator", "shared.bank-conflicts", true, kInfo,
            [](Telemetry& t) { t.metrics.erase(m::kSharedLoadWavefronts), t.metrics[m::kSharedLoadConflicts] = 5e5; });
        row("few conflicts, no denominator silent", "shared.bank-conflicts", false, kAny,
            [](Telemetry& t) { t.metrics.erase(m::kSharedLoadWavefronts), t.metrics[m::kSharedLoadConflicts] = 5e4; });
        row("SM 30% memory 40%", "throughput.latency-bound", true, kWarning,
            [](Telemetry& t) { t.metrics[m::kSmThroughput] = 30, t.metrics[m::kMemoryThroughput] = 40; });
        row("SM 30% memory 70% silent", "throughput.latency-bound", false, kAny,
            [](Telemetry& t) { t.metrics[m::kSmThroughput] = 30, t.metrics[m::kMemoryThroughput] = 70; });

        // Stall reasons.
        row("long scoreboard 60%", "stall.long_scoreboard", true, kWarning,
            [](Telemetry& t) { t.metrics[m::stallRatio("long_scoreboard")] = 6.0; });
        row("barrier 25%", "stall.barrier", true, kInfo,
            [](Telemetry& t) { t.metrics[m::stallRatio("barrier")] = 2.5; });
        row("barrier 15% silent", "stall.barrier", false, kAny,
            [](Telemetry& t) { t.metrics[m::stallRatio("barrier")] = 1.5; });
        row("selected is no stall", "stall.selected", false, kAny,
            [](Telemetry& t) { t.metrics[m::stallRatio("selected")] = 8.0; });
        row("share from the sum without latency", "stall.mio_throttle", true, kWarning,
            [](Telemetry& t) { t.metrics.erase(m::kWarpLatency), t.metrics[m::stallRatio("mio_throttle")] = 10.0; });
        row("lg throttle over the latency", "stall.lg_throttle", true, kWarning,
            [](Telemetry& t) { t.metrics[m::stallRatio("lg_throttle")] = 15.0; });

        // Timing.
        row("3 µs", "launch.tiny-kernel", true, kWarning, [](Telemetry& t) { t.medianUs = 3.0; });
        row("6 µs silent", "launch.tiny-kernel", false, kAny, [](Telemetry& t) { t.medianUs = 6.0; });
        row("graph 1.6x", "launch.graph-faster", true, kWarning,
            [](Telemetry& t) { t.medianUs = 3.2, t.graphMedianUs = 2.0; });
        row("graph 1.07x silent", "launch.graph-faster", false, kAny,
            [](Telemetry& t) { t.medianUs = 3.2, t.graphMedianUs = 3.0; });
        row("cv 8%", "timing.noisy", true, kInfo, [](Telemetry& t) { t.cv = 0.08; });
        row("cv 20%", "timing.noisy", true, kWarning, [](Telemetry& t) { t.cv = 0.2; });
        row("cv 2% silent", "timing.noisy", false, kAny, [](Telemetry& t) { t.cv = 0.02; });
    }

    void rule()
    {
        QFETCH(QString, id);
        QFETCH(bool, fires);
        QFETCH(int, severity);
        QFETCH(Mutation, mutate);
        auto t = quiet();
        mutate(t);
        const auto findings = kl::synthesise(t);
        const auto f = find(findings, id.toStdString());
        QVERIFY2(f.has_value() == fires, qPrintable(QStringLiteral("got: ") + ids(findings)));
        const auto known = kl::findingIds();
        for (const auto& any : findings) {
            QVERIFY2(std::find(known.begin(), known.end(), any.id) != known.end(), any.id.c_str());
            QVERIFY(!any.title.empty());
            QVERIFY(!any.explanation.empty());
            QVERIFY2(!any.evidence.empty(), any.id.c_str());
            QVERIFY2(!any.directions.empty(), any.id.c_str());
            for (const auto& [name, value] : any.evidence)
                QVERIFY2(std::isfinite(value), name.c_str());
        }
        if (f && severity != kAny)
            QCOMPARE(static_cast<int>(f->severity), severity);
    }

    void missingEverythingIsSilent()
    {
        QVERIFY(kl::synthesise(Telemetry {}).empty());
        Telemetry t;
        t.medianUs = t.gbps = t.pctOfCopy = t.copyGbps = t.bytes = t.flops = t.tflops = t.cv = t.graphMedianUs = kNaN;
        t.theoreticalOccupancy = kNaN;
        t.peakTflops = kNaN;
        for (const auto& id : kl::findingIds())
            t.metrics["x." + id] = 1.0; // names no rule reads
        for (const auto* name : { m::kAchievedOccupancy, m::kDramThroughput, m::kL2HitRate, m::kLocalLoads,
                 m::kSharedLoadConflicts, m::kWarpLatency, m::kSmThroughput, m::kMemoryThroughput })
            t.metrics[name] = kNaN;
        t.metrics[m::stallRatio("long_scoreboard")] = kNaN;
        QVERIFY2(kl::synthesise(t).empty(), qPrintable(ids(kl::synthesise(t))));
    }

    void zeroesAndNegativesAreSilent()
    {
        Telemetry t;
        t.medianUs = t.gbps = t.pctOfCopy = t.copyGbps = t.bytes = t.flops = t.tflops = t.cv = t.graphMedianUs = 0.0;
        t.gridBlocks = 0;
        t.smCount = 0;
        t.stackFrame = -8;
        t.spillStores = -1;
        t.metrics[m::kWarpLatency] = 0.0;
        t.metrics[m::stallRatio("barrier")] = 0.0;
        t.metrics[m::kSharedLoadConflicts] = 0.0;
        t.metrics[m::kDramBytesRead] = 0.0;
        QVERIFY2(kl::synthesise(t).empty(), qPrintable(ids(kl::synthesise(t))));
        t.medianUs = -5.0;
        t.metrics[m::stallRatio("barrier")] = -3.0;
        QVERIFY2(kl::synthesise(t).empty(), qPrintable(ids(kl::synthesise(t))));
    }

    void percentagesAreClamped()
    {
        auto t = quiet();
        t.metrics[m::kAchievedOccupancy] = 130.0;
        QCOMPARE(*t.percent(m::kAchievedOccupancy), 100.0);
        t.metrics[m::kDramThroughput] = -4.0;
        QCOMPARE(*t.percent(m::kDramThroughput), 0.0);
        QVERIFY(!t.percent("no.such.metric"));
        t.metrics[m::kDramThroughput] = 35.0;
        t.theoreticalOccupancy = 0.5;
        t.metrics[m::kAchievedOccupancy] = 101.35;
        const auto findings = kl::synthesise(t);
        QVERIFY(!find(findings, "occupancy.achieved-below-theoretical"));
        const auto dram = find(findings, "dram.low-throughput");
        QVERIFY(dram);
        QCOMPARE(dram->evidence.at("dram_throughput_pct"), 35.0);

        t.metrics[m::stallRatio("lg_throttle")] = 15.0; // more than the 10-cycle latency
        const auto lg = find(kl::synthesise(t), "stall.lg_throttle");
        QVERIFY(lg);
        QCOMPARE(lg->evidence.at("share_of_stalls"), 1.0);
        QVERIFY(lg->priority < 2.0);
    }

    void stallsReportAtMostTheLimit()
    {
        auto t = quiet();
        t.metrics[m::kWarpLatency] = 30.0;
        t.metrics[m::stallRatio("long_scoreboard")] = 10.0;
        t.metrics[m::stallRatio("barrier")] = 8.0;
        t.metrics[m::stallRatio("wait")] = 7.0;
        const auto findings = kl::synthesise(t);
        QVERIFY(find(findings, "stall.long_scoreboard"));
        QVERIFY(find(findings, "stall.barrier"));
        QVERIFY(!find(findings, "stall.wait"));
        QCOMPARE(find(findings, "stall.long_scoreboard")->evidence.at("cycles_per_issue"), 10.0);
        QVERIFY(find(findings, "stall.long_scoreboard")->title.find("Stall Long Scoreboard: 33%") == 0);
        kl::FindingThresholds three;
        three.stallReasonsMax = 3;
        QVERIFY(find(kl::synthesise(t, three), "stall.wait"));
    }

    void sortedByPriorityWithinSeverityBands()
    {
        auto t = quiet();
        setRoofline(t, 5, 26.0);
        t.theoreticalOccupancy = 0.375, t.occupancyLimiter = "registers";
        t.stackFrame = 64;
        t.cv = 0.08;
        t.metrics[m::kDramThroughput] = 21.0;
        t.metrics[m::stallRatio("long_scoreboard")] = 6.0;
        const auto findings = kl::synthesise(t);
        QVERIFY(findings.size() >= 6);
        QCOMPARE(findings.front().id, std::string("bandwidth.under-ceiling"));
        QCOMPARE(findings.back().severity, Finding::Severity::Info);
        for (std::size_t i = 0; i < findings.size(); ++i) {
            const double rank = static_cast<double>(findings[i].severity);
            QVERIFY(findings[i].priority >= rank && findings[i].priority < rank + 1);
            if (i > 0)
                QVERIFY(findings[i - 1].priority >= findings[i].priority);
        }
        QCOMPARE(ids(kl::synthesise(t)), ids(findings)); // deterministic
    }

    void thresholdsDecide()
    {
        auto t = quiet();
        setRoofline(t, 5, 73.0);
        QCOMPARE(static_cast<int>(find(kl::synthesise(t), "bandwidth.under-ceiling")->severity), kInfo);
        kl::FindingThresholds strict;
        strict.bandwidthLowPct = 80.0;
        QCOMPARE(static_cast<int>(find(kl::synthesise(t, strict), "bandwidth.under-ceiling")->severity), kWarning);
        strict.bandwidthGoodPct = 70.0;
        QVERIFY(find(kl::synthesise(t, strict), "bandwidth.at-ceiling"));
    }

    void titlesCarryTheNumbers()
    {
        auto t = quiet();
        t.theoreticalOccupancy = 1.0 / 3, t.occupancyLimiter = "registers", t.registers = 64, t.blocksPerSm = 2;
        const auto f = find(kl::synthesise(t), "occupancy.register-limited");
        QVERIFY(f);
        QCOMPARE(QString::fromStdString(f->title),
            QStringLiteral("occupancy 33%: limited by registers (64/thread), 2 blocks/SM"));
        QVERIFY(std::find(f->tunerHints.begin(), f->tunerHints.end(), "fewer-registers") != f->tunerHints.end());
        QCOMPARE(f->evidence.at("registers"), 64.0);
    }

    void idsAreUnique()
    {
        const auto list = kl::findingIds();
        QCOMPARE(std::set<std::string>(list.begin(), list.end()).size(), list.size());
        QVERIFY(std::find(list.begin(), list.end(), "stall.gmma") != list.end());
        QVERIFY(std::find(list.begin(), list.end(), "stall.selected") == list.end());
    }
};

QTEST_APPLESS_MAIN(TestFindingsRules)
#include "test_findings_rules.moc"

// Metrics as Nsight Compute shows them: every metric the runner collects has a section and a
// label (no raw name left in "Other"), stall reasons fall under Warp State with their guidance, and
// values read in scaled units instead of raw ns and bytes.
#include "core/findings/metric_sections.h"

#include <QTest>

using kl::MetricSection;

class TestMetricSections : public QObject {
    Q_OBJECT
private slots:
    void sectionsOfCollectedMetrics_data()
    {
        QTest::addColumn<QString>("metric");
        QTest::addColumn<int>("section");
        QTest::addColumn<QString>("label");
        const auto row = [](const char* metric, MetricSection section, const char* label) {
            QTest::newRow(metric) << QString::fromLatin1(metric) << static_cast<int>(section)
                                  << QString::fromUtf8(label);
        };
        row("gpu__time_duration.sum", MetricSection::SpeedOfLight, "Duration");
        row("sm__throughput.avg.pct_of_peak_sustained_elapsed", MetricSection::SpeedOfLight, "Compute (SM) Throughput");
        row("lts__t_sector_hit_rate.pct", MetricSection::MemoryWorkload, "L2 Hit Rate");
        row("l1tex__t_sector_hit_rate.pct", MetricSection::MemoryWorkload, "L1/TEX Hit Rate");
        row("l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio", MetricSection::MemoryWorkload,
            "Global Load Sectors/Request");
        row("smsp__inst_executed_op_local_ld.sum", MetricSection::MemoryWorkload, "Local Loads (spills)");
        row("sm__warps_active.avg.pct_of_peak_sustained_active", MetricSection::Occupancy, "Achieved Occupancy");
        row("launch__registers_per_thread", MetricSection::LaunchStatistics, "Registers Per Thread");
        row("smsp__average_warp_latency_per_inst_issued.ratio", MetricSection::WarpState, "Warp Cycles per Issue");
        row("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", MetricSection::WarpState,
            "Stall Long Scoreboard");
        row("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", MetricSection::ComputeWorkload,
            "Tensor Pipe Utilization");
        row("made_up__metric.sum", MetricSection::Other, "made_up__metric.sum");
    }

    void sectionsOfCollectedMetrics()
    {
        QFETCH(QString, metric);
        QFETCH(int, section);
        QFETCH(QString, label);
        const kl::MetricPresentation shown = kl::presentMetric(metric.toStdString());
        QCOMPARE(static_cast<int>(shown.section), section);
        QCOMPARE(QString::fromStdString(shown.label), label);
    }

    void stallsCarryGuidanceAndKeepTheirOrder()
    {
        const auto stall
            = kl::presentMetric("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio");
        QVERIFY(!stall.guidance.empty());
        const auto latency = kl::presentMetric("smsp__average_warp_latency_per_inst_issued.ratio");
        QVERIFY(latency.order < stall.order);
        QVERIFY(kl::presentMetric("gpu__time_duration.sum").order < kl::presentMetric("dram__bytes_read.sum").order);
    }

    void readableValues_data()
    {
        QTest::addColumn<QString>("metric");
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("text");
        QTest::newRow("ns as µs") << QStringLiteral("gpu__time_duration.sum") << 40224.0
                                  << QString::fromUtf8("40.22 µs");
        QTest::newRow("small ns") << QStringLiteral("gpu__time_duration.sum") << 512.0 << QStringLiteral("512 ns");
        QTest::newRow("bytes") << QStringLiteral("dram__bytes_read.sum") << 67108864.0 << QStringLiteral("67.11 MB");
        QTest::newRow("bandwidth") << QStringLiteral("dram__bytes.sum.per_second") << 3.95e12
                                   << QStringLiteral("3.95 TB/s");
        QTest::newRow("percent") << QStringLiteral("lts__t_sector_hit_rate.pct") << 42.345 << QStringLiteral("42.3 %");
        QTest::newRow("count") << QStringLiteral("smsp__inst_executed_op_local_ld.sum") << 0.0 << QStringLiteral("0");
        QTest::newRow("cycles") << QStringLiteral("smsp__average_warp_latency_per_inst_issued.ratio") << 17.5
                                << QStringLiteral("17.50 cycles");
    }

    void readableValues()
    {
        QFETCH(QString, metric);
        QFETCH(double, value);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(kl::readableValue(metric.toStdString(), value)), text);
    }
};

QTEST_GUILESS_MAIN(TestMetricSections)
#include "test_metric_sections.moc"

// The runner's metric sets against CUPTI's own host side for the H200's chip (GH100), no GPU needed:
// every name is accepted, and the default set costs one pass. A pass is ~80 ms of CUPTI's kernel
// replay per profiled candidate on the H200 (docs/measurements.md), the largest part of a job.
#include "runner/metric_sets.h"

#include <QTest>

using namespace kl;
using namespace kl::runner;

class TestMetricPasses : public QObject {
    Q_OBJECT
private slots:
    void everySetIsAcceptedForGh100_data()
    {
        QTest::addColumn<int>("set");
        QTest::addColumn<int>("mostPasses");
        QTest::newRow("default") << int(protocol::MetricSet::Default) << 1;
        QTest::newRow("sol") << int(protocol::MetricSet::SpeedOfLight) << 9;
        QTest::newRow("stalls") << int(protocol::MetricSet::Stalls) << 7;
    }
    void everySetIsAcceptedForGh100()
    {
        QFETCH(int, set);
        QFETCH(int, mostPasses);
        std::string why;
        const int passes = hostPasses("GH100", metricsFor(static_cast<protocol::MetricSet>(set)), why);
        qInfo("%s: %d pass(es)", QTest::currentDataTag(), passes);
        QVERIFY2(passes > 0, why.c_str());
        QVERIFY2(passes <= mostPasses, qPrintable(QStringLiteral("%1 passes").arg(passes)));
    }
    // The check above can fail: CUPTI refuses names it does not know, and counts the old default's
    // issue rate per active cycle as a second pass.
    void theCheckCanFail()
    {
        std::string why;
        QCOMPARE(hostPasses("GH100", { "gpu__time_duration.sum", "no_such__metric.sum" }, why), 0);
        // The profiler's wording too: both go through runner/cupti_host_config.
        QVERIFY2(why.rfind("cuptiProfilerHostConfigAddMetrics(&add): ", 0) == 0, why.c_str());
        auto before = metricsFor(protocol::MetricSet::Default);
        for (std::string& m : before)
            if (m == "smsp__issue_active.avg.per_cycle_elapsed")
                m = "smsp__issue_active.avg.per_cycle_active";
        QCOMPARE(hostPasses("GH100", before, why), 2);
    }
};

QTEST_GUILESS_MAIN(TestMetricPasses)
#include "test_metric_passes.moc"

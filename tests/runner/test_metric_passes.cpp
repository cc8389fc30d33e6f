// The runner's metric sets against CUPTI's own host side for the H200's chip (GH100), no GPU needed:
// every name is accepted, and the default set costs one pass. A pass is ~80 ms of CUPTI's kernel
// replay per profiled candidate on the H200 (docs/measurements.md), the largest part of a job.
#include "runner/metric_sets.h"

#include <QTest>

#include <algorithm>

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
    // The compute side's counters (docs/gpu-facts.md, "Tensor-pipe counters"): every name is accepted on GH100, but
    // any one of them takes the default set from 1 pass to 2, so they live in the SOL set, which stays at
    // 9 passes with them (checked with CUDA 13.0's host API, no GPU).
    void tensorCountersAreInTheSolSet()
    {
        const std::vector<std::string> tensor { "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
            "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
            "sm__inst_executed_pipe_tensor.sum", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active" };
        const auto sol = metricsFor(protocol::MetricSet::SpeedOfLight);
        const auto defaults = metricsFor(protocol::MetricSet::Default);
        std::string why;
        for (const auto& name : tensor) {
            QVERIFY2(std::find(sol.begin(), sol.end(), name) != sol.end(), name.c_str());
            QVERIFY2(std::find(defaults.begin(), defaults.end(), name) == defaults.end(), name.c_str());
            QVERIFY2(hostPasses("GH100", { name }, why) == 1, (name + ": " + why).c_str());
            auto grown = defaults;
            grown.push_back(name);
            QCOMPARE(hostPasses("GH100", grown, why), 2);
        }
        QCOMPARE(hostPasses("GH100", sol, why), 9);
        QCOMPARE(hostPasses("GH100", defaults, why), 1);
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

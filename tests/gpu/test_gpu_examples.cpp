// Both bundled examples, end to end on a real GPU: compiled with NVRTC, requests built by the
// core, verified over every main, fuzz and padded size with two trials, timed beside the baseline
// and a same-size copy, profiled with the default metric set. Skips where the runner has no device.
#include "gpu_session.h"

#include <QtTest>

using namespace kl;

class TestGpuExamples : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        m_client = std::make_unique<RunnerClient>(gputest::runnerConfig());
        const protocol::Hello hello = m_client->start();
        if (!hello.deviceOk)
            QSKIP(qPrintable(QStringLiteral("no GPU: the runner says %1").arg(QString::fromStdString(hello.detail))));
        m_device = m_client->describe();
        qInfo("device: %s, %d SMs, L2 %lld bytes, copy %.0f GB/s", m_device.name.c_str(), m_device.smCount,
            static_cast<long long>(m_device.l2Bytes), m_device.copyBandwidthGbps);
    }

    void describeReportsTheDevice()
    {
        QVERIFY(!m_device.name.empty());
        QVERIFY(m_device.smCount > 0);
        QVERIFY(m_device.l2Bytes > 0);
        QVERIFY(m_device.sharedPerBlockOptin >= m_device.sharedPerBlock);
        QCOMPARE(m_device.copyBandwidthBytes, std::int64_t(2) << 30);
        // Any GPU we would tune on copies faster than 100 GB/s; none faster than 20 TB/s.
        QVERIFY2(m_device.copyBandwidthGbps > 100.0 && m_device.copyBandwidthGbps < 20000.0,
            qPrintable(QString::number(m_device.copyBandwidthGbps)));
        QVERIFY(m_device.uuid.starts_with("GPU-"));
    }

    void examplesVerifyTimeAndProfile_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("layernorm_gelu") << QStringLiteral("layernorm_gelu");
        QTest::newRow("softmax_bf16") << QStringLiteral("softmax_bf16");
    }
    void examplesVerifyTimeAndProfile()
    {
        QFETCH(QString, name);
        const Problem problem = gputest::example(name.toStdString());
        const TunedCandidate baseline { problem.baseline, problem.baseline.defaults() };
        protocol::EvaluateRequest request;
        std::string why;
        QVERIFY2(gputest::buildRequest(problem, baseline, baseline,
                     gputest::suiteOptions(true, protocol::MetricSet::Default), request, why),
            why.c_str());

        JobOptions job;
        job.timeout = std::chrono::milliseconds(180'000);
        const protocol::EvaluateResult result = m_client->evaluate(request, job);
        QVERIFY2(result.header.status == protocol::Status::Ok, gputest::describeResult(result).c_str());
        QCOMPARE(result.category(), protocol::Category::Passed);

        QVERIFY(result.verification && result.verification->passed);
        QCOMPARE(result.verification->cases.size(), request.cases.size() * 2);
        for (const protocol::CaseVerification& c : result.verification->cases) {
            QVERIFY2(c.passed, c.label.c_str());
            QCOMPARE(c.unwritten, std::int64_t(0));
            QVERIFY(c.elements > 0);
        }

        QVERIFY(result.timing);
        std::size_t timedCases = 0;
        for (const auto& c : request.cases)
            timedCases += c.timed;
        QCOMPARE(result.timing->cases.size(), timedCases);
        for (const protocol::CaseTiming& t : result.timing->cases) {
            QVERIFY(t.candidate.medianUs > 0.0);
            QVERIFY(t.candidate.reps >= request.options.minReps);
            QCOMPARE(t.candidate.samplesUs.size(), std::size_t(t.candidate.reps));
            QVERIFY(t.candidate.p20Us <= t.candidate.medianUs && t.candidate.medianUs <= t.candidate.p80Us);
            QVERIFY(t.copy && t.copy->medianUs > 0.0);
            QVERIFY(t.baseline && t.speedupVsBaseline);
            // The baseline against itself, in the same job: a speedup near 1.
            QVERIFY2(*t.speedupVsBaseline > 0.85 && *t.speedupVsBaseline < 1.15,
                qPrintable(QString::number(*t.speedupVsBaseline)));
            // Never faster than a copy of the same bytes (the floor check would have failed the job).
            QVERIFY(t.pctOfCopy && *t.pctOfCopy < 112.0);
            QVERIFY(t.gbps > 0.0);
            qInfo(
                "%s %s: median %.2f us (p20 %.2f, p80 %.2f, cv %.3f, %d reps), copy %.2f us, %.0f GB/s, %.1f%% of copy",
                qPrintable(name), t.label.c_str(), t.candidate.medianUs, t.candidate.p20Us, t.candidate.p80Us,
                t.candidate.cv, t.candidate.reps, t.copy->medianUs, t.gbps, *t.pctOfCopy);
        }

        QVERIFY(result.profile);
        if (result.profile->status == protocol::ProfileStatus::Unavailable) {
            QVERIFY(!result.profile->reason.empty());
            qWarning("profile unavailable: %s (%s)", result.profile->reason.c_str(), result.header.detail.c_str());
        } else {
            QCOMPARE(result.profile->status, protocol::ProfileStatus::Ok);
            QVERIFY(result.profile->passes >= 1);
            QCOMPARE(result.profile->kernels.size(), request.cases.front().programs.candidate.launches.size());
            for (const protocol::KernelProfile& k : result.profile->kernels) {
                QVERIFY(k.metrics.count("gpu__time_duration.sum"));
                QVERIFY(k.metrics.at("gpu__time_duration.sum") > 0.0);
                QVERIFY(k.metrics.at("dram__bytes_read.sum") > 0.0);
                qInfo("profile %s: %d passes, duration %.0f ns, DRAM read %.0f B, occupancy %.1f%%", k.kernel.c_str(),
                    result.profile->passes, k.metrics.at("gpu__time_duration.sum"),
                    k.metrics.at("dram__bytes_read.sum"),
                    k.metrics.at("sm__warps_active.avg.pct_of_peak_sustained_active"));
            }
        }
        QVERIFY(result.phasesMs.count("verify"));
    }

    void cleanupTestCase()
    {
        if (m_client)
            m_client->shutdown();
    }

private:
    std::unique_ptr<RunnerClient> m_client;
    protocol::DeviceDescription m_device;
};

QTEST_GUILESS_MAIN(TestGpuExamples)
#include "test_gpu_examples.moc"

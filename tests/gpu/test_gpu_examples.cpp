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
            // Adaptive (the default) stops once the median's interval is narrow enough, after at least
            // adaptive_min_reps runs; the fixed protocol runs at least min_reps.
            const int atLeast
                = result.timing->repetitions == "fixed" ? request.options.minReps : request.options.adaptiveMinReps;
            QVERIFY2(t.candidate.reps >= atLeast, qPrintable(QString::number(t.candidate.reps)));
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

    // The runner keeps the reference's outputs per (reference, case, seed): a second candidate of the
    // same problem and seed restores them instead of running the reference, with the very same
    // verdicts and errors as a runner that computes them (its cache off); another seed misses; a
    // hostile candidate is still caught on restored outputs (runner/reference_cache.h).
    void referenceOutputsComeFromTheRunnersCache()
    {
        const Problem problem = gputest::example("layernorm_gelu");
        const TunedCandidate baseline { problem.baseline, problem.baseline.defaults() };
        const TunedCandidate other { problem.baseline,
            problem.baseline.withOverrides({ { "THREADS", 256 }, { "VEC", 8 } }) };
        protocol::EvaluateOptions options = gputest::suiteOptions(false, protocol::MetricSet::None);
        options.seed = 99'000'001; // not used by the other tests of this runner
        protocol::EvaluateRequest first, second, otherSeed;
        std::string why;
        QVERIFY2(gputest::buildRequest(problem, baseline, std::nullopt, options, first, why), why.c_str());
        QVERIFY2(gputest::buildRequest(problem, other, std::nullopt, options, second, why), why.c_str());
        options.seed += 1000;
        QVERIFY2(gputest::buildRequest(problem, other, std::nullopt, options, otherSeed, why), why.c_str());

        const auto phase = [](const protocol::EvaluateResult& r, const char* name) {
            const auto it = r.phasesMs.find(name);
            return it == r.phasesMs.end() ? -1.0 : it->second;
        };
        const protocol::EvaluateResult stored = m_client->evaluate(first);
        QCOMPARE(stored.category(), protocol::Category::Passed);
        QVERIFY2(phase(stored, "verify_reference_store") > 0.0, "the first job keeps the reference's outputs");
        QCOMPARE(phase(stored, "verify_reference_restore"), -1.0);

        const protocol::EvaluateResult restored = m_client->evaluate(second);
        QCOMPARE(restored.category(), protocol::Category::Passed);
        QVERIFY2(phase(restored, "verify_reference_restore") >= 0.0,
            ("the second candidate restores them; runner stderr: " + m_client->stderrTail()).c_str());
        QCOMPARE(phase(restored, "verify_reference_store"), -1.0);
        qInfo("reference: %.1f ms computed in the first job, %.1f ms restored in the second (%.1f ms left running)",
            phase(stored, "verify_reference"), phase(restored, "verify_reference_restore"),
            phase(restored, "verify_reference"));
        QVERIFY(phase(restored, "verify_reference") < phase(stored, "verify_reference"));

        const protocol::EvaluateResult missed = m_client->evaluate(otherSeed);
        QCOMPARE(missed.category(), protocol::Category::Passed);
        QCOMPARE(phase(missed, "verify_reference_restore"), -1.0);
        QVERIFY(phase(missed, "verify_reference_store") > 0.0);

        // A runner that computes every reference: the same verdicts, errors and mismatch counts.
        qputenv("KL_RUNNER_REFERENCE_CACHE_MB", "0");
        RunnerClient uncached(gputest::runnerConfig());
        const protocol::Hello hello = uncached.start();
        qunsetenv("KL_RUNNER_REFERENCE_CACHE_MB");
        QVERIFY(hello.deviceOk);
        const protocol::EvaluateResult computed = uncached.evaluate(second);
        uncached.shutdown();
        QCOMPARE(phase(computed, "verify_reference_store"), -1.0);
        QCOMPARE(computed.category(), protocol::Category::Passed);
        QVERIFY(computed.verification && restored.verification);
        QCOMPARE(computed.verification->cases.size(), restored.verification->cases.size());
        for (std::size_t i = 0; i < computed.verification->cases.size(); ++i) {
            const auto &a = computed.verification->cases[i], &b = restored.verification->cases[i];
            QCOMPARE(a.label, b.label);
            QCOMPARE(a.passed, b.passed);
            QCOMPARE(a.mismatches, b.mismatches);
            QCOMPARE(a.maxAbsError, b.maxAbsError);
            QCOMPARE(a.maxRelError, b.maxRelError);
        }

        // A wrong candidate against restored outputs: still wrong, and where.
        const auto hostile = gputest::sourceDir() / "tests" / "gpu" / "hostile" / "one_row_everywhere.cu";
        const Candidate wrongSource = loadCandidate(hostile.string());
        const TunedCandidate wrong { wrongSource, wrongSource.defaults() };
        protocol::EvaluateRequest wrongRequest;
        options.seed -= 1000;
        QVERIFY2(gputest::buildRequest(problem, wrong, std::nullopt, options, wrongRequest, why), why.c_str());
        const protocol::EvaluateResult caught = m_client->evaluate(wrongRequest);
        QVERIFY2(phase(caught, "verify_reference_restore") >= 0.0, "restored for the hostile candidate too");
        QCOMPARE(caught.category(), protocol::Category::WrongResult);
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

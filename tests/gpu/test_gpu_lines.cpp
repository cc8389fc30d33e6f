// PC sampling down to the source line on a real GPU: two planted kernels (tests/gpu/lines) must
// show their marked line hottest with the warp state they were built to cause. With
// KL_LINES_DUMP_DIR set it writes the goldens the CPU suites read: each reply, cubin and PTX.
#include "gpu_session.h"

#include "core/lines/line_heat.h"
#include "core/lines/pc_sampling.h"

#include <QtTest>

#include <fstream>
#include <sstream>

using namespace kl;

namespace {

std::filesystem::path linesDir() { return gputest::sourceDir() / "tests" / "gpu" / "lines"; }

int markedLine(const std::string& source)
{
    std::istringstream in(source);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
        if (line.find("// @hot") != std::string::npos)
            return n;
    return 0;
}

void writeFile(const std::filesystem::path& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out << bytes;
}

} // namespace

class TestGpuLines : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        m_client = std::make_unique<RunnerClient>(gputest::runnerConfig());
        const protocol::Hello hello = m_client->start();
        if (!hello.deviceOk)
            QSKIP(qPrintable(QStringLiteral("no GPU: the runner says %1").arg(QString::fromStdString(hello.detail))));
    }

    void plantedLineIsHottest_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QStringList>("stalls");
        QTest::newRow("pointer_chase") << QStringLiteral("pointer_chase")
                                       << QStringList { QStringLiteral("long_scoreboard") };
        QTest::newRow("bank_conflict") << QStringLiteral(
            "bank_conflict") << QStringList { QStringLiteral("mio_throttle"), QStringLiteral("short_scoreboard") };
    }
    void plantedLineIsHottest()
    {
        QFETCH(QString, name);
        QFETCH(QStringList, stalls);
        const Problem problem = loadProblem(linesDir() / name.toStdString() / "problem.json");
        const TunedCandidate baseline { problem.baseline, problem.baseline.defaults() };
        protocol::EvaluateOptions options = gputest::suiteOptions(false, protocol::MetricSet::None);
        options.trials = 1;
        options.pcSampling = true;
        const EvaluateJob job = compileEvaluateJob(problem, baseline, std::nullopt);
        if (const CompiledCandidate* failed = job.firstCompileFailure()) // QVERIFY2 would read its message eagerly
            QFAIL(failed->compiled.log.c_str());
        const protocol::EvaluateRequest request = buildEvaluateRequest(problem, job, options);

        JobOptions jobOptions;
        jobOptions.timeout = std::chrono::milliseconds(120'000);
        const protocol::EvaluateResult result = m_client->evaluate(request, jobOptions);
        QVERIFY2(result.header.status == protocol::Status::Ok, gputest::describeResult(result).c_str());

        if (const QByteArray dump = qgetenv("KL_LINES_DUMP_DIR"); !dump.isEmpty()) {
            const std::filesystem::path dir(dump.toStdString());
            std::filesystem::create_directories(dir);
            writeFile(dir / (name.toStdString() + "-lines-h200.json"), nlohmann::json(result).dump(1) + "\n");
            writeFile(dir / (name.toStdString() + ".cubin"), job.candidate.compiled.cubin);
            writeFile(dir / (name.toStdString() + ".ptx"), job.candidate.compiled.ptx);
        }

        const auto& sampling = result.pcSampling;
        QVERIFY2(sampling, "no pc_sampling value in the reply");
        QVERIFY2(sampling->status == lines::SamplingStatus::Ok, (sampling->reason + ": " + sampling->detail).c_str());
        const std::string& source = problem.baseline.source;
        const lines::LineHeat heat = lines::lineHeat(*sampling, problem.baseline.fileName);
        qInfo("%s: %d runs, %lld samples (%lld dropped, %lld elsewhere), phase %.1f ms (runner %.1f ms)\n%s",
            qPrintable(name), sampling->runs, static_cast<long long>(sampling->totalSamples),
            static_cast<long long>(sampling->droppedSamples), static_cast<long long>(sampling->otherSamples),
            result.phasesMs.count("pc_sampling") ? result.phasesMs.at("pc_sampling") : -1.0, sampling->milliseconds,
            lines::hotLinesReport(*sampling, source, 5, problem.baseline.fileName).c_str());
        QVERIFY(!heat.lines.empty());
        const int planted = markedLine(source);
        QVERIFY(planted > 0);
        QCOMPARE(heat.lines.front().line, planted);
        QVERIFY2(stalls.contains(QString::fromStdString(heat.lines.front().dominantStall())),
            heat.lines.front().dominantStall().c_str());
        QVERIFY(heat.lines.front().share > 0.3);
    }

    // What the phase costs on a real candidate, beside the stall counters in the same job (both
    // CUPTI parts in one process, one after the other).
    void phaseCostBesideTheCounters()
    {
        const Problem problem = gputest::example("layernorm_gelu");
        const TunedCandidate baseline { problem.baseline, problem.baseline.defaults() };
        protocol::EvaluateOptions options = gputest::suiteOptions(true, protocol::MetricSet::Stalls);
        options.pcSampling = true;
        protocol::EvaluateRequest request;
        std::string why;
        QVERIFY2(gputest::buildRequest(problem, baseline, baseline, options, request, why), why.c_str());
        JobOptions jobOptions;
        jobOptions.timeout = std::chrono::milliseconds(180'000);
        const protocol::EvaluateResult result = m_client->evaluate(request, jobOptions);
        QVERIFY2(result.header.status == protocol::Status::Ok, gputest::describeResult(result).c_str());
        if (const QByteArray dump = qgetenv("KL_LINES_DUMP_DIR"); !dump.isEmpty())
            writeFile(std::filesystem::path(dump.toStdString()) / "layernorm_gelu-deep-h200.json",
                nlohmann::json(result).dump(1) + "\n");
        QVERIFY(result.profile && result.profile->status == protocol::ProfileStatus::Ok);
        const auto& sampling = result.pcSampling;
        QVERIFY(sampling);
        QVERIFY2(sampling->status == lines::SamplingStatus::Ok, (sampling->reason + ": " + sampling->detail).c_str());
        QString phases;
        for (const auto& [phase, ms] : result.phasesMs)
            phases += QStringLiteral(" %1=%2").arg(QString::fromStdString(phase)).arg(ms, 0, 'f', 1);
        qInfo("layernorm_gelu deep: phases_ms%s\n%s", qPrintable(phases),
            lines::hotLinesReport(*sampling, problem.baseline.source, 5, problem.baseline.fileName).c_str());
    }

private:
    std::unique_ptr<RunnerClient> m_client;
};

QTEST_GUILESS_MAIN(TestGpuLines)
#include "test_gpu_lines.moc"

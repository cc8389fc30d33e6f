// Hostile Triton candidates (tests/gpu/hostile_triton/*.py) for layernorm_gelu_triton: the runner's
// hostile suite rewritten in Triton where the language allows. Each is compiled by the Triton
// helper (python/kernelloop/triton_aot.py), verified against the PyTorch reference by the runner's
// worker, and must come back with the category on its first line; after each, the runner (or the
// fresh one the client starts after a lost context) must pass the good candidate again.
// Skips without a GPU (the runner's hello) and without Triton (the helper's needs-triton).
#include "gpu_session.h"

#include <QDir>
#include <QtTest>

#include <fstream>

using namespace kl;

namespace {

std::filesystem::path hostileDir() { return gputest::sourceDir() / "tests" / "gpu" / "hostile_triton"; }

// The first line of each file: "# expect: <category>".
QString expectedCategory(const std::filesystem::path& file)
{
    std::ifstream in(file);
    std::string first;
    std::getline(in, first);
    const std::string prefix = "# expect: ";
    return first.starts_with(prefix) ? QString::fromStdString(first.substr(prefix.size())).trimmed() : QString();
}

} // namespace

class TestGpuTritonHostile : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        qputenv("KL_RUNNER_KERNEL_TIMEOUT_MS", "3000"); // the infinite loop costs seconds, as in test_gpu_hostile
        qputenv("KL_CONTENDERS", "eager"); // torch.compile's tens of seconds a runner buy nothing here
        m_problem = gputest::example("layernorm_gelu_triton");
        m_client = std::make_unique<RunnerClient>(gputest::runnerConfig());
        const protocol::Hello hello = m_client->start();
        if (!hello.deviceOk)
            QSKIP(qPrintable(QStringLiteral("no GPU: the runner says %1").arg(QString::fromStdString(hello.detail))));
        const Candidate good = loadCandidate((hostileDir() / "good.py").string());
        const EvaluateJob job = compileEvaluateJob(m_problem, { good, good.defaults() }, std::nullopt);
        if (job.candidate.compiled.kind == CompileErrorKind::NeedsTriton)
            QSKIP(job.candidate.compiled.summary.c_str());
        QVERIFY2(job.candidate.compiled.ok, job.candidate.compiled.summary.c_str());
        qInfo("good.py: %s", job.candidate.compiled.summary.c_str());
    }

    void hostileCandidateIsCaught_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("category");
        const QDir dir(QString::fromStdString(hostileDir().string()));
        const QStringList files = dir.entryList({ QStringLiteral("*.py") }, QDir::Files, QDir::Name);
        QVERIFY(files.size() >= 7);
        for (const QString& file : files) {
            const QString category = expectedCategory(hostileDir() / file.toStdString());
            QVERIFY2(!category.isEmpty(), qPrintable(file));
            QTest::newRow(qPrintable(file)) << file << category;
        }
    }
    void hostileCandidateIsCaught()
    {
        QFETCH(QString, file);
        QFETCH(QString, category);
        const Candidate hostile = loadCandidate((hostileDir() / file.toStdString()).string());
        protocol::EvaluateRequest request;
        std::string why;
        QVERIFY2(gputest::buildRequest(m_problem, { hostile, hostile.defaults() }, std::nullopt,
                     gputest::suiteOptions(true, protocol::MetricSet::None), request, why),
            why.c_str());
        JobOptions job;
        // Far above the runner's 3 s guard, which must be what ends the infinite loop (asserted below).
        job.timeout = std::chrono::milliseconds(90'000);
        const protocol::EvaluateResult result = m_client->evaluate(request, job);
        qInfo("%s -> %s", qPrintable(file), gputest::describeResult(result).c_str());
        QCOMPARE(QString::fromStdString(std::string(protocol::categoryName(result.category()))), category);
        if (category != QStringLiteral("passed")) {
            QCOMPARE(result.header.status, protocol::Status::Failed);
            QVERIFY2(!result.timing, "a failed candidate is never timed");
        }
        if (category == QStringLiteral("timeout")) // the runner's guard answered, not the client's timeout
            QVERIFY2(result.header.detail.find("wall-clock guard") != std::string::npos, result.header.detail.c_str());

        const Candidate good = loadCandidate((hostileDir() / "good.py").string());
        protocol::EvaluateRequest next;
        QVERIFY2(gputest::buildRequest(m_problem, { good, good.defaults() }, std::nullopt,
                     gputest::suiteOptions(true, protocol::MetricSet::None), next, why),
            why.c_str());
        job.timeout = std::chrono::milliseconds(90'000);
        const protocol::EvaluateResult after = m_client->evaluate(next, job);
        QVERIFY2(after.category() == protocol::Category::Passed, gputest::describeResult(after).c_str());
    }

    void cleanupTestCase()
    {
        if (m_client)
            m_client->shutdown();
    }

private:
    std::unique_ptr<RunnerClient> m_client;
    Problem m_problem;
};

QTEST_GUILESS_MAIN(TestGpuTritonHostile)
#include "test_gpu_triton_hostile.moc"

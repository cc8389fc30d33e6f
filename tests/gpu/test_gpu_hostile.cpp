// Hostile candidates (tests/gpu/hostile/*.cu) for layernorm_gelu: each is wrong or dangerous in
// one way and must come back with its own category, and the runner (or the fresh one the client
// starts after a lost context) must then verify and time a good candidate as usual.
#include "gpu_session.h"

#include <QDir>
#include <QtTest>

#include <fstream>

using namespace kl;

namespace {

std::filesystem::path hostileDir() { return gputest::sourceDir() / "tests" / "gpu" / "hostile"; }

// The first line of each file: "// expect: <category>".
QString expectedCategory(const std::filesystem::path& file)
{
    std::ifstream in(file);
    std::string first;
    std::getline(in, first);
    const std::string prefix = "// expect: ";
    return first.starts_with(prefix) ? QString::fromStdString(first.substr(prefix.size())).trimmed() : QString();
}

} // namespace

class TestGpuHostile : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        // The runner's own wall-clock guard, short so that the infinite loop costs seconds;
        // the client's job timeout below stays longer, so the runner is the one that reports it.
        qputenv("KL_RUNNER_KERNEL_TIMEOUT_MS", "3000");
        m_client = std::make_unique<RunnerClient>(gputest::runnerConfig());
        const protocol::Hello hello = m_client->start();
        if (!hello.deviceOk)
            QSKIP(qPrintable(QStringLiteral("no GPU: the runner says %1").arg(QString::fromStdString(hello.detail))));
        m_problem = gputest::example("layernorm_gelu");
    }

    void hostileCandidateIsCaught_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("category");
        const QDir dir(QString::fromStdString(hostileDir().string()));
        const QStringList files = dir.entryList({ QStringLiteral("*.cu") }, QDir::Files, QDir::Name);
        QVERIFY(files.size() >= 10);
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
        job.timeout = std::chrono::milliseconds(60'000);
        const int startsBefore = m_client->starts();
        const protocol::EvaluateResult result = m_client->evaluate(request, job);
        qInfo("%s -> %s", qPrintable(file), gputest::describeResult(result).c_str());
        QCOMPARE(QString::fromStdString(std::string(protocol::categoryName(result.category()))), category);
        if (category != QStringLiteral("passed")) {
            QCOMPARE(result.header.status, protocol::Status::Failed);
            QVERIFY2(!result.timing, "a failed candidate is never timed");
            QVERIFY(!result.header.detail.empty());
        }
        if (category == QStringLiteral("timeout")) {
            // The runner's own guard answered, not the client's job timeout: freeing the job's memory
            // would wait for the spinning kernel, so the runner must answer before anything does.
            QVERIFY2(result.header.detail.find("wall-clock guard") != std::string::npos, result.header.detail.c_str());
        }
        if (category == QStringLiteral("wrong-result") || category == QStringLiteral("nan-output")
            || category == QStringLiteral("unwritten-output")) {
            // The report says where: the failing case carries counts, an index and a window.
            QVERIFY(result.verification && !result.verification->cases.empty());
            const protocol::CaseVerification& failed = result.verification->cases.back();
            QVERIFY(!failed.passed);
            QCOMPARE(failed.worstIndex.size(), std::size_t(2));
            QVERIFY(failed.window && !failed.window->actual.empty());
            QCOMPARE(failed.worstOutput, std::string("y"));
        }

        // The next job runs normally, on this runner or on a fresh one.
        protocol::EvaluateRequest good;
        const TunedCandidate baseline { m_problem.baseline, m_problem.baseline.defaults() };
        QVERIFY2(gputest::buildRequest(m_problem, baseline, std::nullopt,
                     gputest::suiteOptions(true, protocol::MetricSet::None), good, why),
            why.c_str());
        const protocol::EvaluateResult after = m_client->evaluate(good, job);
        QVERIFY2(after.category() == protocol::Category::Passed, gputest::describeResult(after).c_str());
        QVERIFY(after.timing && !after.timing->cases.empty());
        qInfo("  next job passed (runner starts so far: %d, before this candidate: %d)", m_client->starts(),
            startsBefore);
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

QTEST_GUILESS_MAIN(TestGpuHostile)
#include "test_gpu_hostile.moc"

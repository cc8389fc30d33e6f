// Failed rounds in the LLM loop: an endpoint that fails (HTTP 5xx, a body that is not JSON) or a
// model whose replies hold no usable kernel gives rounds with nothing to run. They do not count
// toward patience (which is about measured gains) but toward their own limit; the failure goes
// into the next prompt, and a 429/5xx makes the next request wait (Retry-After, capped). Real HTTP
// over loopback, real NVRTC, the runner double, a real SQLite file.
#include "core/llm/llm_proposer.h"
#include "core/loop/tuning_session.h"
#include "core/runnerclient/runner_client.h"
#include "core/store/store.h"
#include "tests/loop/loop_support.h"

#include "tests/llm/replay_bodies.h"
#include "tests/llm/replay_server.h"

#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <mutex>

using kl::test::ReplayServer;
using kl::test::Reply;
using kl::test::SeenRequest;

namespace {

using Clock = std::chrono::steady_clock;

// The vectorised candidate with another default block size: another cubin, so another time.
std::string candidateReply(int threads)
{
    auto text = kl::test::fixture("replies/ok_vectorised.md");
    const std::string from = "THREADS = 128 in";
    text.replace(text.find(from), from.size(), "THREADS = " + std::to_string(threads) + " in");
    return text;
}

// Serves one scripted answer per request, in order; the last one repeats.
class ScriptedEndpoint {
public:
    ScriptedEndpoint(ReplayServer& server, std::vector<Reply> script)
        : m_script(std::move(script))
    {
        server.route("/v1/chat/completions", [this](const SeenRequest&, int count) {
            std::lock_guard lock(m_mutex);
            m_times.push_back(Clock::now());
            return m_script[std::min(std::size_t(count), m_script.size()) - 1];
        });
    }
    std::vector<Clock::time_point> times() const
    {
        std::lock_guard lock(m_mutex);
        return m_times;
    }

private:
    std::vector<Reply> m_script;
    mutable std::mutex m_mutex;
    std::vector<Clock::time_point> m_times;
};

Reply answer(const std::string& text)
{
    Reply r;
    r.body = kl::test::openAiCompletion({ text }, "replay", { 1000, 700 });
    return r;
}

Reply status(int code, std::string body, std::string retryAfter = {})
{
    Reply r;
    r.status = code;
    r.body = std::move(body);
    if (!retryAfter.empty())
        r.headers = { { "Retry-After", std::move(retryAfter) } };
    return r;
}

Reply notJson()
{
    Reply r;
    r.contentType = "text/html";
    r.body = "<html><body>502 Bad Gateway, or a captive portal</body></html>";
    return r;
}

kl::LlmProposer singleRoleProposer(const ReplayServer& server)
{
    kl::EndpointConfig c;
    c.baseUrl = server.url("/v1");
    c.model = "replay";
    c.timeouts.total = std::chrono::seconds(20);
    c.retry.maxAttempts = 1; // every fault reaches the loop
    c.retry.initialDelay = std::chrono::milliseconds(20);
    kl::LlmProposerConfig lc;
    lc.roles = kl::LlmProposerConfig::Roles::Single;
    return kl::LlmProposer(kl::makeChatClient(c), kl::PromptLibrary::builtIn(), lc);
}

} // namespace

class TestLlmRounds : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init() { qputenv("KL_MODEL_RUNNER_IMPROVING", "1"); } // every new candidate wins: gains stay high
    void cleanup() { qunsetenv("KL_MODEL_RUNNER_IMPROVING"); }

    void failedRoundsDoNotSpendPatience_data()
    {
        QTest::addColumn<QString>("first");
        QTest::addColumn<QString>("second");
        QTest::newRow("endpoint faults") << "http-5xx"
                                         << "bad-json";
        QTest::newRow("format errors") << "no-code"
                                       << "several-candidates";
    }

    // With --budget 5 and the default patience of 2, two failed rounds used to end the session
    // ("2 consecutive iterations gained less than 5%"). Now it runs to its budget.
    void failedRoundsDoNotSpendPatience()
    {
        QFETCH(QString, first);
        QFETCH(QString, second);
        const auto fault = [](const QString& kind) {
            if (kind == QStringLiteral("http-5xx"))
                return status(500, kl::test::fixture("openai/error_500.json"));
            if (kind == QStringLiteral("bad-json"))
                return notJson();
            return answer(kl::test::fixture(
                kind == QStringLiteral("no-code") ? "replies/no_code.md" : "replies/several_candidates.md"));
        };
        ReplayServer server;
        ScriptedEndpoint endpoint(server,
            { fault(first), fault(second), answer(candidateReply(256)), answer(candidateReply(512)),
                answer(candidateReply(1024)) });
        QTemporaryDir dir;
        auto store = kl::store::Store::open(dir.filePath(QStringLiteral("s.db")).toStdString());
        kl::RunnerClient runner(kl::test::modelRunner());
        const auto problem = kl::test::layernormProblem();
        auto config = kl::test::loopConfig(5, 1, "llm:replay");
        config.stop.patience = 2; // the default
        kl::TuningSession session(problem, store, runner, config);
        auto proposer = singleRoleProposer(server);
        const auto summary = session.run(proposer);

        QVERIFY2(summary.rounds == 5, summary.stopReason.c_str());
        QCOMPARE(QString::fromStdString(summary.stopReason), QStringLiteral("iteration budget of 5 spent"));
        const auto rows = store.listIterations(summary.sessionId);
        QCOMPARE(rows.size(), std::size_t(6));
        QCOMPARE(QString::fromStdString(rows[1].category), QStringLiteral("proposer.") + first);
        QCOMPARE(QString::fromStdString(rows[2].category), QStringLiteral("proposer.") + second);
        for (std::size_t i = 3; i < rows.size(); ++i)
            QCOMPARE(QString::fromStdString(rows[i].category), QStringLiteral("passed"));

        // The failures went into the next prompts.
        const auto requests = server.requests();
        QCOMPARE(requests.size(), std::size_t(5));
        QVERIFY(requests[1].body.find("proposer-error (" + first.toStdString() + ")") != std::string::npos);
        QVERIFY(requests[2].body.find("proposer-error (" + second.toStdString() + ")") != std::string::npos);
    }

    // An endpoint that keeps failing ends the session after --max-failed-rounds rounds (3 by
    // default), with a reason that names the failure, long before the budget.
    void consecutiveFailedRoundsEndTheSession()
    {
        ReplayServer server;
        ScriptedEndpoint endpoint(server, { status(500, kl::test::fixture("openai/error_500.json"), "0") });
        QTemporaryDir dir;
        auto store = kl::store::Store::open(dir.filePath(QStringLiteral("s.db")).toStdString());
        kl::RunnerClient runner(kl::test::modelRunner());
        const auto problem = kl::test::layernormProblem();
        auto config = kl::test::loopConfig(10, 1, "llm:replay");
        QCOMPARE(config.stop.maxFailedRounds, 3);
        kl::TuningSession session(problem, store, runner, config);
        auto proposer = singleRoleProposer(server);
        const auto summary = session.run(proposer);
        QVERIFY2(summary.rounds == 3, summary.stopReason.c_str());
        QCOMPARE(QString::fromStdString(summary.stopReason),
            QStringLiteral("3 consecutive rounds gave no candidate to run (the last: proposer.http-5xx)"));
        QCOMPARE(server.requestCount("/v1/chat/completions"), 3);
    }

    // After a 429 the next request waits for the server's Retry-After; after a 5xx without one, for
    // a backoff. Rounds that would fire at once would only be refused again.
    void serverFailuresBackOffBeforeTheNextRequest()
    {
        ReplayServer server;
        ScriptedEndpoint endpoint(server,
            { status(429, kl::test::fixture("openai/error_429.json"), "1"),
                status(500, kl::test::fixture("openai/error_500.json")), answer(candidateReply(256)) });
        QTemporaryDir dir;
        auto store = kl::store::Store::open(dir.filePath(QStringLiteral("s.db")).toStdString());
        kl::RunnerClient runner(kl::test::modelRunner());
        const auto problem = kl::test::layernormProblem();
        kl::TuningSession session(problem, store, runner, kl::test::loopConfig(3, 1, "llm:replay"));
        auto proposer = singleRoleProposer(server);
        const auto summary = session.run(proposer);
        QCOMPARE(summary.rounds, 3);
        const auto times = endpoint.times();
        QCOMPARE(times.size(), std::size_t(3));
        const auto gap = [&](std::size_t i) {
            return std::chrono::duration_cast<std::chrono::milliseconds>(times[i] - times[i - 1]).count();
        };
        QVERIFY2(gap(1) >= 950, qPrintable(QString::number(gap(1)))); // Retry-After: 1
        QVERIFY2(gap(2) >= 10, qPrintable(QString::number(gap(2)))); // backoff from 20 ms, jittered
        const auto rows = store.listIterations(summary.sessionId);
        QCOMPARE(QString::fromStdString(rows[1].category), QStringLiteral("proposer.http-429"));
        const auto first = store.iteration(summary.sessionId, rows[1].index);
        QVERIFY(first);
        QVERIFY2(first->result && first->result->detail.find("the next request waits 1000 ms") != std::string::npos,
            first->result ? first->result->detail.c_str() : "no result");
    }
};

QTEST_GUILESS_MAIN(TestLlmRounds)
#include "test_llm_rounds.moc"

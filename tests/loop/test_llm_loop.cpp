// The loop with the LLM proposer, end to end without a GPU: real HTTP over loopback to a server
// replaying recorded replies (both protocols, streamed), real prompt templates, real reply
// parsing, real NVRTC, a real SQLite file and a real runner process that models timings
// (tests/loop/model_runner.cpp). The GPU script runs the same loop on the H200.
#include "core/llm/llm_proposer.h"
#include "core/llm/token_budget.h"
#include "core/loop/tuning_session.h"
#include "core/model/problem.h"
#include "core/propose/hybrid_proposer.h"
#include "core/runnerclient/runner_client.h"
#include "core/store/store.h"
#include "core/tuner/tuner.h"
#include "tests/loop/loop_support.h"
#include "tests/loop/scripted_model.h"

#include "tests/llm/replay_bodies.h"
#include "tests/llm/replay_server.h"

#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <mutex>
#include <sstream>

using kl::test::ReplayServer;
using kl::test::Reply;
using kl::test::SeenRequest;

namespace {

using kl::test::client;
using kl::test::kPlantedKey;
using kl::test::ScriptedModel;

kl::Problem layernorm() { return kl::test::layernormProblem(); }
using kl::test::modelRunner;

kl::LoopConfig loopConfig(int budget, int k) { return kl::test::loopConfig(budget, k, "llm:replay"); }

std::string reply(const std::string& name) { return kl::test::fixture("replies/" + name); }

// The ok_vectorised candidate with a missing semicolon: NVRTC rejects it.
std::string brokenReply()
{
    auto text = reply("ok_vectorised.md");
    const auto at = text.find("__syncthreads();");
    text.replace(at, 16, "__syncthreads()");
    return text;
}

// The same kernel fixed (a distinct source, so the cache does not answer for it).
std::string fixedReply()
{
    auto text = reply("ok_vectorised.md");
    const auto at = text.find("```cuda\n") + 8;
    text.insert(at, "// Fixed: the barrier before the block sum lacked its semicolon.\n");
    return "The compiler stopped at a missing semicolon after `__syncthreads()`.\n\n" + text;
}

std::string fileText(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<std::string> exchangeRoles(const kl::store::IterationDetail& d)
{
    std::vector<std::string> roles;
    for (const auto& x : d.exchanges)
        roles.push_back(x.role);
    return roles;
}

} // namespace

class TestLlmLoop : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Planner → coder each round, the debugger after a compile error, a refusal recorded and
    // survived; every exchange stored with its iteration, the hypothesis beside the measurement.
    void plannerCoderDebuggerRounds()
    {
        ReplayServer server;
        ScriptedModel model(server,
            { { "planner", { reply("plan_only.md"), reply("plan_only.md"), reply("refusal.md") } },
                { "coder", { reply("ok_vectorised.md"), brokenReply() } }, { "debugger", { fixedReply() } } });
        QTemporaryDir dir;
        const auto db = dir.filePath(QStringLiteral("s.db")).toStdString();
        const auto problem = layernorm();
        std::int64_t sessionId = 0;
        std::string streamed;
        {
            auto store = kl::store::Store::open(db);
            kl::RunnerClient runner(modelRunner());
            kl::TuningSession session(problem, store, runner, loopConfig(4, 1));
            kl::LlmProposerConfig lc;
            lc.onText = [&](std::string_view, int, std::string_view text) { streamed += text; };
            kl::LlmProposer proposer(client(server, kl::Provider::OpenAi), kl::PromptLibrary::builtIn(), lc);
            const auto summary = session.run(proposer);
            sessionId = summary.sessionId;

            QCOMPARE(summary.rounds, 4);
            QVERIFY(summary.passAtK.has_value());
            QCOMPARE(*summary.passAtK, 0.5); // rounds 1 and 3 passed, 2 (compile) and 4 (refusal) did not
            QVERIFY(summary.tokens > 0);
            QVERIFY(proposer.tokensUsed() > 0);
        }
        const std::vector<std::string> expectedRoles { "planner", "coder", "planner", "coder", "debugger", "planner" };
        QCOMPARE(model.roles(), expectedRoles);
        QVERIFY2(streamed.find("## Plan") != std::string::npos, "the text streamed as it arrived");

        const auto requests = server.requests();
        // The second planner sees the first round's outcome; the debugger sees the compiler's
        // complaint and the broken source.
        QVERIFY(requests[2].body.find("iteration 2") != std::string::npos);
        QVERIFY(requests[4].body.find("compile-error") != std::string::npos
            || requests[4].body.find("compile.") != std::string::npos);
        QVERIFY(requests[4].body.find("__syncthreads() // the previous call") != std::string::npos);

        auto store = kl::store::Store::open(db);
        const auto rows = store.listIterations(sessionId);
        QCOMPARE(rows.size(), std::size_t(5));
        QCOMPARE(QString::fromStdString(rows[1].category), QStringLiteral("passed"));
        QVERIFY(rows[2].category.rfind("compile.", 0) == 0);
        QCOMPARE(QString::fromStdString(rows[3].category), QStringLiteral("passed"));
        QCOMPARE(QString::fromStdString(rows[4].category), QStringLiteral("proposer.refusal"));
        for (int i = 1; i < 5; ++i) {
            QVERIFY(rows[std::size_t(i)].round.has_value());
            QCOMPARE(*rows[std::size_t(i)].round, i);
        }

        const auto first = store.iteration(sessionId, 2);
        QVERIFY(first && first->candidate);
        QCOMPARE(exchangeRoles(*first), (std::vector<std::string> { "planner", "coder" }));
        QVERIFY(first->candidate->hypothesis.find("16 bytes per access") != std::string::npos);
        QVERIFY(first->candidate->predictedSpeedup.has_value());
        QCOMPARE(*first->candidate->predictedSpeedup, 1.5);
        QVERIFY(first->exchanges[1].exchange.text().find("layernorm_gelu") != std::string::npos);
        QCOMPARE(first->exchanges[0].exchange.category, kl::ExchangeCategory::Ok);
        QVERIFY(first->exchanges[0].exchange.usage.reported);
        QCOMPARE(first->exchanges[0].exchange.prompt.front().role, std::string("system"));

        const auto fixed = store.iteration(sessionId, 4);
        QCOMPARE(exchangeRoles(*fixed), (std::vector<std::string> { "debugger" }));
        const auto refused = store.iteration(sessionId, 5);
        QCOMPARE(exchangeRoles(*refused), (std::vector<std::string> { "planner" }));
        QVERIFY(refused->exchanges[0].exchange.text().find("can't help") != std::string::npos);

        const auto session = store.session(sessionId);
        QVERIFY(session && session->summary);
        QCOMPARE(session->summary->passAtK, std::optional<double>(0.5));

        // The key went out in a header and nowhere else.
        QVERIFY(server.requests().front().header("authorization").find(kPlantedKey) != std::string::npos);
        const auto exported = dir.filePath(QStringLiteral("s.klsession")).toStdString();
        store.exportSession(sessionId, exported);
        QVERIFY(fileText(exported).find("layernorm_gelu") != std::string::npos); // the search can find things
        for (const auto& file : { db, db + "-wal", exported })
            QVERIFY2(fileText(file).find(kPlantedKey) == std::string::npos, file.c_str());
    }

    // Single-role mode, k = 2 per round over the Anthropic protocol (two parallel requests), with
    // one usable and one unusable reply per round: both are stored; pass@k and speedup@k follow.
    void singleRoleTwoAlternativesPerRound()
    {
        ReplayServer server;
        ScriptedModel model(server,
            { { "single",
                { reply("ok_vectorised.md"), reply("several_candidates.md"), reply("no_code.md"),
                    reply("ok_with_snippet.md") } } });
        QTemporaryDir dir;
        auto store = kl::store::Store::open(dir.filePath(QStringLiteral("s.db")).toStdString());
        kl::RunnerClient runner(modelRunner());
        const auto problem = layernorm();
        kl::TuningSession session(problem, store, runner, loopConfig(2, 2));
        kl::LlmProposerConfig lc;
        lc.roles = kl::LlmProposerConfig::Roles::Single;
        kl::LlmProposer proposer(client(server, kl::Provider::Anthropic), kl::PromptLibrary::builtIn(), lc);
        const auto summary = session.run(proposer);

        QCOMPARE(summary.rounds, 2);
        QCOMPARE(model.roles(), (std::vector<std::string> { "single", "single", "single", "single" }));
        const auto rows = store.listIterations(summary.sessionId);
        QCOMPARE(rows.size(), std::size_t(5));
        std::map<std::string, int> categories;
        for (std::size_t i = 1; i < rows.size(); ++i)
            ++categories[rows[i].category];
        QCOMPARE(categories["passed"], 2);
        QCOMPARE(categories["proposer.several-candidates"] + categories["proposer.no-code"], 2);
        QCOMPARE(*summary.passAtK, 1.0);
        QVERIFY(summary.speedupAtK.has_value() && *summary.speedupAtK > 0.0);
        // One exchange per iteration: k requests, k exchanges.
        for (std::size_t i = 1; i < rows.size(); ++i) {
            const auto d = store.iteration(summary.sessionId, rows[i].index);
            QCOMPARE(d->exchanges.size(), std::size_t(1));
            QCOMPARE(QString::fromStdString(d->exchanges[0].role), QStringLiteral("single"));
        }
    }

    // An endpoint that is down: every round records a categorised proposer error and the loop
    // runs to its budget; a spent token budget ends the session instead of spinning.
    void endpointDownAndTokenBudget()
    {
        QTemporaryDir dir;
        auto store = kl::store::Store::open(dir.filePath(QStringLiteral("s.db")).toStdString());
        kl::RunnerClient runner(modelRunner());
        const auto problem = layernorm();
        int port = 0;
        {
            ReplayServer gone; // bound, then closed: nothing listens there any more
            port = gone.port();
        }
        kl::EndpointConfig c;
        c.baseUrl = "http://127.0.0.1:" + std::to_string(port) + "/v1";
        c.model = "replay";
        c.retry.maxAttempts = 1;
        {
            kl::TuningSession session(problem, store, runner, loopConfig(2, 1));
            kl::LlmProposer proposer(kl::makeChatClient(c), kl::PromptLibrary::builtIn());
            const auto summary = session.run(proposer);
            QCOMPARE(summary.rounds, 2);
            const auto rows = store.listIterations(summary.sessionId);
            QCOMPARE(rows.size(), std::size_t(3));
            QCOMPARE(QString::fromStdString(rows[1].category), QStringLiteral("proposer.connection-refused"));
            QCOMPARE(QString::fromStdString(rows[2].category), QStringLiteral("proposer.connection-refused"));
            QCOMPARE(*summary.passAtK, 0.0);
        }

        ReplayServer server;
        ScriptedModel model(server,
            { { "planner", { reply("plan_only.md"), reply("plan_only.md") } },
                { "coder", { reply("ok_vectorised.md"), reply("ok_with_snippet.md") } } });
        // Enough for the first planner request only: the coder is refused before anything is sent.
        auto budget = std::make_shared<kl::TokenBudget>(1);
        kl::TuningSession session(problem, store, runner, loopConfig(5, 1));
        kl::LlmProposer proposer(client(server, kl::Provider::OpenAi, budget), kl::PromptLibrary::builtIn());
        const auto summary = session.run(proposer);
        QCOMPARE(model.roles(), (std::vector<std::string> { "planner" }));
        const auto rows = store.listIterations(summary.sessionId);
        QCOMPARE(rows.size(), std::size_t(2));
        QCOMPARE(QString::fromStdString(rows[1].category), QStringLiteral("proposer.budget-exhausted"));
        QVERIFY2(summary.rounds < 5, summary.stopReason.c_str());
    }

    // LLM + tuner: the tuner sweeps the baseline's tunables first, then the model writes; a source
    // the model wrote that becomes the best is swept next, before the model is asked again.
    void hybridSweepsEachNewBestSource()
    {
        qputenv("KL_MODEL_RUNNER_IMPROVING", "1");
        const auto restore = qScopeGuard([] { qunsetenv("KL_MODEL_RUNNER_IMPROVING"); });
        ReplayServer server;
        ScriptedModel model(server,
            { { "planner", { reply("plan_only.md"), reply("plan_only.md"), reply("plan_only.md") } },
                { "coder", { reply("ok_vectorised.md"), kl::test::fixture("scenarios/layernorm_gelu/coder_4.md") } } });
        QTemporaryDir dir;
        auto store = kl::store::Store::open(dir.filePath(QStringLiteral("s.db")).toStdString());
        kl::RunnerClient runner(modelRunner());
        const auto problem = layernorm();
        auto config = loopConfig(6, 1);
        config.proposerDetail = "llm+tuner:openai/replay";
        kl::TuningSession session(problem, store, runner, config);
        kl::HybridProposer proposer(
            std::make_unique<kl::LlmProposer>(client(server, kl::Provider::OpenAi), kl::PromptLibrary::builtIn()),
            std::make_unique<kl::Tuner>(kl::TunerOptions { kl::TunerStrategy::Random, 3 }), 2);
        QCOMPARE(QString::fromStdString(proposer.kind()), QStringLiteral("llm+tuner"));
        const auto summary = session.run(proposer);
        QCOMPARE(summary.rounds, 6);

        const auto rows = store.listIterations(summary.sessionId);
        QCOMPARE(rows.size(), std::size_t(7));
        // The runner double makes every new candidate faster, so each round's candidate wins.
        std::vector<std::string> who;
        std::vector<std::string> sources;
        for (std::size_t i = 1; i < rows.size(); ++i) {
            QCOMPARE(int(*rows[i].lastDecision), int(kl::store::DecisionRecord::Kind::AutoKeep));
            who.push_back(std::string(kl::store::proposerName(*rows[i].proposer)));
            // Each candidate says who really wrote it, not the session's pair.
            QCOMPARE(QString::fromStdString(rows[i].proposerDetail),
                who.back() == "llm" ? QStringLiteral("llm:openai/replay") : QStringLiteral("tuner"));
            sources.push_back(store.iteration(summary.sessionId, rows[i].index)->candidate->sourceHash);
        }
        QCOMPARE(who, (std::vector<std::string> { "tuner", "tuner", "llm", "tuner", "tuner", "llm" }));
        const auto baseline = store.iteration(summary.sessionId, 1)->candidate->sourceHash;
        QCOMPARE(sources[0], baseline); // the baseline's tunables swept first
        QCOMPARE(sources[1], baseline);
        QVERIFY(sources[2] != baseline); // the model's rewrite won ...
        QCOMPARE(sources[3], sources[2]); // ... so its own tunables are swept next
        QCOMPARE(sources[4], sources[2]);
        QCOMPARE(model.roles().front(), std::string("planner"));
    }

    // Cancelling while the model is still streaming: the request is dropped, the session ends as
    // cancelled, and what was committed before stays.
    void cancelMidStream()
    {
        ReplayServer server;
        server.route("/v1/chat/completions", [](const SeenRequest&, int) {
            Reply r;
            r.contentType = "text/event-stream";
            r.body = kl::test::openAiStream({ kl::test::tokenPieces(reply("plan_only.md")) }, "replay", std::nullopt);
            r.chunked = true;
            std::size_t third = 0; // past the third event: some text has arrived, the rest never will
            for (int i = 0; i < 3; ++i)
                third = r.body.find("\n\n", third) + 2;
            r.holdAfter = third;
            return r;
        });
        QTemporaryDir dir;
        const auto db = dir.filePath(QStringLiteral("s.db")).toStdString();
        auto store = kl::store::Store::open(db);
        kl::RunnerClient runner(modelRunner());
        const auto problem = layernorm();
        kl::TuningSession session(problem, store, runner, loopConfig(3, 1));
        std::atomic<bool> cancel { false };
        kl::LlmProposerConfig lc;
        lc.onText = [&](std::string_view, int, std::string_view) { cancel = true; };
        kl::LlmProposer proposer(client(server, kl::Provider::OpenAi), kl::PromptLibrary::builtIn(), lc);
        const auto summary = session.run(proposer, &cancel);
        server.releaseHeld();
        QVERIFY(summary.cancelled);
        const auto rows = store.listIterations(summary.sessionId);
        QCOMPARE(rows.size(), std::size_t(1)); // the baseline only
        QCOMPARE(QString::fromStdString(store.session(summary.sessionId)->status), QStringLiteral("cancelled"));
        QVERIFY(store.checkIntegrity().empty());
    }
};

QTEST_GUILESS_MAIN(TestLlmLoop)
#include "test_llm_loop.moc"

// Core's session runner (core/session/session_runner.h), which the CLI, the window and campaigns run
// sessions through: a recipe run to its typed summary on the runner double (a real process) with a
// real store; on one named endpoint as a campaign runs it; the engineer's controls (pause, their own
// candidate first with its tunables applied by Candidate::withOverrides, a waiting review stopped);
// the engineer's candidates never wait for a review.
#include "core/model/error.h"
#include "core/model/problem.h"
#include "core/session/session_runner.h"
#include "core/store/store.h"
#include "tests/scoped_env.h"

#include <QTemporaryDir>
#include <QtTest/QTest>

#include <condition_variable>
#include <mutex>
#include <thread>

using namespace kl;
using namespace kl::session;

namespace {

std::string examplePath() { return std::string(KL_SOURCE_DIR) + "/resources/examples/layernorm_gelu/problem.json"; }

SessionRecipe tunerRecipe(int budget)
{
    SessionRecipe r;
    r.problem = examplePath();
    r.budget = budget;
    r.patience = 0;
    r.metrics = "none";
    r.trials = 1;
    r.compileAhead = 0;
    return r;
}

SessionSetup setupIn(const QTemporaryDir& dir, SessionRecipe recipe)
{
    SessionSetup s;
    s.recipe = std::move(recipe);
    s.store = dir.filePath(QStringLiteral("kernelloop.db")).toStdString();
    s.localRunner = KL_MODEL_RUNNER;
    return s;
}

// Every event the runner published, in order, and a way to wait for one.
struct Seen {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::shared_ptr<const LoopEvent>> events;

    void watch(SessionRunner& runner)
    {
        runner.events().subscribe([this](const std::shared_ptr<const LoopEvent>& e) {
            std::lock_guard lock(mutex);
            events.push_back(e);
            changed.notify_all();
        });
    }
    template <typename T> bool waitFor(const std::function<bool(const T&)>& match, int ms = 30000)
    {
        std::unique_lock lock(mutex);
        return changed.wait_for(lock, std::chrono::milliseconds(ms), [&] {
            for (const auto& e : events)
                if (const auto* t = std::get_if<T>(e.get()); t && match(*t))
                    return true;
            return false;
        });
    }
    std::vector<IterationOutcome> iterations()
    {
        std::lock_guard lock(mutex);
        std::vector<IterationOutcome> out;
        for (const auto& e : events)
            if (const auto* f = std::get_if<IterationFinished>(e.get()))
                out.push_back(f->outcome);
        return out;
    }
};

// run() on a thread of its own; stopped and joined however the test ends.
struct Running {
    SessionRunner& runner;
    LoopSummary summary;
    std::thread thread { [this] { summary = runner.run(); } };
    LoopSummary join()
    {
        thread.join();
        return summary;
    }
    ~Running()
    {
        if (thread.joinable()) {
            runner.stop("the test failed");
            thread.join();
        }
    }
};

} // namespace

class TestSessionRunner : public QObject {
    Q_OBJECT
private slots:
    void recipeRunsToItsSummary()
    {
        QTemporaryDir dir;
        SessionRunner runner(setupIn(dir, tunerRecipe(2)));
        Seen seen;
        seen.watch(runner);
        const LoopSummary summary = runner.run();
        QVERIFY(summary.sessionId > 0);
        QCOMPARE(summary.rounds, 2);
        QCOMPARE(summary.evaluated, 3); // the baseline and one candidate a round
        QVERIFY(summary.best);
        QVERIFY(!summary.cancelled);
        QVERIFY(std::holds_alternative<SessionStarted>(*seen.events.front()));
        QVERIFY(std::holds_alternative<SessionFinished>(*seen.events.back()));
        QCOMPARE(seen.iterations().size(), std::size_t(3));
        QCOMPARE(seen.iterations()[1].proposer, std::string("tuner"));
        const auto store = store::Store::open(dir.filePath(QStringLiteral("kernelloop.db")).toStdString());
        QCOMPARE(store.session(summary.sessionId)->status, std::string("finished"));
        QCOMPARE(store.session(summary.sessionId)->proposer, std::string("tuner:auto"));
        QCOMPARE(store.listIterations(summary.sessionId).size(), std::size_t(3));
        // The local runner (no endpoint named): its process was known while it ran, and is no more.
        QCOMPARE(runner.localRunnerPid(), pid_t(-1));
        QCOMPARE(runner.poolStatus().size(), std::size_t(1));
        QCOMPARE(runner.poolStatus().front().endpoint, std::string("local:0"));
        QVERIFY(runner.poolStatus().front().jobsDone >= 3);
        expectCategory([&] { runner.run(); }, "session.ran"); // once
    }

    // What a campaign does per problem: one endpoint, a cancel flag of its own, the summary back.
    void campaignRunsOneProblemOnAnEndpoint()
    {
        QTemporaryDir dir;
        auto recipe = tunerRecipe(1);
        recipe.runners = { "local:0", "local:1" }; // replaced by the campaign's endpoint
        SessionSetup setup = onEndpoint(recipe, std::string("cmd:") + KL_MODEL_RUNNER);
        QCOMPARE(setup.recipe.runners, std::vector<std::string> { std::string("cmd:") + KL_MODEL_RUNNER });
        setup.store = dir.filePath(QStringLiteral("kernelloop.db")).toStdString();
        std::atomic<bool> cancel { false };
        setup.cancel = &cancel;
        const LoopSummary summary = runSession(std::move(setup));
        QCOMPARE(summary.rounds, 1);
        QCOMPARE(summary.evaluated, 2);
        QVERIFY(summary.best);
        const auto store = store::Store::open(dir.filePath(QStringLiteral("kernelloop.db")).toStdString());
        QCOMPARE(store.session(summary.sessionId)->status, std::string("finished"));

        // Cancelled before it starts: the session ends cancelled after the baseline, nothing after it.
        QTemporaryDir other;
        SessionSetup again = onEndpoint(tunerRecipe(3), "local:0");
        again.store = other.filePath(QStringLiteral("kernelloop.db")).toStdString();
        again.localRunner = KL_MODEL_RUNNER;
        std::atomic<bool> stopped { true };
        again.cancel = &stopped;
        const LoopSummary cancelled = runSession(std::move(again));
        QVERIFY(cancelled.cancelled);
        QCOMPARE(cancelled.rounds, 0);
    }

    // Paused before round 1's proposal; the engineer's candidate then runs first, its partial tunables
    // completed by the one rule (Candidate::withOverrides), as proposer "human".
    void pauseHoldsAndTheEngineersCandidateRunsFirst()
    {
        QTemporaryDir dir;
        SessionRunner runner(setupIn(dir, tunerRecipe(2)));
        Seen seen;
        seen.watch(runner);
        runner.setPaused(true);
        QVERIFY(runner.paused());
        Running loop { runner, {} };
        QVERIFY(seen.waitFor<PhaseChanged>(
            [](const PhaseChanged& p) { return p.round == 1 && p.phase == LoopPhase::Propose; }));
        QTest::qWait(300); // paused: nothing of round 1 arrives
        QCOMPARE(seen.iterations().size(), std::size_t(1));

        const Problem problem = loadProblem(examplePath());
        expectCategory(
            [&] {
                runner.addCandidate(problem.baseline, { { "THREADZ", 64 } });
            },
            "candidate.unknown-tunable");
        expectCategory(
            [&] {
                runner.addCandidate(problem.baseline, { { "THREADS", 100 } });
            },
            "candidate.value-not-allowed");
        runner.addCandidate(problem.baseline, { { "THREADS", 256 } });
        runner.setPaused(false);
        const LoopSummary summary = loop.join();
        const auto iterations = seen.iterations();
        QCOMPARE(iterations.size(), std::size_t(3));
        QCOMPARE(iterations[1].proposer, std::string("human"));
        const TunableValues expected { { "CACHE", 0 }, { "TANH", 0 }, { "THREADS", 256 }, { "VEC", 1 } };
        QCOMPARE(iterations[1].tunables, expected);
        QCOMPARE(iterations[2].proposer, std::string("tuner"));
        QVERIFY(!summary.cancelled);
    }

    // Review mode with no gate of the front end's: the runner's own waits for answerReview(); stop()
    // refuses the waiting proposal and ends the session cancelled; the engineer's candidate never waited.
    void reviewWaitsForAnAnswerAndStopRefusesIt()
    {
        QTemporaryDir dir;
        auto recipe = tunerRecipe(3);
        recipe.mode = LoopMode::Review;
        SessionRunner runner(setupIn(dir, recipe));
        Seen seen;
        seen.watch(runner);
        const Problem problem = loadProblem(examplePath());
        runner.addCandidate(problem.baseline, { { "VEC", 2 } }); // round 1: the engineer's, accepted at once
        Running loop { runner, {} };
        QVERIFY(seen.waitFor<ReviewRequested>([](const ReviewRequested& r) { return r.round == 2; }));
        QVERIFY(QTest::qWaitFor([&] { return runner.reviewWaiting(); }, 10000));
        QVERIFY(!seen.waitFor<ReviewRequested>([](const ReviewRequested& r) { return r.round == 1; }, 0));
        QVERIFY(runner.answerReview({ ReviewDecision::Kind::Accept, {}, {}, std::nullopt, {} }));
        QVERIFY(!runner.answerReview({ ReviewDecision::Kind::Accept, {}, {}, std::nullopt, {} })); // answered
        QVERIFY(seen.waitFor<ReviewRequested>([](const ReviewRequested& r) { return r.round == 3; }));
        QVERIFY(QTest::qWaitFor([&] { return runner.reviewWaiting(); }, 10000));
        runner.stop("stopped by the test");
        const LoopSummary summary = loop.join();
        QVERIFY(summary.cancelled);
        QVERIFY(runner.cancelled());
        const auto iterations = seen.iterations();
        QCOMPARE(iterations[1].proposer, std::string("human"));
        QCOMPARE(iterations.back().category, std::string("rejected"));
        QCOMPARE(iterations.back().detail, std::string("stopped by the test"));
        const auto store = store::Store::open(dir.filePath(QStringLiteral("kernelloop.db")).toStdString());
        QCOMPARE(store.session(summary.sessionId)->status, std::string("cancelled"));
    }

    // One candidate instead of the loop (`evaluate`, the window's Evaluate): after the baseline, as
    // proposer "human" in a session of its own; a bad tunable is refused before anything is stored.
    void oneCandidateInASessionOfItsOwn()
    {
        // The engineer's candidate is the faster one whatever NVRTC makes of it: the model's times
        // otherwise come from a hash of each cubin, which a compiler or checkout change reshuffles.
        const kl::test::ScopedEnv improving { { "KL_MODEL_RUNNER_IMPROVING", "1" } };
        QTemporaryDir dir;
        const Problem problem = loadProblem(examplePath());
        SessionSetup setup = setupIn(dir, tunerRecipe(20));
        setup.only = problem.baseline;
        setup.onlyTunables = { { "THREADS", 64 } };
        const LoopSummary summary = runSession(setup);
        QCOMPARE(summary.passed, 2);
        QCOMPARE(summary.best ? summary.best->proposer : std::string(), std::string("human"));
        const auto store = store::Store::open(dir.filePath(QStringLiteral("kernelloop.db")).toStdString());
        QCOMPARE(store.session(summary.sessionId)->proposer, std::string("human"));

        setup.onlyTunables = { { "THREADS", 65 } };
        expectCategory([&] { runSession(setup); }, "candidate.value-not-allowed");
        QCOMPARE(store.listSessions().size(), std::size_t(1));
    }

private:
    static void expectCategory(const std::function<void()>& f, const std::string& category)
    {
        try {
            f();
        } catch (const Error& e) {
            QCOMPARE(e.category(), category);
            return;
        }
        QFAIL(qPrintable(QStringLiteral("no error; expected %1").arg(QString::fromStdString(category))));
    }
};

QTEST_GUILESS_MAIN(TestSessionRunner)
#include "test_session_runner.moc"

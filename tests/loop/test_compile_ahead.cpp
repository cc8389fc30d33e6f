// Compiling the next round ahead (core/loop/compile_ahead.h, issue 14): the worker pool's contract,
// the tuner's guesses (the real proposals among them, no trace left on the tuner), and the real loop
// with real NVRTC, a real store and the runner double replaying H200 results: the same proposals,
// cubins, measurements and decisions with and without it, and guesses used.
#include "core/loop/compile_ahead.h"
#include "core/model/hash.h"
#include "core/propose/hybrid_proposer.h"
#include "core/store/compile_columns.h"
#include "core/store/store.h"
#include "core/tuner/search_space.h"
#include "core/tuner/tuner.h"
#include "tests/loop/loop_support.h"
#include "tests/scoped_env.h"

#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

using namespace kl;
using namespace std::chrono_literals;

namespace {

CompiledAhead named(const std::string& detail)
{
    CompiledAhead c;
    c.errorCategory = "test";
    c.errorDetail = detail;
    return c;
}

// The baseline as the measured best, with one finding whose hint steers the tuner.
ProposalContext contextFor(const Problem& p, int remaining, const std::string& findingId, const std::string& tunerHint)
{
    ProposalContext ctx;
    ctx.problem = &p;
    ctx.best = p.baseline;
    ctx.bestTunables = p.baseline.defaults();
    ctx.bestSourceHash = contentHash(p.baseline.source);
    ctx.remainingBudget = remaining;
    EvaluatedProposal base;
    base.sourceHash = ctx.bestSourceHash;
    base.tunables = ctx.bestTunables;
    base.category = "passed";
    base.speedup = 1.0;
    base.kept = true;
    ctx.history = { base };
    Finding f;
    f.id = findingId;
    f.tunerHints = { tunerHint };
    ctx.bestFindings = { f };
    return ctx;
}

std::vector<std::string> keys(const std::vector<Proposal>& proposals)
{
    std::vector<std::string> out;
    for (const auto& p : proposals)
        out.push_back(SearchSpace::key(p.tunables));
    return out;
}

// A writer for the hybrid that proposes nothing of its own (an LLM's turn, without a model).
class Silent : public Proposer {
public:
    std::string kind() const override { return "silent"; }
    std::vector<Proposal> propose(const ProposalContext&, int, const std::atomic<bool>*) override { return {}; }
};

struct Session {
    std::vector<IterationOutcome> outcomes;
    LoopSummary summary;
    std::vector<std::string> runnerLog; // cubin hashes the runner received, in order
    std::vector<nlohmann::json> compiles; // each iteration's compile as stored (its column)
};

Session runTuner(const QString& folder, int compileAhead)
{
    Session s;
    const auto log = (folder + QStringLiteral("/runner.log")).toStdString();
    // Each job takes ~0.5 s as an H200 job would (verify, timing, CUPTI): the window ahead compiles use.
    test::ScopedEnv env { { "KL_MODEL_RUNNER_RECORDED",
                              std::string(KL_SOURCE_DIR) + "/resources/sessions/layernorm_gelu-h200.klsession" },
        { "KL_MODEL_RUNNER_PHASE_MS", "verify=50,time=150,profile=300" }, { "KL_MODEL_RUNNER_LOG", log },
        { "KERNELLOOP_COMPILE_CACHE", "off" } };
    auto store = store::Store::open((folder + QStringLiteral("/s.db")).toStdString());
    const Problem problem = test::layernormProblem();
    RunnerClient runner(test::modelRunner());
    LoopConfig config = test::loopConfig(4, 4, "tuner:auto");
    config.evaluate.profile = protocol::MetricSet::Default;
    config.compileAhead = compileAhead;
    TuningSession session(problem, store, runner, config);
    session.events().subscribe([&](const std::shared_ptr<const LoopEvent>& event) {
        if (const auto* done = std::get_if<IterationFinished>(event.get()))
            s.outcomes.push_back(done->outcome);
    });
    Tuner tuner({ TunerStrategy::Auto, 21 });
    s.summary = session.run(tuner);
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);)
        s.runnerLog.push_back(line.substr(line.find("candidate=")));
    for (const auto& o : s.outcomes) {
        const auto detail = store.iteration(s.summary.sessionId, o.index);
        s.compiles.push_back(
            detail && detail->result ? store::compileColumn(detail->result->compile) : nlohmann::json());
    }
    return s;
}

} // namespace

class TestCompileAhead : public QObject {
    Q_OBJECT
private slots:
    void takesWhatWasCompiledAndWaitsForWhatIsCompiling()
    {
        CompileAhead ahead(2);
        std::atomic<bool> release { false };
        ahead.anticipate({ { "a", [] { return named("A"); } }, { "slow", [&] {
                                                                    while (!release)
                                                                        std::this_thread::sleep_for(1ms);
                                                                    return named("SLOW");
                                                                } } });
        QTRY_COMPARE(ahead.tally().compiled, 1); // "a"; "slow" is under way
        QCOMPARE(QString::fromStdString(ahead.take("a")->errorDetail), QStringLiteral("A"));
        QVERIFY(!ahead.take("a")); // handed out once
        QVERIFY(!ahead.take("never")); // never anticipated: the caller compiles it
        std::thread releaser([&] {
            std::this_thread::sleep_for(100ms);
            release = true;
        });
        const auto start = std::chrono::steady_clock::now();
        const auto slow = ahead.take("slow"); // under way: waits for it rather than compiling it twice
        releaser.join();
        QVERIFY(std::chrono::steady_clock::now() - start >= 90ms);
        QCOMPARE(QString::fromStdString(slow->errorDetail), QStringLiteral("SLOW"));
        QCOMPARE(ahead.tally().taken, 2);
    }

    void aNewGuessReplacesWhatStillWaits()
    {
        CompileAhead ahead(1);
        std::atomic<bool> release { false };
        std::atomic<int> ran { 0 };
        auto blocker = [&] {
            while (!release)
                std::this_thread::sleep_for(1ms);
            ++ran;
            return named("first");
        };
        auto counted = [&](std::string name) {
            return [&ran, name] {
                ++ran;
                return named(name);
            };
        };
        ahead.anticipate({ { "first", blocker }, { "stale", counted("stale") } });
        QTRY_VERIFY(ran == 0 && !ahead.take("stale")); // "first" holds the only worker; "stale" waits
        ahead.anticipate({ { "first", blocker }, { "fresh", counted("fresh") } }); // "first" is not redone
        release = true;
        QTRY_COMPARE(ahead.tally().compiled, 2);
        QVERIFY(!ahead.take("stale")); // dropped before it started
        QCOMPARE(QString::fromStdString(ahead.take("fresh")->errorDetail), QStringLiteral("fresh"));
        QCOMPARE(ran.load(), 2);

        CompileAhead none(0); // width 0: nothing ever runs
        none.anticipate({ { "x", counted("x") } });
        QVERIFY(!none.take("x"));
        QCOMPARE(CompileAhead::widthFor(1), 0);
        QCOMPARE(CompileAhead::widthFor(2), 1);
        QCOMPARE(CompileAhead::widthFor(4), 1);
        QCOMPARE(CompileAhead::widthFor(16), 4);
        QCOMPARE(CompileAhead::widthFor(128), 8);
    }

    void aWorkThatThrowsIsCompiledByTheRound()
    {
        CompileAhead ahead(1);
        std::atomic<bool> started { false };
        ahead.anticipate({ { "bad", [&]() -> CompiledAhead {
                                started = true;
                                throw std::runtime_error("no");
                            } } });
        QTRY_VERIFY(started.load());
        QVERIFY(!ahead.take("bad")); // started, so take() waited for it: nothing to hand out
        QCOMPARE(ahead.tally().compiled, 0);
    }

    void theTunersGuessesHoldItsProposalsAndLeaveNoTrace()
    {
        const Problem p = test::layernormProblem();
        auto ctx = contextFor(p, 10, "bandwidth.under-ceiling", hint::kWiderVectors);
        Tuner guessing({ TunerStrategy::Evolutionary, 4 });
        Tuner plain({ TunerStrategy::Evolutionary, 4 });
        for (int round = 0; round < 4; ++round) {
            const auto guesses = guessing.anticipate(ctx, 4, 12);
            QCOMPARE(int(guesses.size()), 12);
            const auto proposed = guessing.propose(ctx, 4, nullptr);
            const auto twin = plain.propose(ctx, 4, nullptr);
            QCOMPARE(keys(proposed), keys(twin)); // guessing changed nothing propose() does
            // In the very context propose() got, its proposals are the first guesses, in order.
            auto first = keys(guesses);
            first.resize(4);
            QCOMPARE(first, keys(proposed));
            for (const auto& prop : proposed) {
                EvaluatedProposal h;
                h.sourceHash = ctx.bestSourceHash;
                h.tunables = prop.tunables;
                h.category = "passed";
                h.speedup = 0.9;
                ctx.history.push_back(h);
            }
        }
    }

    void aPendingEntryIsNeitherRepeatedNorALoss()
    {
        const Problem p = test::layernormProblem();
        auto ctx = contextFor(p, 10, "occupancy.registers", hint::kFewerThreads);
        Tuner tuner({ TunerStrategy::Evolutionary, 11 });
        const auto first = tuner.anticipate(ctx, 1, 1);
        QCOMPARE(first.size(), std::size_t(1));
        EvaluatedProposal queued;
        queued.sourceHash = ctx.bestSourceHash;
        queued.tunables = first[0].tunables;
        queued.category = "pending";
        ctx.history.push_back(queued);
        const double backing = hintCredibility(ctx, hint::kFewerThreads);
        QCOMPARE(backing, 1.0); // queued is not measured: the hint keeps its backing
        for (const auto& g : tuner.anticipate(ctx, 4, 12))
            QVERIFY(SearchSpace::key(g.tunables) != SearchSpace::key(queued.tunables)); // nor guessed again
        ctx.history.back().category = "compile.resources"; // the same entry failed: now it is a loss
        QVERIFY(hintCredibility(ctx, hint::kFewerThreads) < backing);
    }

    void theHybridGuessesOnlyOnTheTunersTurn()
    {
        const Problem p = test::layernormProblem();
        const auto ctx = contextFor(p, 10, "bandwidth.under-ceiling", hint::kWiderVectors);
        HybridProposer hybrid(
            std::make_unique<Silent>(), std::make_unique<Tuner>(TunerOptions { TunerStrategy::Auto, 2 }), 1);
        QCOMPARE(hybrid.anticipate(ctx, 4, 12).size(), std::size_t(12)); // a source the tuner has not swept
        QVERIFY(!hybrid.propose(ctx, 4, nullptr).empty()); // its one round
        QVERIFY(hybrid.anticipate(ctx, 4, 12).empty()); // the writer's turn: an LLM is never asked to guess
        Silent writer;
        QVERIFY(static_cast<const Proposer&>(writer).anticipate(ctx, 4, 12).empty());
    }

    void theLoopDecidesAlikeWithGuessesCompiledAhead()
    {
        QTemporaryDir without, with;
        const auto a = runTuner(without.path(), 0);
        const auto b = runTuner(with.path(), 2);
        QCOMPARE(int(a.outcomes.size()), 1 + 4 * 4);
        QCOMPARE(b.outcomes.size(), a.outcomes.size());
        for (std::size_t i = 0; i < a.outcomes.size(); ++i) {
            const auto& x = a.outcomes[i];
            const auto& y = b.outcomes[i];
            QCOMPARE(SearchSpace::key(y.tunables), SearchSpace::key(x.tunables));
            QCOMPARE(y.category, x.category);
            QCOMPARE(y.kept, x.kept);
            QCOMPARE(y.medianUs, x.medianUs);
            QVERIFY2(b.compiles[i].contains("ptx"), qPrintable(QString::number(x.index))); // listings stored
            for (const char* field : { "kernels", "telemetry", "ptx", "sass_note" })
                QVERIFY2(a.compiles[i].value(field, nlohmann::json()) == b.compiles[i].value(field, nlohmann::json()),
                    qPrintable(QStringLiteral("iteration %1: %2").arg(x.index).arg(QString::fromLatin1(field))));
        }
        QCOMPARE(b.runnerLog, a.runnerLog); // the same cubins reached the runner in the same order
        QCOMPARE(b.summary.best->index, a.summary.best->index);

        QCOMPARE(a.summary.compiledAhead, 0);
        QCOMPARE(a.summary.usedAhead, 0);
        qInfo("compiled ahead %d, used %d of %d proposals; %.1f vs %.1f candidates/min", b.summary.compiledAhead,
            b.summary.usedAhead, 4 * 4, b.summary.candidatesPerMinute, a.summary.candidatesPerMinute);
        QVERIFY(b.summary.usedAhead > 0);
        QVERIFY(b.summary.compiledAhead >= b.summary.usedAhead);
        int marked = 0;
        for (const auto& c : b.compiles)
            marked += c.contains("compiled_ahead_ms") ? 1 : 0;
        QCOMPARE(marked, b.summary.usedAhead); // the store says which were compiled ahead
        for (const auto& c : a.compiles)
            QVERIFY(!c.contains("compiled_ahead_ms"));
    }
};

QTEST_GUILESS_MAIN(TestCompileAhead)
#include "test_compile_ahead.moc"

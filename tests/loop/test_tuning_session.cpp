// The loop end to end without a GPU: real NVRTC, a real SQLite file, a real runner process that
// models timings (tests/loop/model_runner.cpp; the real runner is run by scripts/gpu-check.sh).
#include "core/loop/tuning_session.h"
#include "core/model/error.h"
#include "core/model/problem.h"
#include "core/runnerclient/runner_client.h"
#include "core/store/store.h"
#include "core/tuner/tuner.h"
#include "tests/loop/loop_support.h"

#include <QTemporaryDir>
#include <QTest>

namespace {

kl::Problem layernorm() { return kl::test::layernormProblem(); }
using kl::test::modelRunner;

// Subscribes to a session's event stream and keeps what the tests look at.
struct Recorder {
    std::vector<kl::IterationOutcome> outcomes;
    std::vector<kl::LoopPhase> phases;
    std::vector<std::string> events; // loopEventName of each, in order
    std::vector<int> incumbents; // iteration index of each new best
    std::atomic<bool>* cancelAfterFirst = nullptr;
    void attach(kl::TuningSession& session)
    {
        session.events().subscribe([this](const std::shared_ptr<const kl::LoopEvent>& e) {
            events.push_back(kl::loopEventName(*e));
            if (const auto* p = std::get_if<kl::PhaseChanged>(e.get()))
                phases.push_back(p->phase);
            if (const auto* b = std::get_if<kl::IncumbentChanged>(e.get()))
                incumbents.push_back(b->best.index);
            if (const auto* f = std::get_if<kl::IterationFinished>(e.get())) {
                outcomes.push_back(f->outcome);
                if (cancelAfterFirst && outcomes.size() >= 2)
                    cancelAfterFirst->store(true);
            }
        });
    }
};

struct ScriptedReview : kl::ReviewGate {
    int calls = 0;
    std::vector<std::string> rejectionsSeen;
    kl::ReviewDecision review(const kl::Proposal&, const kl::ProposalContext& ctx) override
    {
        for (const auto& h : ctx.history)
            if (!h.rejection.empty())
                rejectionsSeen.push_back(h.rejection);
        ++calls;
        if (calls == 1)
            return { kl::ReviewDecision::Kind::Reject, "VEC=8 breaks our alignment", {}, std::nullopt, {} };
        if (calls == 2)
            return { kl::ReviewDecision::Kind::Steer, {}, "keep THREADS at 256", std::nullopt, {} };
        return { kl::ReviewDecision::Kind::Accept, {}, {}, std::nullopt, {} };
    }
};

kl::LoopConfig config(int budget, int k) { return kl::test::loopConfig(budget, k, "tuner:evolutionary"); }

} // namespace

class TestTuningSession : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void tunesRecordsAndKeepsOnlyFasterCandidates()
    {
        QTemporaryDir dir;
        const auto db = dir.filePath(QStringLiteral("s.db")).toStdString();
        const auto problem = layernorm();
        auto store = kl::store::Store::open(db);
        kl::RunnerClient runner(modelRunner());
        kl::TuningSession session(problem, store, runner, config(4, 2));
        Recorder rec;
        rec.attach(session);
        kl::Tuner tuner({ kl::TunerStrategy::Evolutionary, 5 });
        const auto summary = session.run(tuner);

        QCOMPARE(summary.rounds, 4);
        QCOMPARE(summary.evaluated, 1 + 4 * 2);
        QVERIFY(summary.best);
        QCOMPARE(rec.outcomes.size(), std::size_t(9));
        QCOMPARE(QString::fromStdString(rec.outcomes[0].proposer), QStringLiteral("baseline"));
        // The incumbent only ever gets faster, and the best is the fastest kept one.
        double best = rec.outcomes[0].medianUs.value();
        for (const auto& o : rec.outcomes) {
            QCOMPARE(QString::fromStdString(o.category), QStringLiteral("passed"));
            QVERIFY(o.speedup.has_value());
            if (o.kept && o.round > 0) {
                QVERIFY2(*o.medianUs < best, o.comparison.c_str());
                best = *o.medianUs;
            }
        }
        QCOMPARE(summary.best->medianUs.value(), best);
        QVERIFY(std::find(rec.phases.begin(), rec.phases.end(), kl::LoopPhase::Compile) != rec.phases.end());

        // Everything is in the store, with a decision for every evaluated iteration.
        const auto rows = store.listIterations(summary.sessionId);
        QCOMPARE(rows.size(), std::size_t(9));
        for (const auto& r : rows) {
            QCOMPARE(QString::fromStdString(r.category), QStringLiteral("passed"));
            if (r.index > 1)
                QVERIFY(r.lastDecision.has_value());
        }
        const auto detail = store.iteration(summary.sessionId, 2);
        QVERIFY(detail && detail->candidate && detail->result);
        QVERIFY(detail->parent.has_value()); // tuner candidates descend from the best
        QVERIFY(!detail->candidate->tunables.empty());
        QVERIFY(detail->result->timing.has_value());
        QCOMPARE(QString::fromStdString(store.session(summary.sessionId)->status), QStringLiteral("finished"));

        // A second session asks for the same candidates: all answered from the cache.
        kl::TuningSession again(problem, store, runner, config(4, 2));
        Recorder rec2;
        rec2.attach(again);
        kl::Tuner sameTuner({ kl::TunerStrategy::Evolutionary, 5 });
        again.run(sameTuner);
        QVERIFY(rec2.outcomes.size() >= 2);
        for (const auto& o : rec2.outcomes)
            QVERIFY2(o.fromCache, "a repeated candidate was evaluated again");
    }

    void reviewRejectAndSteerReachTheProposer()
    {
        QTemporaryDir dir;
        const auto problem = layernorm();
        auto store = kl::store::Store::open(dir.filePath(QStringLiteral("r.db")).toStdString());
        kl::RunnerClient runner(modelRunner());
        auto c = config(3, 1);
        c.mode = kl::LoopMode::Review;
        kl::TuningSession session(problem, store, runner, c);
        ScriptedReview gate;
        session.setReviewGate(&gate);
        kl::Tuner tuner({ kl::TunerStrategy::Evolutionary, 6 });
        const auto summary = session.run(tuner);
        QCOMPARE(gate.calls, 3);
        QVERIFY(std::find(gate.rejectionsSeen.begin(), gate.rejectionsSeen.end(), "VEC=8 breaks our alignment")
            != gate.rejectionsSeen.end());
        const auto rows = store.listIterations(summary.sessionId);
        QCOMPARE(rows.size(), std::size_t(4)); // baseline, rejected, steered, accepted
        const auto rejected = store.iteration(summary.sessionId, 2);
        QVERIFY(rejected && !rejected->decisions.empty());
        QCOMPARE(rejected->decisions.front().kind, kl::store::DecisionRecord::Kind::Reject);
        QCOMPARE(
            QString::fromStdString(rejected->decisions.front().reason), QStringLiteral("VEC=8 breaks our alignment"));
        const auto steered = store.iteration(summary.sessionId, 3);
        QCOMPARE(QString::fromStdString(steered->decisions.front().steering), QStringLiteral("keep THREADS at 256"));
        QVERIFY(!store.iteration(summary.sessionId, 4)->result->category.empty());
    }

    void cancellationLeavesAConsistentStore()
    {
        QTemporaryDir dir;
        const auto problem = layernorm();
        const auto db = dir.filePath(QStringLiteral("c.db")).toStdString();
        std::int64_t id = 0;
        {
            auto store = kl::store::Store::open(db);
            kl::RunnerClient runner(modelRunner());
            kl::TuningSession session(problem, store, runner, config(20, 1));
            std::atomic<bool> cancel { false };
            Recorder rec;
            rec.cancelAfterFirst = &cancel;
            rec.attach(session);
            kl::Tuner tuner({ kl::TunerStrategy::Evolutionary, 7 });
            const auto summary = session.run(tuner, &cancel);
            QVERIFY(summary.cancelled);
            QVERIFY(summary.rounds < 20);
            id = summary.sessionId;
        }
        auto reopened = kl::store::Store::open(db);
        QVERIFY(reopened.checkIntegrity().empty());
        QCOMPARE(QString::fromStdString(reopened.session(id)->status), QStringLiteral("cancelled"));
        QVERIFY(reopened.listIterations(id).size() >= 2);
    }

    void brokenCandidatesAreRecordedWithTheirCategory()
    {
        QTemporaryDir dir;
        const auto problem = layernorm();
        auto store = kl::store::Store::open(dir.filePath(QStringLiteral("b.db")).toStdString());
        kl::RunnerClient runner(modelRunner());
        kl::TuningSession session(problem, store, runner, config(1, 1));
        auto broken
            = kl::parseCandidate("// @kl launch layernorm_gelu grid=(M) block=(128) args=(x, y)\n"
                                 "extern \"C\" __global__ void layernorm_gelu(const int* x, int* y) { y[0] = x[0] }\n",
                "broken.cu");
        Recorder rec;
        rec.attach(session);
        const auto summary = session.evaluateOne(broken, {});
        QCOMPARE(rec.outcomes.size(), std::size_t(2));
        QCOMPARE(QString::fromStdString(rec.outcomes[1].category), QStringLiteral("compile.syntax"));
        QVERIFY(rec.outcomes[1].detail.find("broken.cu") != std::string::npos);
        const auto row = store.listIterations(summary.sessionId).back();
        QCOMPARE(QString::fromStdString(row.category), QStringLiteral("compile.syntax"));
        QCOMPARE(summary.passed, 1); // only the baseline
    }

    void noDeviceIsAClearErrorAndStoresNothing()
    {
        QTemporaryDir dir;
        const auto problem = layernorm();
        auto store = kl::store::Store::open(dir.filePath(QStringLiteral("n.db")).toStdString());
        kl::RunnerConfig rc;
        rc.path = KL_MODEL_RUNNER;
        rc.path = rc.path.parent_path().parent_path().parent_path() / "runner" / "kernelloop-runner";
        if (!std::filesystem::exists(rc.path))
            QSKIP("kernelloop-runner is not built in this tree");
        kl::RunnerClient runner(rc);
        kl::TuningSession session(problem, store, runner, config(1, 1));
        kl::Tuner tuner;
        try {
            session.run(tuner);
            QSKIP("this machine has a GPU: the no-device path cannot be shown here");
        } catch (const kl::Error& e) {
            QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("runner.no-device"));
        }
        QVERIFY(store.listSessions().empty());
    }
};

QTEST_GUILESS_MAIN(TestTuningSession)
#include "test_tuning_session.moc"

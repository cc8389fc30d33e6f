// Throughput of a pool of N GPUs against one (issue 14's goal: >= 0.9 N): the simulation of
// pool_simulation.h with short phase latencies, the schedule the loop used before (one compile at
// a time, which does not scale), and the loop itself compiling a round's candidates side by side.
#include "pool_simulation.h"
#include "pool_support.h"

#include <QtTest/QTest>

#include <mutex>
#include <thread>

using namespace kl;
using namespace kl::test;

namespace {
// A tenth of the H200's phases, in proportion: a round takes ~0.1 s.
PhaseLatencies shortLatencies() { return { 25, 7, 34, 19 }; }

struct Scaling {
    SimulatedPool one, many;
    double ratio() const { return many.perMinute() / one.perMinute(); }
};

Scaling scaling(int gpus, int width)
{
    Scaling s { simulatePool(KL_MODEL_RUNNER, 1, 6, shortLatencies(), 1),
        simulatePool(KL_MODEL_RUNNER, gpus, 6, shortLatencies(), width) };
    qInfo("N=%d width %d: %.1f vs %.1f candidates/min, scaling %.2f", gpus, width, s.many.perMinute(),
        s.one.perMinute(), s.ratio());
    return s;
}
} // namespace

class TestPoolScaling : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void scalesWithTheGpus_data()
    {
        QTest::addColumn<int>("gpus");
        QTest::newRow("2 GPUs") << 2;
        QTest::newRow("4 GPUs") << 4;
    }
    void scalesWithTheGpus()
    {
        QFETCH(int, gpus);
        const auto s = scaling(gpus, pool::compileWidth(gpus, unsigned(gpus)));
        QCOMPARE(s.one.candidates, 6); // every job passed
        QCOMPARE(s.many.candidates, 6 * gpus);
        const double ratio = s.ratio();
        QVERIFY2(ratio >= 0.9 * gpus, qPrintable(QStringLiteral("scaling %1 < 0.9 x %2").arg(ratio).arg(gpus)));
    }

    // The schedule before compile_stage: 4 compiles in a row before the last GPU starts.
    void oneCompileAtATimeDoesNotScale()
    {
        const double ratio = scaling(4, 1).ratio();
        QVERIFY2(ratio < 0.9 * 4, qPrintable(QStringLiteral("scaling %1").arg(ratio)));
    }

    void widthFollowsRunnersAndCpus()
    {
        QCOMPARE(pool::compileWidth(8, 16), 8);
        QCOMPARE(pool::compileWidth(8, 2), 2);
        QCOMPARE(pool::compileWidth(1, 16), 1);
        QCOMPARE(pool::compileWidth(0, 0), 1);
        // A round's width: the whole round (at least one per runner), never past the CPUs.
        QCOMPARE(pool::roundCompileWidth(1, 4, 16), 4);
        QCOMPARE(pool::roundCompileWidth(1, 4, 2), 2);
        QCOMPARE(pool::roundCompileWidth(1, 4, 1), 1);
        QCOMPARE(pool::roundCompileWidth(8, 4, 16), 8);
        QCOMPARE(pool::roundCompileWidth(8, 16, 32), 16);
        QCOMPARE(pool::roundCompileWidth(1, 0, 16), 1);
    }

    // Compiled side by side, queued in the order proposed: the later candidates finish compiling first
    // and still wait for their turn, and a turn that fails before the runner passes too.
    void turnsPassInTheOrderProposed()
    {
        pool::TurnOrder order;
        std::mutex mutex;
        std::vector<int> queued;
        std::vector<std::thread> threads;
        for (int turn = 3; turn >= 0; --turn)
            threads.emplace_back([&, turn] {
                std::this_thread::sleep_for(std::chrono::milliseconds(5 * (3 - turn))); // 3 is ready first
                if (turn == 1) { // failed before the runner: never queued, but its turn passes
                    order.pass(turn);
                    return;
                }
                order.wait(turn);
                {
                    std::lock_guard lock(mutex);
                    queued.push_back(turn);
                }
                order.pass(turn);
                order.pass(turn); // twice is harmless (the pipeline's scope guard passes again)
            });
        for (auto& t : threads)
            t.join();
        QCOMPARE(queued, (std::vector<int> { 0, 2, 3 }));
    }

    // One runner: round 1's two candidates also compile side by side (two compiles before the first
    // is queued), and the session records them as before.
    void oneRunnerCompilesARoundSideBySide()
    {
        if (pool::roundCompileWidth(1, 2) < 2)
            QSKIP("one CPU thread: the round compiles one candidate at a time");
        ScopedEnv env({ { "KL_MODEL_RUNNER_PHASE_MS", "verify=10,time=100,profile=10" } });
        pool::RunnerPool runners(endpoints({ "local:0" }), modelPoolOptions());
        PooledSession s;
        auto config = loopConfig(1, 2, "tuner:random");
        config.useCache = false;
        TuningSession session(s.problem, s.store, runners, config);
        std::mutex mutex;
        std::vector<LoopPhase> round1;
        session.events().subscribe([&](const std::shared_ptr<const LoopEvent>& e) {
            if (const auto* p = std::get_if<PhaseChanged>(e.get()); p && p->round == 1) {
                std::lock_guard lock(mutex);
                if (p->phase == LoopPhase::Compile || p->phase == LoopPhase::Verify)
                    round1.push_back(p->phase);
            }
        });
        Tuner tuner({ TunerStrategy::Random, 11 });
        const auto summary = session.run(tuner);
        QCOMPARE(summary.evaluated, 3);
        QCOMPARE(summary.passed, 3);
        QCOMPARE(int(round1.size()), 4);
        QCOMPARE(round1[0], LoopPhase::Compile);
        QCOMPARE(round1[1], LoopPhase::Compile);
    }

    // The real loop over two runners: round 1's two candidates (real NVRTC) both start compiling
    // before either is queued for verification (before: compile, verify, compile, verify).
    void loopCompilesARoundSideBySide()
    {
        if (pool::compileWidth(2) < 2)
            QSKIP("one CPU thread: the round compiles one candidate at a time");
        ScopedEnv env({ { "KL_MODEL_RUNNER_PHASE_MS", "verify=10,time=100,profile=10" } });
        pool::RunnerPool runners(endpoints({ "local:0", "local:1" }), modelPoolOptions());
        PooledSession s;
        auto config = loopConfig(1, 2, "tuner:random");
        config.useCache = false;
        TuningSession session(s.problem, s.store, runners, config);
        std::mutex mutex;
        std::vector<LoopPhase> round1;
        session.events().subscribe([&](const std::shared_ptr<const LoopEvent>& e) {
            if (const auto* p = std::get_if<PhaseChanged>(e.get()); p && p->round == 1) {
                std::lock_guard lock(mutex);
                if (p->phase == LoopPhase::Compile || p->phase == LoopPhase::Verify)
                    round1.push_back(p->phase);
            }
        });
        Tuner tuner({ TunerStrategy::Random, 11 });
        const auto summary = session.run(tuner);
        QCOMPARE(summary.evaluated, 3);
        QCOMPARE(summary.passed, 3);
        QCOMPARE(int(round1.size()), 4);
        QCOMPARE(round1[0], LoopPhase::Compile);
        QCOMPARE(round1[1], LoopPhase::Compile);
    }
};

QTEST_GUILESS_MAIN(TestPoolScaling)
#include "test_pool_scaling.moc"

// The pool over local runner processes (the runner double, one per "GPU"): a round's k candidates
// spread over two runners at once, each result recorded with its endpoint and device; a runner
// killed with SIGKILL on every job (requeued on the other runner, quarantined, the session finishes
// with every candidate measured); a runner that hangs silently; a runner of another protocol
// version; a runner of another GPU model (never used); no runner with a GPU.
#include "core/model/error.h"

#include "pool_support.h"

#include <QtTest/QTest>

#include <algorithm>
#include <set>
#include <thread>

using namespace kl;
using namespace kl::test;

namespace {
QString q(const std::string& s) { return QString::fromStdString(s); }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
} // namespace

class TestRunnerPool : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void spreadsARoundOverTheRunners()
    {
        // Jobs longer than a compile: the second candidate is queued while the first still runs.
        ScopedEnv env({ { "KL_MODEL_RUNNER_DELAY_MS", "2000" } });
        pool::RunnerPool pool(endpoints({ "local:0", "local:1" }), modelPoolOptions());
        PooledSession s;
        std::atomic<bool> done { false }, bothBusy { false };
        std::thread watch([&] {
            while (!done) {
                const auto st = pool.status();
                if (st.size() == 2 && st[0].state == pool::RunnerState::Busy && st[1].state == pool::RunnerState::Busy)
                    bothBusy = true;
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
        });
        s.run(pool, 1, 3);
        done = true;
        watch.join();
        QCOMPARE(s.summary.evaluated, 4);
        QCOMPARE(s.summary.passed, 4);
        QVERIFY2(bothBusy, "the two runners never worked at the same time");
        std::set<std::string> used;
        for (const auto& o : s.finished) {
            QVERIFY2(o.endpoint == "local:0" || o.endpoint == "local:1", o.endpoint.c_str());
            used.insert(o.endpoint);
            // The device is the runner's own: GPU N behind local:N.
            QCOMPARE(q(o.device), q("Model GPU #" + o.endpoint.substr(6)));
            QVERIFY(o.speedup); // against the baseline timed in the same job
            const auto stored = s.store.iteration(s.summary.sessionId, o.index);
            QVERIFY(stored && stored->result);
            QCOMPARE(q(stored->result->endpoint), q(o.endpoint));
            QCOMPARE(stored->result->device.value().index, std::stoi(o.endpoint.substr(6)));
        }
        QCOMPARE(int(used.size()), 2);
        const auto session = s.store.session(s.summary.sessionId);
        QVERIFY(session);
        QCOMPARE(int(session->config.at("runners").size()), 2);
    }

    // kill -9 of one runner on every job: each of its jobs is requeued once on the other runner, the
    // endpoint is quarantined after two faults, and every candidate is still measured and stored. Jobs
    // of a second keep the healthy runner busy, so that the killed one gets a job in every round.
    void killedRunnerIsRequeuedAndQuarantined()
    {
        ScopedEnv env({ { "KL_MODEL_RUNNER_KILL_DEVICE", "1" }, { "KL_MODEL_RUNNER_DELAY_MS", "1000" } });
        pool::RunnerPool pool(endpoints({ "local:0", "local:1" }), modelPoolOptions());
        PooledSession s;
        s.run(pool, 2, 2);
        QCOMPARE(s.summary.evaluated, 5);
        QCOMPARE(s.summary.passed, 5);
        int requeued = 0;
        for (const auto& o : s.finished) {
            QVERIFY2(o.category == "passed", (o.category + ": " + o.detail).c_str());
            QCOMPARE(q(o.endpoint), u"local:0"_qs);
            if (contains(o.detail, "requeued once")) {
                ++requeued;
                QVERIFY2(contains(o.detail, "killed by signal 9 (SIGKILL)"), o.detail.c_str());
                QVERIFY2(contains(o.detail, "[runner.lost on local:1]"), o.detail.c_str());
            }
        }
        QCOMPARE(requeued, 2);
        const auto status = pool.status();
        const auto* lost = statusOf(status, "local:1");
        QVERIFY(lost);
        QCOMPARE(q(pool::runnerStateName(lost->state)), u"quarantined"_qs);
        QCOMPARE(lost->faults, 2);
        QVERIFY2(contains(lost->lastError, "[runner.lost]"), lost->lastError.c_str());
        QCOMPARE(statusOf(status, "local:0")->jobsDone, 5);
        QCOMPARE(pool.usableRunners(), 1);
        const auto committed = committedMismatch(s);
        QVERIFY2(committed.empty(), committed.c_str());
        // Nothing lost: every evaluated candidate is a finished iteration with its result.
        for (int index = 1; index <= 5; ++index) {
            const auto it = s.store.iteration(s.summary.sessionId, index);
            QVERIFY(it && it->result);
            QCOMPARE(q(it->result->category), u"passed"_qs);
        }
    }

    // A runner alone that is killed on every job: the candidate runs twice, then is a runner.lost
    // result (the session says the baseline did not pass), never a candidate's crash.
    void loneKilledRunnerGivesRunnerLost()
    {
        ScopedEnv env({ { "KL_MODEL_RUNNER_KILL_DEVICE", "0" } });
        pool::RunnerPool pool(endpoints({ "local:0" }), modelPoolOptions());
        PooledSession s;
        s.run(pool, 1, 1);
        QCOMPARE(int(s.finished.size()), 1);
        const auto& o = s.finished.front();
        QCOMPARE(q(o.category), u"runner.lost"_qs);
        QVERIFY2(contains(o.detail, "; first: "), o.detail.c_str());
        QVERIFY2(contains(s.summary.stopReason, "runner.lost"), s.summary.stopReason.c_str());
        const auto stored = s.store.iteration(s.summary.sessionId, 1);
        QVERIFY(stored && stored->result);
        QCOMPARE(q(stored->result->category), u"runner.lost"_qs);
        // The last usable runner is never quarantined: the session can go on when it comes back.
        QCOMPARE(q(pool::runnerStateName(pool.status().front().state)), u"idle"_qs);
    }

    // Silence until the deadline (no "load" progress) is a hung runner, not a slow kernel.
    void hungRunnerIsRequeued()
    {
        ScopedEnv env({ { "KL_MODEL_RUNNER_HANG_DEVICE", "1" } });
        pool::RunnerPool pool(endpoints({ "local:0", "local:1" }), modelPoolOptions());
        PooledSession s;
        s.run(pool, 1, 2, std::chrono::milliseconds(1200));
        QCOMPARE(s.summary.passed, 3);
        bool sawHang = false;
        for (const auto& o : s.finished) {
            QCOMPARE(q(o.endpoint), u"local:0"_qs);
            sawHang = sawHang || contains(o.detail, "[runner.hang on local:1]");
        }
        QVERIFY(sawHang);
        const auto hungStatus = pool.status();
        const auto* hung = statusOf(hungStatus, "local:1");
        QVERIFY2(contains(hung->lastError, "[runner.hang]"), hung->lastError.c_str());
        const auto committed = committedMismatch(s);
        QVERIFY2(committed.empty(), committed.c_str());
    }

    void versionMismatchIsSetAside()
    {
        ScopedEnv env({ { "KL_MODEL_RUNNER_PROTOCOL_DEVICE", "1:2" } });
        pool::RunnerPool pool(endpoints({ "local:0", "local:1" }), modelPoolOptions());
        PooledSession s;
        s.run(pool, 1, 2);
        QCOMPARE(s.summary.passed, 3);
        for (const auto& o : s.finished)
            QCOMPARE(q(o.endpoint), u"local:0"_qs);
        const auto oldStatus = pool.status();
        const auto* old = statusOf(oldStatus, "local:1");
        QCOMPARE(q(pool::runnerStateName(old->state)), u"quarantined"_qs);
        QVERIFY2(contains(old->lastError, "[runner.version-mismatch]"), old->lastError.c_str());
        QVERIFY2(contains(old->lastError, "protocol 2"), old->lastError.c_str());
        const auto committed = committedMismatch(s);
        QVERIFY2(committed.empty(), committed.c_str());

        // Alone, the mismatch is the session's error, before anything is stored.
        pool::RunnerPool alone(endpoints({ "local:1" }), modelPoolOptions());
        try {
            alone.start();
            QFAIL("a runner of protocol 2 was accepted");
        } catch (const Error& e) {
            QVERIFY2(contains(e.message(), "protocol 2"), e.what());
        }
        QVERIFY2(contains(alone.status().front().lastError, "[runner.version-mismatch]"),
            alone.status().front().lastError.c_str());
    }

    void otherGpuModelIsNeverMixed()
    {
        ScopedEnv env({ { "KL_MODEL_RUNNER_NAME_DEVICE", "2:Other GPU" } });
        pool::RunnerPool pool(endpoints({ "local:0", "local:1", "local:2" }), modelPoolOptions());
        PooledSession s;
        s.run(pool, 1, 3);
        QCOMPARE(s.summary.passed, 4);
        for (const auto& o : s.finished)
            QVERIFY2(o.endpoint != "local:2" && o.device.rfind("Model GPU", 0) == 0, o.endpoint.c_str());
        const auto otherStatus = pool.status();
        const auto* other = statusOf(otherStatus, "local:2");
        QCOMPARE(q(pool::runnerStateName(other->state)), u"other-model"_qs);
        QCOMPARE(other->jobsDone, 0);
    }

    void noDeviceAnywhere()
    {
        ScopedEnv env({ { "KL_MODEL_RUNNER_NO_DEVICE", "no CUDA driver" } });
        pool::RunnerPool pool(endpoints({ "local:0", "local:1" }), modelPoolOptions());
        try {
            pool.start();
            QFAIL("a pool without a GPU started");
        } catch (const Error& e) {
            QCOMPARE(q(e.category()), u"runner.no-device"_qs);
            QVERIFY2(contains(e.message(), "no CUDA driver"), e.what());
        }
    }

    // Cancelling the session stops the job its runner is stuck in, at once.
    void cancelStopsARunningJob()
    {
        ScopedEnv env({ { "KL_MODEL_RUNNER_HANG_DEVICE", "0" } });
        pool::RunnerPool pool(endpoints({ "local:0" }), modelPoolOptions());
        PooledSession s;
        std::atomic<bool> cancel { false };
        std::thread stopper([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(800));
            cancel = true;
        });
        const auto t0 = std::chrono::steady_clock::now();
        s.run(pool, 1, 1, std::chrono::seconds(60), &cancel);
        stopper.join();
        QVERIFY(s.summary.cancelled);
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
    }
};

QTEST_GUILESS_MAIN(TestRunnerPool)
#include "test_runner_pool.moc"

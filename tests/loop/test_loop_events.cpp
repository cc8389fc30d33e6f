// The loop's one event stream (session started, phase, proposer text, review requested, iteration
// finished, incumbent changed, session finished), subscribed from the loop's and other threads, and
// a runner that dies mid-job: killed from outside (requeued once) or crashed by its candidate.
#include "core/loop/tuning_session.h"
#include "core/runnerclient/runner_client.h"
#include "core/store/store.h"
#include "core/tuner/tuner.h"

#include "loop_support.h"

#include <QTemporaryDir>
#include <QtTest/QTest>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>

using namespace kl;

namespace {

struct Seen {
    std::mutex mutex;
    std::vector<std::string> names;
    std::vector<IterationOutcome> finished;
    void add(const LoopEvent& e)
    {
        std::lock_guard lock(mutex);
        names.push_back(loopEventName(e));
        if (const auto* f = std::get_if<IterationFinished>(&e))
            finished.push_back(f->outcome);
    }
};

// One round of the evolutionary tuner on the runner double, with `env` set for the runner process.
struct OneRound {
    QTemporaryDir dir;
    store::Store store = store::Store::open(dir.filePath(QStringLiteral("s.db")).toStdString());
    Problem problem = test::layernormProblem();
    LoopSummary summary;
    Seen seen;

    explicit OneRound(const std::string& dieOnce = {})
    {
        if (!dieOnce.empty())
            ::setenv("KL_MODEL_RUNNER_DIE_ONCE",
                (dieOnce + ":" + dir.filePath(QStringLiteral("died")).toStdString()).c_str(), 1);
        RunnerClient runner(test::modelRunner());
        TuningSession session(problem, store, runner, test::loopConfig(1, 1, "tuner:evolutionary"));
        session.events().subscribe([this](const std::shared_ptr<const LoopEvent>& e) { seen.add(*e); });
        Tuner tuner({ TunerStrategy::Evolutionary, 5 });
        summary = session.run(tuner);
        ::unsetenv("KL_MODEL_RUNNER_DIE_ONCE");
    }
};

} // namespace

class TestLoopEvents : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void orderAndContent()
    {
        OneRound r;
        const auto& n = r.seen.names;
        QVERIFY(!n.empty());
        QCOMPARE(QString::fromStdString(n.front()), u"session-started"_qs);
        QCOMPARE(QString::fromStdString(n.back()), u"session-finished"_qs);
        // The baseline is finished, then becomes the first incumbent.
        const auto firstFinished = std::find(n.begin(), n.end(), "iteration-finished");
        QVERIFY(firstFinished != n.end());
        QCOMPARE(QString::fromStdString(*(firstFinished + 1)), u"incumbent-changed"_qs);
        QCOMPARE(int(r.seen.finished.size()), 2);
        QVERIFY(std::count(n.begin(), n.end(), "phase") >= 3);
    }

    // The GUI subscribes from its own thread while the loop runs on another; text streams from a third.
    void subscribeFromAnotherThread()
    {
        LoopEvents events;
        std::atomic<int> delivered { 0 };
        std::atomic<bool> stop { false };
        std::thread publisher([&] {
            for (int i = 0; !stop.load(); ++i)
                events.publish(PhaseChanged { i, LoopPhase::Verify, {} });
        });
        std::thread text([&] {
            for (int i = 0; i < 2000; ++i)
                events.publish(ProposerText { "coder", 0, "x" });
        });
        std::vector<int> handles;
        for (int i = 0; i < 200; ++i) {
            handles.push_back(events.subscribe([&](const std::shared_ptr<const LoopEvent>&) { ++delivered; }));
            if (i % 2)
                events.unsubscribe(handles[std::size_t(i - 1)]);
        }
        text.join();
        for (const int h : handles)
            events.unsubscribe(h);
        const int after = delivered.load();
        stop = true;
        publisher.join();
        QVERIFY(after > 0);
        QCOMPARE(delivered.load(), after); // nothing reaches a subscriber after unsubscribe returned
    }

    void subscriberMayUnsubscribeItself()
    {
        LoopEvents events;
        int calls = 0;
        int handle = 0;
        handle = events.subscribe([&](const std::shared_ptr<const LoopEvent>&) {
            ++calls;
            events.unsubscribe(handle);
        });
        events.publish(SessionFinished {});
        events.publish(SessionFinished {});
        QCOMPARE(calls, 1);
    }

    // Issue 12: SIGKILL from outside while a candidate ran: its detail says so, the runner is restarted
    // and the candidate runs again (once), and it passes.
    void runnerKilledFromOutsideRequeuesOnce()
    {
        OneRound r("9");
        QCOMPARE(int(r.seen.finished.size()), 2);
        const auto& o = r.seen.finished.back();
        QVERIFY2(o.category == "passed", (o.category + ": " + o.detail).c_str());
        QVERIFY2(o.detail.find(
                     "requeued once: the runner was killed by signal 9 (SIGKILL) during the job (in phase time 1/3)")
                != std::string::npos,
            o.detail.c_str());
        QVERIFY2(o.detail.find("the runner was restarted (pid ") != std::string::npos, o.detail.c_str());
        const auto stored = r.store.iteration(r.summary.sessionId, o.index);
        QVERIFY(stored && stored->result);
        QVERIFY(stored->result->detail.find("SIGKILL") != std::string::npos);
    }

    // A candidate that crashed the runner gets its own verdict: crash, with the signal, the phase and the restart.
    void candidateThatCrashedTheRunnerIsItsVerdict()
    {
        OneRound r("11");
        QCOMPARE(int(r.seen.finished.size()), 2);
        const auto& o = r.seen.finished.back();
        QCOMPARE(QString::fromStdString(o.category), u"crash"_qs);
        QVERIFY2(o.detail.find("killed by signal 11 (SIGSEGV) during the job (in phase time 1/3)") != std::string::npos,
            o.detail.c_str());
        QVERIFY2(o.detail.find("the runner was restarted (pid ") != std::string::npos, o.detail.c_str());
        QVERIFY2(o.detail.find("requeued") == std::string::npos, o.detail.c_str());
        const auto stored = r.store.iteration(r.summary.sessionId, o.index);
        QVERIFY(stored && stored->result);
        QCOMPARE(QString::fromStdString(stored->result->detail), QString::fromStdString(o.detail));
    }
};

QTEST_GUILESS_MAIN(TestLoopEvents)
#include "test_loop_events.moc"

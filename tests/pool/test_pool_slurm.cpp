// Runners as Slurm job steps on a real one-node cluster (slurmctld + slurmd + munge from Debian,
// started by the CTest fixture; two fake GPUs as gres): each slurm endpoint makes one allocation
// (salloc --no-shell), its runner is an `srun --jobid=ID --gres=gpu:1` step, and the allocation is
// released when the pool stops. A pooled session over two allocations; `scancel` of one job while
// its runner works (runner.lost, requeued on the other, quarantined, the session finishes); an
// allocation Slurm refuses (runner.unreachable, the session runs on the rest). After each fault every
// committed iteration is read back from the store.
#include "remote_support.h"

#include <QtTest/QTest>

#include <set>
#include <thread>

using namespace kl;
using namespace kl::test;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string jobOf(const std::string& endpoint)
{
    const auto at = endpoint.find("[job ");
    return at == std::string::npos ? std::string() : endpoint.substr(at + 5, endpoint.find(']', at) - at - 5);
}

// Jobs of ours still known to Slurm (running or pending).
std::string ourJobs() { return shell("squeue -h -n kernelloop-runner -t PENDING,RUNNING -o %i").second; }

} // namespace

class TestPoolSlurm : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        const auto env = serviceEnv(KL_SLURM_DIR);
        QVERIFY2(env.count("SLURM_CONF"), "the pool_slurm fixture (slurm_service.sh) did not start a cluster");
        ::setenv("SLURM_CONF", env.at("SLURM_CONF").c_str(), 1);
        const auto sinfo = shell("sinfo -h -o %t");
        QVERIFY2(sinfo.first == 0 && contains(sinfo.second, "idle"), sinfo.second.c_str());
    }

    void pooledSessionOverTwoAllocations()
    {
        ScopedEnv env({ { "KL_MODEL_RUNNER_DELAY_MS", "200" } }); // srun passes the environment on
        {
            pool::RunnerPool pool(endpoints({ "slurm:--time=5", "slurm:--time=5" }), modelPoolOptions());
            PooledSession s;
            s.run(pool, 2, 2);
            QCOMPARE(s.summary.passed, 5);
            std::set<std::string> used;
            for (const auto& o : s.finished) {
                QVERIFY2(o.endpoint.rfind("slurm:--time=5 [job ", 0) == 0, o.endpoint.c_str());
                used.insert(o.endpoint);
                const auto stored = s.store.iteration(s.summary.sessionId, o.index);
                QCOMPARE(q(stored->result->endpoint), q(o.endpoint));
            }
            QCOMPARE(int(used.size()), 2);
            // Both allocations are alive for the whole session, and only until the pool stops.
            const auto jobs = ourJobs();
            for (const auto& e : used)
                QVERIFY2(contains(jobs, jobOf(e)), jobs.c_str());
        }
        QVERIFY2(ourJobs().empty(), ourJobs().c_str());
    }

    void scancelMidSession()
    {
        ScopedEnv env({ { "KL_MODEL_RUNNER_DELAY_MS", "600" } });
        pool::RunnerPool pool(endpoints({ "slurm:", "slurm:" }), modelPoolOptions());
        PooledSession s;
        std::thread loop([&] { s.run(pool, 2, 2); });
        const bool busy = waitBusy(pool, "slurm:", 1);
        std::string cancelled;
        if (busy) {
            std::this_thread::sleep_for(std::chrono::milliseconds(150));
            for (const auto& st : pool.status())
                if (st.state == pool::RunnerState::Busy && st.jobsDone >= 1) {
                    cancelled = st.endpoint;
                    break;
                }
            shell("scancel " + jobOf(cancelled));
        }
        loop.join();
        QVERIFY2(busy && !cancelled.empty(), "no second job reached a Slurm runner");
        QCOMPARE(s.summary.evaluated, 5);
        QCOMPARE(s.summary.passed, 5);
        bool lostNoted = false;
        for (const auto& o : s.finished)
            lostNoted = lostNoted || contains(o.detail, "[runner.lost on " + cancelled + "]");
        QVERIFY(lostNoted);
        const auto goneStatus = pool.status();
        const auto* gone = statusOf(goneStatus, cancelled);
        QCOMPARE(q(pool::runnerStateName(gone->state)), u"quarantined"_qs);
        QVERIFY2(contains(gone->lastError, "SIGTERM"), gone->lastError.c_str());
        const auto committed = committedMismatch(s);
        QVERIFY2(committed.empty(), committed.c_str());
        pool.stop();
        QVERIFY2(ourJobs().empty(), ourJobs().c_str());
    }

    // Slurm refuses the allocation: that endpoint is unreachable and set aside at start, and a session
    // runs on the rest, every iteration committed.
    void refusedAllocationIsUnreachable()
    {
        pool::RunnerPool pool(endpoints({ "slurm:--partition=no-such-partition", "local:0" }), modelPoolOptions());
        pool.start();
        const auto refusedStatus = pool.status();
        const auto* refused = statusOf(refusedStatus, "slurm:--partition=no-such-partition");
        QVERIFY(refused);
        QCOMPARE(q(pool::runnerStateName(refused->state)), u"quarantined"_qs);
        QVERIFY2(contains(refused->lastError, "[runner.unreachable]") && contains(refused->lastError, "salloc"),
            refused->lastError.c_str());
        QCOMPARE(pool.usableRunners(), 1);
        PooledSession s;
        s.run(pool, 2, 2);
        QCOMPARE(s.summary.evaluated, 5);
        QCOMPARE(s.summary.passed, 5);
        for (const auto& o : s.finished)
            QCOMPARE(q(o.endpoint), u"local:0"_qs);
        const auto committed = committedMismatch(s);
        QVERIFY2(committed.empty(), committed.c_str());
    }
};

QTEST_GUILESS_MAIN(TestPoolSlurm)
#include "test_pool_slurm.moc"

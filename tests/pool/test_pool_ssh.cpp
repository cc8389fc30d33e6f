// Runners over real ssh: an sshd on loopback started by the CTest fixture (throwaway host and user
// keys in the build folder), the system's ssh client in BatchMode, the runner double as the remote
// kernelloop-runner. A pooled session over two ssh endpoints and a local one; the remote runner
// killed with SIGKILL (runner.lost, requeued, quarantined); the sshd stopped while a job runs on it
// (the connection drops: runner.lost, then unreachable, quarantined, the session finishes); a remote
// runner that stalls with its pipe open (runner.hang, requeued); a host that refuses connections
// (runner.unreachable at start). After each fault every committed iteration is read back from the store.
#include "remote_support.h"

#include <QtTest/QTest>

#include <set>
#include <thread>

using namespace kl;
using namespace kl::test;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

pool::PoolOptions sshOptions(const std::string& port, const std::string& key, const std::string& remoteRunner)
{
    auto o = modelPoolOptions();
    o.endpoints.remoteRunner = remoteRunner;
    o.endpoints.sshOptions = { "Port=" + port, "IdentityFile=" + key, "StrictHostKeyChecking=no",
        "UserKnownHostsFile=/dev/null", "LogLevel=ERROR", "ConnectTimeout=5" };
    return o;
}

} // namespace

class TestPoolSsh : public QObject {
    Q_OBJECT

    std::map<std::string, std::string> m_sshd;

private Q_SLOTS:
    void initTestCase()
    {
        m_sshd = serviceEnv(KL_SSHD_DIR);
        QVERIFY2(m_sshd.count("KL_SSHD_PORT"), "the pool_sshd fixture (sshd_service.sh) did not start an sshd");
    }

    void pooledSessionOverSshAndLocal()
    {
        QTemporaryDir dir;
        // Jobs longer than a compile, so that the three runners work at once.
        const auto remote = runnerScript(dir, { { "KL_MODEL_RUNNER_DELAY_MS", "1200" } });
        ScopedEnv env({ { "KL_MODEL_RUNNER_DELAY_MS", "1200" } });
        pool::RunnerPool pool(endpoints({ "ssh:127.0.0.1:0", "ssh:root@127.0.0.1:1", "local:2" }),
            sshOptions(m_sshd["KL_SSHD_PORT"], m_sshd["KL_SSHD_KEY"], remote));
        PooledSession s;
        s.run(pool, 1, 3);
        QCOMPARE(s.summary.passed, 4);
        std::set<std::string> used;
        for (const auto& o : s.finished) {
            used.insert(o.endpoint);
            const auto stored = s.store.iteration(s.summary.sessionId, o.index);
            QVERIFY(stored && stored->result);
            QCOMPARE(q(stored->result->endpoint), q(o.endpoint));
            QCOMPARE(q(o.device), q("Model GPU #" + o.endpoint.substr(o.endpoint.size() - 1)));
        }
        // Which runner takes which job depends on compile times; every runner is up, more than one worked,
        // and ssh did.
        QVERIFY(used.size() >= 2);
        QVERIFY(used.count("ssh:root@127.0.0.1:1") || used.count("ssh:127.0.0.1:0"));
        for (const auto& st : pool.status()) // a loaded machine may reset a connection: then it says so
            QVERIFY2(st.state == pool::RunnerState::Idle || st.lastError.find("[runner.") != std::string::npos,
                (st.endpoint + ": " + pool::runnerStateName(st.state) + " " + st.lastError).c_str());
    }

    // kill -9 of the remote runner on GPU 1 right after it takes each job. The healthy runner's jobs
    // take 2.5 s, far longer than a compile, so that whenever a round has two jobs the killed runner
    // takes one: it faults twice in a row and is quarantined (the pool's rule), deterministically.
    void killedRemoteRunnerIsLost()
    {
        QTemporaryDir dir;
        const auto remote = runnerScript(dir, {},
            { { 0, { { "KL_MODEL_RUNNER_DELAY_MS", "2500" } } }, { 1, { { "KL_MODEL_RUNNER_KILL_DEVICE", "1" } } } });
        pool::RunnerPool pool(endpoints({ "ssh:127.0.0.1:0", "ssh:127.0.0.1:1" }),
            sshOptions(m_sshd["KL_SSHD_PORT"], m_sshd["KL_SSHD_KEY"], remote));
        PooledSession s;
        s.run(pool, 2, 2);
        QCOMPARE(s.summary.evaluated, 5);
        QCOMPARE(s.summary.passed, 5);
        int requeued = 0;
        for (const auto& o : s.finished) {
            QCOMPARE(q(o.endpoint), u"ssh:127.0.0.1:0"_qs);
            if (contains(o.detail, "requeued once")) {
                ++requeued;
                QVERIFY2(contains(o.detail, "[runner.lost on ssh:127.0.0.1:1]"), o.detail.c_str());
                QVERIFY2(contains(o.detail, "the remote runner was killed by signal 9 (SIGKILL)"), o.detail.c_str());
            }
        }
        QCOMPARE(requeued, 2);
        const auto lostStatus = pool.status();
        const auto* lost = statusOf(lostStatus, "ssh:127.0.0.1:1");
        QCOMPARE(lost->faults, 2);
        QVERIFY2(contains(lost->lastError, "[runner.lost]"), lost->lastError.c_str());
        QCOMPARE(q(pool::runnerStateName(lost->state)), u"quarantined"_qs);
        QCOMPARE(statusOf(lostStatus, "ssh:127.0.0.1:0")->jobsDone, 5);
        const auto committed = committedMismatch(s);
        QVERIFY2(committed.empty(), committed.c_str());
    }

    // A stalled pipe: the remote runner on GPU 1 takes each job and then says nothing, its ssh
    // connection open. Silence until the deadline is runner.hang; the job is requeued on GPU 0, whose
    // jobs of a second keep it busy while the round's other job reaches the stalled runner.
    void stalledRemoteRunnerIsRequeued()
    {
        QTemporaryDir dir;
        const auto remote = runnerScript(
            dir, { { "KL_MODEL_RUNNER_HANG_DEVICE", "1" } }, { { 0, { { "KL_MODEL_RUNNER_DELAY_MS", "1000" } } } });
        pool::RunnerPool pool(endpoints({ "ssh:127.0.0.1:0", "ssh:127.0.0.1:1" }),
            sshOptions(m_sshd["KL_SSHD_PORT"], m_sshd["KL_SSHD_KEY"], remote));
        PooledSession s;
        s.run(pool, 1, 2, std::chrono::milliseconds(3000));
        pool.stop();
        endLeftRunners(dir);
        QCOMPARE(s.summary.evaluated, 3);
        QCOMPARE(s.summary.passed, 3);
        bool sawHang = false;
        for (const auto& o : s.finished) {
            QCOMPARE(q(o.endpoint), u"ssh:127.0.0.1:0"_qs);
            sawHang = sawHang || contains(o.detail, "[runner.hang on ssh:127.0.0.1:1]");
        }
        QVERIFY(sawHang);
        const auto hungStatus = pool.status();
        const auto* hung = statusOf(hungStatus, "ssh:127.0.0.1:1");
        QVERIFY(hung->faults >= 1);
        QVERIFY2(contains(hung->lastError, "[runner.hang]"), hung->lastError.c_str());
        const auto committed = committedMismatch(s);
        QVERIFY2(committed.empty(), committed.c_str());
    }

    // The host drops while a job runs on it: a private sshd, stopped (listener and connections) mid-job.
    void sshdStoppedMidSession()
    {
        QTemporaryDir dir;
        const auto sshdDir = dir.filePath(QStringLiteral("sshd")).toStdString();
        const std::string service = std::string(KL_SOURCE_DIR) + "/tests/pool/sshd_service.sh";
        const auto started = shell(service + " start " + sshdDir);
        QVERIFY2(started.first == 0, started.second.c_str());
        const auto own = serviceEnv(sshdDir);
        const auto remote = runnerScript(dir, { { "KL_MODEL_RUNNER_DELAY_MS", "600" } });
        pool::RunnerPool pool(endpoints({ "local:0", "ssh:127.0.0.1:1" }),
            sshOptions(own.at("KL_SSHD_PORT"), own.at("KL_SSHD_KEY"), remote));
        ScopedEnv env({ { "KL_MODEL_RUNNER_DELAY_MS", "600" } });
        PooledSession s;
        std::thread loop([&] { s.run(pool, 2, 2); });
        const bool busy = waitBusy(pool, "ssh:", 1);
        if (busy)
            std::this_thread::sleep_for(std::chrono::milliseconds(150));
        const auto stopped = shell(service + " stop " + sshdDir);
        loop.join();
        QVERIFY2(busy, "no second job reached the ssh runner");
        QVERIFY2(stopped.first == 0, stopped.second.c_str());
        QCOMPARE(s.summary.evaluated, 5);
        QCOMPARE(s.summary.passed, 5);
        bool lostNoted = false;
        for (const auto& o : s.finished)
            lostNoted = lostNoted || contains(o.detail, "[runner.lost on ssh:127.0.0.1:1]");
        QVERIFY(lostNoted);
        const auto goneStatus = pool.status();
        const auto* gone = statusOf(goneStatus, "ssh:127.0.0.1:1");
        QCOMPARE(q(pool::runnerStateName(gone->state)), u"quarantined"_qs);
        QVERIFY2(contains(gone->lastError, "[runner.lost]") && contains(gone->lastError, "ssh exited with 255"),
            gone->lastError.c_str());
        QVERIFY2(contains(gone->lastError, "could not be restarted"), gone->lastError.c_str());
        for (int index = 1; index <= 5; ++index) {
            const auto it = s.store.iteration(s.summary.sessionId, index);
            QVERIFY(it && it->result);
            QCOMPARE(q(it->result->category), u"passed"_qs);
        }
    }

    void refusedHostIsUnreachable()
    {
        QTemporaryDir dir;
        const auto remote = runnerScript(dir, {});
        // Port 1 on loopback: nothing listens there.
        pool::RunnerPool pool(
            endpoints({ "ssh:127.0.0.1:0", "local:0" }), sshOptions("1", m_sshd["KL_SSHD_KEY"], remote));
        PooledSession s;
        s.run(pool, 1, 1);
        QCOMPARE(s.summary.passed, 2);
        const auto refusedStatus = pool.status();
        const auto* refused = statusOf(refusedStatus, "ssh:127.0.0.1:0");
        QCOMPARE(q(pool::runnerStateName(refused->state)), u"quarantined"_qs);
        QVERIFY2(contains(refused->lastError, "[runner.unreachable]"), refused->lastError.c_str());
        QVERIFY2(contains(refused->lastError, "Connection refused"), refused->lastError.c_str());
        for (const auto& o : s.finished)
            QCOMPARE(q(o.endpoint), u"local:0"_qs);
        const auto committed = committedMismatch(s);
        QVERIFY2(committed.empty(), committed.c_str());
    }
};

QTEST_GUILESS_MAIN(TestPoolSsh)
#include "test_pool_ssh.moc"

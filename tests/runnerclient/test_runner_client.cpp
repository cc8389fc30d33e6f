// The runner client against real child processes: a fake runner that hangs, crashes, writes
// garbage, never says hello or ignores shutdown (fake_runner.cpp), and the real kernelloop-runner,
// which on a machine without a GPU must come back as a clean no-device answer.
#include "core/model/child_environment.h"
#include "core/model/error.h"
#include "core/runnerclient/runner_client.h"

#include <QtTest>

#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <fstream>
#include <sys/wait.h>
#include <thread>

using namespace kl;
using namespace kl::protocol;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

long long msSince(Clock::time_point t)
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

RunnerConfig fakeConfig(const std::string& mode = "normal")
{
    RunnerConfig c;
    c.path = KL_FAKE_RUNNER;
    c.startTimeout = 2000ms;
    c.defaultJobTimeout = 2000ms;
    c.describeTimeout = 2000ms;
    c.shutdownTimeout = 1000ms;
    c.extraArgs = { "--mode", mode };
    return c;
}

// A small, valid request; the fake runner reads its behaviour from the first case's label.
EvaluateRequest request(const std::string& behaviour, std::size_t cubinBytes = 64)
{
    EvaluateRequest r;
    r.modules.reference.cubin = "reference";
    r.modules.candidate.cubin = std::string(cubinBytes, '\x7f');
    Case c;
    c.label = behaviour;
    c.kind = CaseKind::Main;
    c.timed = true;
    c.buffers = { Buffer { "x", PlannedBuffer::Role::Input, DType::F32, 4, 8, 8, Distribution {} },
        Buffer { "y", PlannedBuffer::Role::Output, DType::F32, 4, 8, 8, std::nullopt } };
    Launch l { "copy", { 4, 1, 1 }, { 32, 1, 1 }, 0,
        { BufferArg { "x" }, BufferArg { "y" }, makeScalarArg(DType::I32, 8) } };
    c.programs.reference.launches = { l };
    c.programs.candidate.launches = { l };
    r.cases = { c };
    return r;
}

// True when `pid` is no longer our child: reaped (or never ours).
bool reaped(pid_t pid)
{
    errno = 0;
    return ::waitpid(pid, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

// Process state letter from /proc ('Z' zombie, 'S' sleeping, ...), or 0 when it is gone.
char processState(pid_t pid)
{
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto paren = text.rfind(')');
    return paren == std::string::npos || paren + 2 >= text.size() ? 0 : text[paren + 2];
}

void expectPasses(RunnerClient& client)
{
    const auto r = client.evaluate(request("normal"));
    QVERIFY2(r.category() == Category::Passed, r.header.detail.c_str());
    QVERIFY(r.header.status == Status::Ok);
}

} // namespace

class TestRunnerClient : public QObject {
    Q_OBJECT
private slots:
    void normalJobs()
    {
        RunnerClient client(fakeConfig());
        const auto hello = client.start();
        QVERIFY(hello.deviceOk);
        QCOMPARE(hello.runner, std::string("fake"));
        QCOMPARE(hello.pid, std::int64_t(client.pid()));
        const auto device = client.describe();
        QCOMPARE(device.name, std::string("Fake GPU"));
        QCOMPARE(device.smCount, 132);

        std::vector<Progress> progress;
        JobOptions options;
        options.progress = [&](const Progress& p) { progress.push_back(p); };
        const auto r = client.evaluate(request("normal", 300'000), options); // a cubin larger than a pipe buffer
        QVERIFY2(r.category() == Category::Passed, r.header.detail.c_str());
        QCOMPARE(q(r.header.detail), u"cases=1 candidate_cubin_bytes=300000"_qs);
        QCOMPARE(r.header.id, std::string("2")); // the client's own ids: describe was 1
        QCOMPARE(progress.size(), std::size_t(3));
        QCOMPARE(progress.back().done, std::int64_t(3));
        QCOMPARE(r.device->name, std::string("Fake GPU"));

        auto named = request("normal");
        named.id = "job-42";
        QCOMPARE(client.evaluate(named).header.id, std::string("job-42"));
        QCOMPARE(client.starts(), 1); // one runner served every job
        const auto pid = client.pid();
        client.shutdown();
        QVERIFY(!client.running());
        QVERIFY(reaped(pid));
    }

    // The key's variable (marked by the key loader, here directly) and any secret-looking one never reach
    // the runner; the rest of the environment does.
    void noSecretReachesTheRunner()
    {
        ::setenv("KL_TEST_LLM_VARIABLE", "sk-planted-1", 1);
        ::setenv("SOME_SERVICE_API_KEY", "sk-planted-2", 1);
        ::setenv("KL_TEST_PLAIN", "plain", 1);
        markSecretVariable("KL_TEST_LLM_VARIABLE");
        RunnerClient client(fakeConfig());
        QVERIFY(client.start().deviceOk);
        const auto r = client.evaluate(request("environment"));
        ::unsetenv("KL_TEST_LLM_VARIABLE");
        ::unsetenv("SOME_SERVICE_API_KEY");
        ::unsetenv("KL_TEST_PLAIN");
        const QString names = q(r.header.detail);
        QVERIFY2(names.contains(u"KL_TEST_PLAIN,"_qs) && names.contains(u"PATH,"_qs), qPrintable(names));
        QVERIFY2(!names.contains(u"KL_TEST_LLM_VARIABLE"_qs), qPrintable(names));
        QVERIFY2(!names.contains(u"SOME_SERVICE_API_KEY"_qs), qPrintable(names));
    }

    void timeoutKillsAndTheNextJobWorks()
    {
        RunnerClient client(fakeConfig());
        client.start();
        const auto pid = client.pid();
        JobOptions options;
        options.timeout = 300ms;
        const auto start = Clock::now();
        const auto r = client.evaluate(request("hang"), options);
        const auto elapsed = msSince(start);
        QVERIFY2(r.category() == Category::Timeout, r.header.detail.c_str());
        QVERIFY(r.header.status == Status::Failed);
        QVERIFY(elapsed >= 300 && elapsed < 1500);
        QVERIFY2(q(r.header.detail).contains(u"no result within 300 ms (last progress: verify 1/4)"_qs),
            r.header.detail.c_str());
        QVERIFY(!r.timing);
        QVERIFY(reaped(pid));
        qInfo("timeout of 300 ms returned after %lld ms", elapsed);

        expectPasses(client);
        QCOMPARE(client.starts(), 2);
        QVERIFY(client.pid() != pid);
    }

    void timeoutKillsTheWholeProcessGroup()
    {
        RunnerClient client(fakeConfig());
        JobOptions options;
        options.timeout = 300ms;
        const auto r = client.evaluate(request("grandchild"), options);
        QVERIFY2(r.category() == Category::Timeout, r.header.detail.c_str());
        const auto tail = client.stderrTail();
        const auto at = tail.find("grandchild ");
        QVERIFY2(at != std::string::npos, tail.c_str());
        const pid_t grandchild = std::stoi(tail.substr(at + 11));
        QVERIFY(grandchild > 0);
        // Killed with its parent; init collects it (a zombie or gone, never still sleeping).
        QTRY_VERIFY_WITH_TIMEOUT(processState(grandchild) == 0 || processState(grandchild) == 'Z', 2000);
        expectPasses(client);
    }

    void crashReportsSignalAndStderr()
    {
        RunnerClient client(fakeConfig());
        const auto r = client.evaluate(request("crash"));
        QVERIFY2(r.category() == Category::Crash, r.header.detail.c_str());
        QVERIFY(r.header.status == Status::Failed);
        QVERIFY2(q(r.header.detail).contains(u"killed by signal 11 (SIGSEGV)"_qs), r.header.detail.c_str());
        QVERIFY2(q(r.header.detail).contains(u"CUDA_ERROR_ILLEGAL_ADDRESS (700)"_qs), r.header.detail.c_str());
        expectPasses(client);
        QCOMPARE(client.starts(), 2);
    }

    // Issue 12: a runner killed from outside mid-job says which signal, in which phase, and that it
    // was not the candidate (the loop requeues it); a candidate's own crash is not from outside.
    void killedFromOutsideSaysSignalAndPhase()
    {
        RunnerClient client(fakeConfig());
        const pid_t pid = client.start().pid;
        JobOptions jo;
        bool killed = false;
        jo.progress = [&](const protocol::Progress&) {
            if (!killed)
                ::kill(pid, SIGKILL); // as a user or the OOM killer would, while the job runs
            killed = true;
        };
        const auto r = client.evaluate(request("hang"), jo);
        QVERIFY2(r.category() == Category::Crash, r.header.detail.c_str());
        QVERIFY2(q(r.header.detail).contains(u"killed by signal 9 (SIGKILL) during the job (in phase verify 1/4)"_qs),
            r.header.detail.c_str());
        QVERIFY(client.lastDeath());
        QCOMPARE(client.lastDeath()->signal, SIGKILL);
        QCOMPARE(QString::fromStdString(client.lastDeath()->phase), u"verify"_qs);
        QVERIFY(client.lastDeath()->fromOutside());
        expectPasses(client);
        QVERIFY(!client.lastDeath()); // reset by the next job

        const auto crash = client.evaluate(request("crash"));
        QVERIFY(client.lastDeath());
        QCOMPARE(client.lastDeath()->signal, SIGSEGV);
        QVERIFY(!client.lastDeath()->fromOutside());
        QVERIFY2(q(crash.header.detail).contains(u"(before any progress)"_qs), crash.header.detail.c_str());
    }

    void partialLineThenDeath()
    {
        RunnerClient client(fakeConfig());
        const auto r = client.evaluate(request("partial"));
        QVERIFY2(r.category() == Category::Crash, r.header.detail.c_str());
        QVERIFY2(q(r.header.detail).contains(u"exited with status 3"_qs), r.header.detail.c_str());
        QVERIFY2(q(r.header.detail).contains(u"part of a line"_qs), r.header.detail.c_str());
        expectPasses(client);
    }

    void garbageIsABadMessage_data()
    {
        QTest::addColumn<QString>("behaviour");
        QTest::addColumn<QString>("says");
        QTest::newRow("not JSON") << u"garbage"_qs << u"not protocol v1"_qs;
        QTest::newRow("another request's result") << u"wrong-id"_qs << u"answered request"_qs;
        QTest::newRow("malformed result") << u"bad-result"_qs << u"timing.cases[0].candidate.median_us"_qs;
    }
    void garbageIsABadMessage()
    {
        QFETCH(QString, behaviour);
        QFETCH(QString, says);
        RunnerClient client(fakeConfig());
        client.start();
        const auto pid = client.pid();
        const auto r = client.evaluate(request(behaviour.toStdString()));
        QVERIFY2(r.category() == Category::BadMessage, r.header.detail.c_str());
        QVERIFY(r.header.status == Status::Error);
        QVERIFY2(q(r.header.detail).contains(says), r.header.detail.c_str());
        QVERIFY(reaped(pid)); // killed, since nothing it says can be trusted any more
        expectPasses(client);
    }

    void cancelFromAnotherThread()
    {
        RunnerClient client(fakeConfig());
        client.start();
        std::atomic<bool> cancel { false };
        std::mutex mutex;
        std::condition_variable working;
        bool started = false;
        Clock::time_point cancelledAt;
        // The canceller waits until the job is really running (its first progress line).
        std::thread canceller([&] {
            std::unique_lock lock(mutex);
            working.wait(lock, [&] { return started; });
            cancelledAt = Clock::now();
            cancel = true;
        });
        JobOptions options;
        options.timeout = 10'000ms;
        options.cancel = &cancel;
        options.progress = [&](const Progress&) {
            std::lock_guard lock(mutex);
            started = true;
            working.notify_one();
        };
        const auto r = client.evaluate(request("hang"), options);
        const auto returned = Clock::now();
        canceller.join();
        QVERIFY2(r.category() == Category::Cancelled, r.header.detail.c_str());
        QVERIFY(r.header.status == Status::Error);
        const auto latency = std::chrono::duration_cast<std::chrono::milliseconds>(returned - cancelledAt).count();
        qInfo("cancelled job returned %lld ms after the flag was set", static_cast<long long>(latency));
        QVERIFY(latency <= 100);
        cancel = false;
        expectPasses(client);
    }

    void cancelledBeforeItStarts()
    {
        RunnerClient client(fakeConfig());
        std::atomic<bool> cancel { true };
        JobOptions options;
        options.cancel = &cancel;
        const auto r = client.evaluate(request("normal"), options);
        QVERIFY(r.category() == Category::Cancelled);
        QCOMPARE(client.starts(), 0);
    }

    void noHelloIsRunnerLost()
    {
        auto config = fakeConfig("no-hello");
        config.startTimeout = 300ms;
        RunnerClient client(config);
        const auto start = Clock::now();
        const auto r = client.evaluate(request("normal"));
        QVERIFY2(r.category() == Category::RunnerLost, r.header.detail.c_str());
        QVERIFY(r.header.status == Status::Error);
        QVERIFY2(q(r.header.detail).contains(u"no hello within 300 ms"_qs), r.header.detail.c_str());
        QVERIFY2(q(r.header.detail).contains(u"2 attempts"_qs), r.header.detail.c_str());
        QVERIFY2(q(r.header.detail).contains(u"stuck before hello"_qs), r.header.detail.c_str());
        QVERIFY(msSince(start) < 2000);
        QCOMPARE(client.starts(), 2);
        QVERIFY(!client.running());
        try {
            client.start();
            QFAIL("start() succeeded without a hello");
        } catch (const Error& e) {
            QCOMPARE(q(e.category()), u"runner.runner-lost"_qs);
        }
    }

    void runnerThatCannotStart_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("says");
        QTest::newRow("exits before hello") << u"exit-before-hello"_qs << QString() << u"exited with status 7"_qs;
        QTest::newRow("its stderr") << u"exit-before-hello"_qs << QString() << u"cannot open /dev/nvidia0"_qs;
        QTest::newRow("stub hello") << u"bad-hello"_qs << QString() << u"not a protocol v1 hello"_qs;
        QTest::newRow("no such file") << u"normal"_qs << u"/nonexistent/kernelloop-runner"_qs
                                      << u"No such file or directory"_qs;
    }
    void runnerThatCannotStart()
    {
        QFETCH(QString, mode);
        QFETCH(QString, path);
        QFETCH(QString, says);
        auto config = fakeConfig(mode.toStdString());
        if (!path.isEmpty())
            config.path = path.toStdString();
        RunnerClient client(config);
        const auto r = client.evaluate(request("normal"));
        QVERIFY2(r.category() == Category::RunnerLost, r.header.detail.c_str());
        QVERIFY2(q(r.header.detail).contains(says), r.header.detail.c_str());
        try {
            client.describe();
            QFAIL("describe() succeeded without a runner");
        } catch (const Error& e) {
            QCOMPARE(q(e.category()), u"runner.runner-lost"_qs);
        }
    }

    void runnerThatIgnoresShutdownIsKilled()
    {
        auto config = fakeConfig("ignore-shutdown");
        config.shutdownTimeout = 300ms;
        RunnerClient client(config);
        expectPasses(client);
        const auto pid = client.pid();
        const auto start = Clock::now();
        client.shutdown();
        const auto elapsed = msSince(start);
        QVERIFY(elapsed >= 300 && elapsed < 1500);
        QVERIFY(reaped(pid));
        QVERIFY(!client.running());
    }

    void destructorKillsARunnerThatIgnoresShutdown()
    {
        pid_t pid = -1;
        {
            auto config = fakeConfig("ignore-shutdown");
            config.shutdownTimeout = 200ms;
            RunnerClient client(config);
            client.start();
            pid = client.pid();
        }
        QVERIFY(reaped(pid));
    }

    void floodedStderrNeitherBlocksNorGrows()
    {
        RunnerClient client(fakeConfig());
        expectPasses(client);
        const auto r = client.evaluate(request("flood"));
        QVERIFY2(r.category() == Category::Passed, r.header.detail.c_str());
        const auto tail = client.stderrTail();
        QVERIFY(tail.size() <= 16 * 1024);
        QVERIFY(q(tail).endsWith(u"end of flood\n"_qs));
        QCOMPARE(client.starts(), 1);
    }

    void lostContextRestartsTheRunner()
    {
        RunnerClient client(fakeConfig());
        client.start();
        const auto pid = client.pid();
        const auto r = client.evaluate(request("context-lost"));
        QVERIFY(r.category() == Category::IllegalAddress);
        QVERIFY(r.header.status == Status::Failed);
        QVERIFY(reaped(pid));
        expectPasses(client);
        QCOMPARE(client.starts(), 2);
    }

    // The real runner answers a job that lost the context, then exits 3 (protocol::kExitContextLost);
    // the next request may already sit in the pipe of the leaving runner: it goes to a fresh one
    // instead of coming back as that runner's crash (seen on the H200 after the wall-clock guard).
    void aRequestTheLeavingRunnerNeverReadGoesToAFreshOne()
    {
        RunnerClient client(fakeConfig());
        client.start();
        const auto r = client.evaluate(request("context-lost-then-linger"));
        QVERIFY(r.category() == Category::Timeout);
        expectPasses(client); // sent while the first runner still lingered
        QCOMPARE(client.starts(), 2);

        // A runner that dies on the request itself is still that request's crash: sent once more, no more.
        const auto partial = client.evaluate(request("partial"));
        QVERIFY(partial.category() == Category::Crash);
        QVERIFY2(q(partial.header.detail).contains(QStringLiteral("part of a line")), partial.header.detail.c_str());
    }

    void runnerKilledBetweenJobsIsReplaced()
    {
        RunnerClient client(fakeConfig());
        expectPasses(client);
        const auto pid = client.pid();
        ::kill(pid, SIGKILL);
        QTRY_COMPARE_WITH_TIMEOUT(processState(pid), 'Z', 2000);
        expectPasses(client);
        QCOMPARE(client.starts(), 2);
        QVERIFY(reaped(pid));
    }

    void sigpipeNeverReachesTheCaller()
    {
        // The runner exits right after its hello: the request (bigger than any socket buffer)
        // meets a closed socket. Without MSG_NOSIGNAL this test process would die of SIGPIPE.
        RunnerClient client(fakeConfig("exit-after-hello"));
        const auto r = client.evaluate(request("normal", 8 << 20));
        QVERIFY2(r.category() == Category::Crash || r.category() == Category::RunnerLost, r.header.detail.c_str());
        QVERIFY2(q(r.header.detail).contains(u"exited with status 0"_qs), r.header.detail.c_str());
    }

    void noDeviceFromAFakeRunner()
    {
        RunnerClient client(fakeConfig("no-device"));
        QVERIFY(!client.start().deviceOk);
        try {
            client.describe();
            QFAIL("describe() gave a device");
        } catch (const Error& e) {
            QCOMPARE(q(e.category()), u"runner.no-device"_qs);
            QVERIFY(q(e.message()).contains(u"libcuda.so.1"_qs));
        }
        const auto r = client.evaluate(request("normal"));
        QVERIFY(r.category() == Category::NoDevice);
        QVERIFY(r.header.status == Status::Error);
    }

    void realRunnerWithoutAGpu()
    {
#ifndef KL_REAL_RUNNER
        QSKIP("kernelloop-runner is not built (KL_BUILD_RUNNER=OFF)");
#else
        RunnerConfig config;
        config.path = KL_REAL_RUNNER;
        config.startTimeout = 5000ms;
        config.describeTimeout = 5000ms;
        config.defaultJobTimeout = 5000ms;
        RunnerClient client(config);
        const auto hello = client.start();
        if (hello.deviceOk)
            QSKIP("this machine has a GPU: the no-device path is covered by the GPU suites instead");
        QVERIFY(!hello.detail.empty());
        qInfo("real runner hello: %s", hello.detail.c_str());
        try {
            client.describe();
            QFAIL("describe() gave a device on a machine without one");
        } catch (const Error& e) {
            QCOMPARE(q(e.category()), u"runner.no-device"_qs);
        }
        const auto r = client.evaluate(request("normal"));
        QVERIFY2(r.category() == Category::NoDevice, r.header.detail.c_str());
        QVERIFY(r.header.status == Status::Error);
        QVERIFY(!r.timing && !r.verification);
        const auto pid = client.pid();
        client.shutdown();
        QVERIFY(reaped(pid));
        QCOMPARE(client.starts(), 1);
#endif
    }

    void cleanupTestCase()
    {
        // Every runner any test started has been collected.
        errno = 0;
        QCOMPARE(::waitpid(-1, nullptr, WNOHANG), -1);
        QCOMPARE(errno, ECHILD);
    }
};

QTEST_GUILESS_MAIN(TestRunnerClient)
#include "test_runner_client.moc"

// The warm helper (python/kernelloop/warm_tool.py behind core/compile/warm_python_tool.h) with a real
// Python: a run gives what a cold run gives (reply, binary files, stderr, exit status, a crash's signal,
// the time limit), the server is reused across requests and survives a child's crash or timeout, a
// timeout ends the child's own children too, a server that dies or cannot start costs a cold run and
// nothing else, and requests at once get at most the servers allowed.
#include "core/compile/confinement.h"
#include "core/compile/python_tool.h"
#include "core/compile/warm_python_tool.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// The source tree: $KL_SOURCE_DIR where set (scripts/gpu-check.sh runs the carried binary elsewhere).
const fs::path kRoot = std::getenv("KL_SOURCE_DIR") ? std::getenv("KL_SOURCE_DIR") : KL_SOURCE_DIR;
const fs::path kProbe = kRoot / "tests/fixtures/compile/warm_probe.py";

std::string request(const std::string& action, int value = 0)
{
    return nlohmann::json { { "action", action }, { "value", value } }.dump();
}

nlohmann::json reply(const kl::PythonToolRun& run)
{
    if (run.reply.empty())
        return {};
    return nlohmann::json::parse(run.reply);
}

// Gone, or a zombie waiting for whoever adopted it.
bool ended(pid_t pid)
{
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string number, name, state;
    stat >> number >> name >> state;
    return !stat || state == "Z";
}

// Processes running `sleep SECONDS`.
int sleepers(const std::string& seconds)
{
    int found = 0;
    for (const auto& entry : fs::directory_iterator("/proc")) {
        std::ifstream in(entry.path() / "cmdline");
        std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (cmdline == "sleep" + std::string(1, '\0') + seconds + std::string(1, '\0'))
            ++found;
    }
    return found;
}

} // namespace

class WarmPythonToolTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        qputenv("KL_WARM_TOOL_DIR", QByteArray::fromStdString((kRoot / "python/kernelloop").string()));
        QVERIFY(fs::is_regular_file(kProbe));
    }

    void sameAsColdAndReused()
    {
        kl::WarmPythonTool warm("python3", kProbe, 1);
        const auto cold = kl::runPythonTool("python3", kProbe, request("echo", 7), 30s);
        const auto first = warm.run(request("echo", 7), 30s);
        const auto second = warm.run(request("echo", 8), 30s);
        QVERIFY(cold.started && first.started && second.started);
        QCOMPARE(first.exitStatus, cold.exitStatus);
        QCOMPARE(first.files, cold.files); // the binary file, byte for byte
        QCOMPARE(first.files.at("blob.bin"),
            std::string("\x00\x01"
                        "binary\xff",
                9));
        QCOMPARE(first.stderrText, cold.stderrText); // stdout and stderr both, in order
        QCOMPARE(reply(first)["value"].get<int>(), 7);
        QCOMPARE(reply(second)["value"].get<int>(), 8);
        QCOMPARE(reply(cold)["serving"].get<bool>(), false);
        QCOMPARE(reply(first)["serving"].get<bool>(), true);
        // One server ran both: each request's process is a child of the same server, not of this test.
        QCOMPARE(reply(first)["ppid"].get<int>(), reply(second)["ppid"].get<int>());
        QVERIFY(reply(first)["ppid"].get<int>() != int(getpid()));
        QCOMPARE(warm.serversStarted(), 1);
        QCOMPARE(warm.coldFallbacks(), 0);
    }

    void exitStatusAndSignalAsCold()
    {
        kl::WarmPythonTool warm("python3", kProbe, 1);
        for (const char* action : { "exit3", "crash" }) {
            const auto cold = kl::runPythonTool("python3", kProbe, request(action), 30s);
            const auto hot = warm.run(request(action), 30s);
            QCOMPARE(hot.exitStatus, cold.exitStatus);
            QCOMPARE(hot.reply.empty(), cold.reply.empty());
        }
        QCOMPARE(kl::runPythonTool("python3", kProbe, request("crash"), 30s).exitStatus, 128 + SIGSEGV);
        // The crash took its child, not the server.
        QCOMPARE(reply(warm.run(request("echo", 1), 30s))["value"].get<int>(), 1);
        QCOMPARE(warm.serversStarted(), 1);
    }

    void timeoutEndsTheChildAndItsChildren()
    {
        QTemporaryDir dir;
        const std::string pidFile = (fs::path(dir.path().toStdString()) / "grandchild.pid").string();
        kl::WarmPythonTool warm("python3", kProbe, 1);
        const auto echo = warm.run(request("echo"), 30s);
        auto spawn = nlohmann::json::parse(request("spawn-and-hang"));
        spawn["pid_file"] = pidFile;
        const auto hung = warm.run(spawn.dump(), 1500ms);
        QVERIFY(hung.timedOut);
        QCOMPARE(hung.exitStatus, 128 + SIGKILL);
        pid_t grandchild = 0;
        std::ifstream(pidFile) >> grandchild;
        QVERIFY(grandchild > 0);
        QTRY_VERIFY_WITH_TIMEOUT(ended(grandchild), 5000);
        const auto after = warm.run(request("echo", 2), 30s); // the same server goes on
        QCOMPARE(reply(after)["ppid"].get<int>(), reply(echo)["ppid"].get<int>());
    }

    // A process the request's child leaves behind, detached in its own session, is the server's (a
    // subreaper) when the child ends: killed before "ended", and counted.
    void straysAreKilledAndCounted()
    {
        kl::WarmPythonTool warm("python3", kProbe, 1);
        auto orphan = nlohmann::json::parse(request("orphan", 4));
        const std::string seconds = std::to_string(6000 + getpid() % 1000) + ".5";
        orphan["sleep"] = seconds;
        const auto run = warm.run(orphan.dump(), 30s);
        QCOMPARE(run.exitStatus, 0);
        QCOMPARE(run.strays, 1);
        QCOMPARE(reply(run)["value"].get<int>(), 4);
        QCOMPARE(sleepers(seconds), 0);
        QCOMPARE(warm.run(request("echo"), 30s).strays, 0);
    }

    // In the sandbox a request's child cannot open its server's descriptors (the server is not dumpable
    // and the sandbox has no capabilities), so it cannot write a protocol line of its own; and the
    // client never signals a pid a reply names, whatever the line says.
    void sandboxedChildCannotForgeReplies()
    {
        if (kl::modelCodePolicy().mode != kl::ConfinementMode::Sandboxed)
            QSKIP(("bubblewrap cannot make a sandbox here: " + kl::modelCodePolicy().detail).c_str());
        kl::WarmPythonTool warm("python3", kProbe, 1, kl::ConfinementMode::Sandboxed);
        const auto forged = warm.run(request("forge", 1), 30s);
        QVERIFY2(forged.exitStatus == 0 && !forged.reply.empty(), forged.stderrText.c_str());
        QCOMPARE(reply(forged)["opened"].get<int>(), 0);
        QCOMPARE(reply(forged)["serving"].get<bool>(), true);
        const auto next = warm.run(request("echo", 2), 30s); // the protocol is intact
        QCOMPARE(reply(next)["value"].get<int>(), 2);
        QCOMPARE(warm.coldFallbacks(), 0);
    }

    // A client killed with -9 closes the server's input: the server kills the request's child (and what
    // that started) and ends, leaving nothing running.
    void endOfInputEndsAHungChild()
    {
        QTemporaryDir dir;
        const std::string pidFile = (fs::path(dir.path().toStdString()) / "grandchild.pid").string();
        const std::string requestFile = (fs::path(dir.path().toStdString()) / "request.json").string();
        fs::create_directory(fs::path(dir.path().toStdString()) / "out");
        auto spawn = nlohmann::json::parse(request("spawn-and-hang"));
        spawn["pid_file"] = pidFile;
        std::ofstream(requestFile) << spawn.dump();
        int in[2], out[2];
        QVERIFY(pipe(in) == 0 && pipe(out) == 0);
        const pid_t server = fork();
        if (server == 0) {
            dup2(in[0], 0);
            dup2(out[1], 1);
            close(in[1]);
            close(out[0]);
            execlp("python3", "python3", kProbe.c_str(), "--serve", nullptr);
            _exit(127);
        }
        close(in[0]);
        close(out[1]);
        FILE* replies = fdopen(out[0], "r");
        char line[256] = {};
        QVERIFY(fgets(line, sizeof line, replies) && std::string(line) == "ready\n");
        const std::string ask = requestFile + "\t" + (fs::path(dir.path().toStdString()) / "out").string() + "\t"
            + (fs::path(dir.path().toStdString()) / "stderr.txt").string() + "\t600000\n";
        QVERIFY(write(in[1], ask.data(), ask.size()) == ssize_t(ask.size()));
        QVERIFY(fgets(line, sizeof line, replies) && std::string(line).rfind("started ", 0) == 0);
        const pid_t child = pid_t(std::atoi(line + 8));
        QTRY_VERIFY_WITH_TIMEOUT(fs::exists(pidFile) && fs::file_size(pidFile) > 0, 10000);
        pid_t grandchild = 0;
        std::ifstream(pidFile) >> grandchild;
        QVERIFY(child > 0 && grandchild > 0);
        close(in[1]); // what a client killed with -9 does
        int status = 0; // reaped here, or already (a SIGCHLD handler of the test library may have)
        QTRY_VERIFY_WITH_TIMEOUT(waitpid(server, &status, WNOHANG) == server || ended(server), 5000);
        QTRY_VERIFY_WITH_TIMEOUT(ended(child) && ended(grandchild), 5000);
        fclose(replies);
    }

    void deadServerCostsAColdRun()
    {
        kl::WarmPythonTool warm("python3", kProbe, 1);
        QCOMPARE(warm.run(request("echo"), 30s).exitStatus, 0);
        const auto killed = warm.run(request("kill-server", 5), 30s);
        QVERIFY(killed.started);
        QCOMPARE(killed.exitStatus, 0);
        QCOMPARE(reply(killed)["serving"].get<bool>(), false); // answered by a cold run
        QCOMPARE(reply(killed)["value"].get<int>(), 5);
        QCOMPARE(warm.coldFallbacks(), 1);
        QCOMPARE(reply(warm.run(request("echo", 6), 30s))["serving"].get<bool>(), true); // a new server
        QCOMPARE(warm.serversStarted(), 2);
    }

    void noInterpreterIsTheColdMessage()
    {
        kl::WarmPythonTool warm("/nonexistent/python3", kProbe, 2);
        const auto run = warm.run(request("echo"), 10s);
        const auto cold = kl::runPythonTool("/nonexistent/python3", kProbe, request("echo"), 10s);
        QVERIFY(!run.started);
        QCOMPARE(run.stderrText, cold.stderrText);
        QVERIFY(run.stderrText.find("cannot run /nonexistent/python3") != std::string::npos);
        QCOMPARE(warm.serversStarted(), 0);
        QVERIFY(!warm.run(request("echo"), 10s).started); // and stays cold without trying again
        QCOMPARE(warm.coldFallbacks(), 2);
    }

    void requestsAtOnceShareTheServersAllowed()
    {
        kl::WarmPythonTool warm("python3", kProbe, 2);
        std::vector<nlohmann::json> replies(6);
        std::vector<std::thread> threads;
        for (int i = 0; i < 6; ++i)
            threads.emplace_back([&, i] { replies[std::size_t(i)] = reply(warm.run(request("echo", i), 60s)); });
        for (auto& t : threads)
            t.join();
        std::set<int> servers;
        for (int i = 0; i < 6; ++i) {
            QCOMPARE(replies[std::size_t(i)]["value"].get<int>(), i);
            servers.insert(replies[std::size_t(i)]["ppid"].get<int>());
        }
        QVERIFY2(warm.serversStarted() >= 1 && warm.serversStarted() <= 2,
            (std::to_string(warm.serversStarted()) + " servers, " + std::to_string(warm.coldFallbacks()) + " cold")
                .c_str());
        QVERIFY(int(servers.size()) <= warm.serversStarted()); // a server started late may have served none
        QCOMPARE(warm.coldFallbacks(), 0);
    }

    // A second server starts in the background: a request does not wait for its start (5 s here) when
    // the busy one frees first.
    void growthDoesNotMakeRequestsWait()
    {
        qputenv("KL_PROBE_START_S", "5");
        kl::WarmPythonTool warm("python3", kProbe, 2);
        const int first = reply(warm.run(request("echo"), 30s))["ppid"].get<int>();
        std::vector<int> servedBy(2);
        std::vector<std::thread> threads;
        for (int i = 0; i < 2; ++i)
            threads.emplace_back(
                [&, i] { servedBy[std::size_t(i)] = reply(warm.run(request("echo", i), 30s))["ppid"].get<int>(); });
        for (auto& t : threads)
            t.join();
        QCOMPARE(servedBy[0], first);
        QCOMPARE(servedBy[1], first);
        qunsetenv("KL_PROBE_START_S");
        QTRY_COMPARE_WITH_TIMEOUT(warm.serversStarted(), 2, 15000); // and the pool did grow
    }
};

QTEST_GUILESS_MAIN(WarmPythonToolTest)
#include "test_warm_python_tool.moc"

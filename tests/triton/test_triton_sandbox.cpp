// The sandbox for model-written Python (core/compile/confinement.h, python/kernelloop/confine.py),
// through the real Triton helper, the real warm server and cold run, and real bubblewrap: hostile
// candidates (tests/fixtures/sandbox/hostile/*.py, "# expect: CATEGORY" on their first line) each end
// in their own category with nothing written, read, connected or left running, and no variable of
// ours reaching them. Where Triton is not installed (CI) a stand-in `triton` module
// (tests/fixtures/sandbox/standin) takes its place: the helper, the sandbox and the candidate's module
// are real, only the code generation is not. On the GPU machine real Triton compiles them.
#include "core/compile/compile_cache.h"
#include "core/compile/compiler.h"
#include "core/compile/confinement.h"
#include "core/compile/triton_compiler.h"
#include "core/model/candidate.h"
#include "core/model/child_environment.h"
#include "core/model/problem.h"
#include "tests/scoped_env.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

#include <arpa/inet.h>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <netinet/in.h>
#include <poll.h>
#include <random>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace kl;

namespace {

// The source tree: $KL_SOURCE_DIR where set (scripts/gpu-check.sh runs the carried binary elsewhere).
const fs::path kRoot = std::getenv("KL_SOURCE_DIR") ? std::getenv("KL_SOURCE_DIR") : KL_SOURCE_DIR;
const fs::path kHostile = kRoot / "tests/fixtures/sandbox/hostile";
const fs::path kStandIn = kRoot / "tests/fixtures/sandbox/standin";

std::string readFile(const fs::path& path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to)
{
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

bool realTriton() { return std::system("python3 -c 'import triton, triton.compiler' >/dev/null 2>&1") == 0; }

// Every process whose command line holds `needle` (its arguments joined by spaces).
int processesWith(const std::string& needle)
{
    int found = 0;
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::string cmdline = readFile(entry.path() / "cmdline");
        std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
        if (cmdline.find(needle) != std::string::npos && cmdline.find("test_triton_sandbox") == std::string::npos)
            ++found;
    }
    return found;
}

std::string everything(const CompileResult& r)
{
    std::string text = r.summary + "\n" + r.log + "\n" + r.ptx;
    for (const auto& d : r.diagnostics)
        text += "\n" + d.message;
    return text;
}

} // namespace

class TestTritonSandbox : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid() && m_home.isValid());
        m_policy = modelCodePolicy();
        m_realTriton = realTriton();
        if (!m_realTriton) // the stand-in, first on the path; a real Triton is never shadowed
            ::setenv("PYTHONPATH", kStandIn.c_str(), 1);
        qInfo("Triton: %s", m_realTriton ? "real" : "the stand-in (tests/fixtures/sandbox/standin)");
        // Read by the servers when they start: set before the first compile.
        // Real Triton's cold run imports it (seconds) and its LLVM needs room: larger bounds there.
        ::setenv("KL_SANDBOX_MEMORY_MB", m_realTriton ? "2048" : "512", 1);
        ::setenv("KL_TRITON_COMPILE_LIMIT_S", m_realTriton ? "40" : "6", 1);
        ::setenv("HOME", m_home.path().toLocal8Bit().constData(), 1);
        std::mt19937_64 random { std::random_device {}() };
        m_secret = "kl-secret-" + std::to_string(random());
        m_key = "sk-kl-test-" + std::to_string(random());
        ::setenv("KL_TEST_API_KEY", m_key.c_str(), 1); // secret by its name
        ::setenv("KL_TEST_LLM_VARIABLE", m_key.c_str(), 1); // secret because the key loader read it
        markSecretVariable("KL_TEST_LLM_VARIABLE");
        std::ofstream(fs::path(m_home.path().toStdString()) / ".kl-secret") << m_secret;
        m_sleep = std::to_string(7000 + random() % 1000) + ".25";
        m_problem = loadProblem(kRoot / "resources/examples/layernorm_gelu_triton/problem.json");

        m_listener = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address {};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        QVERIFY(bind(m_listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
        QVERIFY(listen(m_listener, 4) == 0);
        socklen_t length = sizeof address;
        QVERIFY(getsockname(m_listener, reinterpret_cast<sockaddr*>(&address), &length) == 0);
        m_port = ntohs(address.sin_port);
    }

    void cleanupTestCase()
    {
        if (m_listener >= 0)
            close(m_listener);
    }

    void hostile_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("warm");
        for (const auto& entry : fs::directory_iterator(kHostile))
            for (const bool warm : { true, false }) {
                const std::string name = entry.path().filename().string();
                QTest::newRow((name + (warm ? " warm" : " cold")).c_str()) << QString::fromStdString(name) << warm;
            }
    }

    void hostile()
    {
        QFETCH(QString, file);
        QFETCH(bool, warm);
        if (m_policy.mode
            != ConfinementMode::Sandboxed) // installed by scripts/install-deps.sh; a container may forbid it
            QSKIP(("bubblewrap cannot make a sandbox on this machine: " + m_policy.detail).c_str());
        const test::ScopedEnv cold { { "KL_TRITON_WARM", warm ? "1" : "0" } };
        const std::string target
            = (fs::path(m_dir.path().toStdString()) / ("written-" + file.toStdString() + (warm ? "-warm" : "-cold")))
                  .string();
        const std::string beside = (kRoot / ("kl-sandbox-canary-" + std::to_string(getpid()))).string();
        const bool swallowed = file.startsWith(QStringLiteral("write_swallowed"));
        const CompileResult r = compile(file.toStdString(), swallowed ? target : beside);
        const std::string first = readFile(kHostile / file.toStdString());
        const std::string expected = first.substr(10, first.find('\n') - 10); // "# expect: " CATEGORY
        const std::string kind = r.ok ? "ok" : compileErrorKindName(r.kind);
        QVERIFY2(kind == expected,
            (file.toStdString() + ": expected " + expected + ", got " + kind + ": " + r.summary).c_str());
        if (!r.ok)
            QVERIFY2(r.summary.rfind(expected, 0) == 0, r.summary.c_str());
        // Nothing written, read, connected or left running; no variable of ours seen.
        QVERIFY(!fs::exists(target));
        QVERIFY(!fs::exists(beside));
        const std::string text = everything(r);
        QVERIFY2(text.find(m_secret) == std::string::npos, text.c_str());
        QVERIFY2(text.find(m_key) == std::string::npos, "the candidate saw KL_TEST_API_KEY");
        pollfd p { m_listener, POLLIN, 0 };
        QCOMPARE(poll(&p, 1, 0), 0); // no connection waits on the listener
        QCOMPARE(processesWith("sleep " + m_sleep), 0);
        if (file == QStringLiteral("prints_env.py"))
            QVERIFY2(text.find("PATH") != std::string::npos, text.c_str()); // it did print an environment
    }

    // A compile that succeeded is not run again in this process (Triton's own cache folder is private to
    // each sandboxed compile); one that was refused is run again, and refused again.
    void repeatedCompileIsCached()
    {
        if (m_policy.mode != ConfinementMode::Sandboxed)
            QSKIP(("bubblewrap cannot make a sandbox on this machine: " + m_policy.detail).c_str());
        const CompileResult first = compile("good.py", {}, true);
        const CompileResult second = compile("good.py", {}, true);
        QVERIFY2(first.ok && second.ok, (first.summary + " / " + second.summary).c_str());
        QCOMPARE(second.cache, CacheUse::MemoryHit);
        QCOMPARE(second.cubin, first.cubin);
        const std::string target = (fs::path(m_dir.path().toStdString()) / "written-again").string();
        const CompileResult refused = compile("write_outside.py", target, true);
        const CompileResult again = compile("write_outside.py", target, true);
        QCOMPARE(again.kind, CompileErrorKind::SandboxWrite);
        QVERIFY(again.cache != CacheUse::MemoryHit);
        QCOMPARE(refused.kind, CompileErrorKind::SandboxWrite);
    }

    // Without bubblewrap, model-written Python is refused, categorised, and runs only on the opt-in,
    // still with the allow-listed environment and the in-process refusals.
    void withoutBubblewrap()
    {
        const test::ScopedEnv gone { { "KL_BWRAP", "/nonexistent/bwrap" } };
        QCOMPARE(modelCodePolicy().mode, ConfinementMode::Refused);
        const CompileResult refused = compile("good.py", {});
        QCOMPARE(QString::fromLatin1(compileErrorKindName(refused.kind)), QStringLiteral("sandbox-unavailable"));
        QVERIFY2(refused.summary.find("bubblewrap") != std::string::npos
                && refused.summary.find("--allow-unconfined-python") != std::string::npos,
            refused.summary.c_str());
        setUnconfinedPythonAllowed(true);
        QCOMPARE(modelCodePolicy().mode, ConfinementMode::Unconfined);
        const CompileResult good = compile("good.py", {});
        const std::string target = (fs::path(m_dir.path().toStdString()) / "written-unconfined").string();
        const CompileResult write = compile("write_outside.py", target);
        const CompileResult env = compile("prints_env.py", {});
        setUnconfinedPythonAllowed(false);
        QVERIFY2(good.ok, good.summary.c_str());
        QCOMPARE(QString::fromLatin1(compileErrorKindName(write.kind)), QStringLiteral("sandbox-write"));
        QVERIFY(!fs::exists(target));
        QVERIFY2(everything(env).find(m_key) == std::string::npos, "the unconfined candidate saw KL_TEST_API_KEY");
        QVERIFY2(everything(env).find("PATH") != std::string::npos, env.summary.c_str());
    }

private:
    CompileResult compile(const std::string& file, const std::string& target, bool again = false)
    {
        std::string source = readFile(kHostile / file);
        source = replaced(source, "@TARGET@", target);
        source = replaced(source, "@SECRET@", (fs::path(m_home.path().toStdString()) / ".kl-secret").string());
        source = replaced(source, "@PORT@", std::to_string(m_port));
        source = replaced(source, "@SLEEP@", m_sleep);
        if (!again) // each compile new to the cache of compiled replies (triton_compiler.cpp)
            source += "# compile " + std::to_string(++m_compiles) + "\n";
        const fs::path path = fs::path(m_dir.path().toStdString()) / file;
        std::ofstream(path) << source;
        const Candidate candidate = loadCandidate(path.string());
        CompileOptions options;
        options.arch = "sm_90";
        options.tritonSignature = tritonSignature(m_problem, candidate);
        return compileCandidate(candidate, options);
    }

    QTemporaryDir m_dir;
    QTemporaryDir m_home;
    Problem m_problem;
    ConfinementPolicy m_policy;
    bool m_realTriton = false;
    std::string m_secret, m_key, m_sleep;
    int m_listener = -1;
    int m_port = 0;
    int m_compiles = 0;
};

QTEST_GUILESS_MAIN(TestTritonSandbox)
#include "test_triton_sandbox.moc"

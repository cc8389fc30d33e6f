// A PyTorch operator in, a verified kernel out, with no kernel to start from: a KernelBench file
// imported by the real CLI (Debian's CPU PyTorch), its problem left without a baseline (PyTorch
// eager is the time to beat), and the loop asking a model (real HTTP over loopback, a scripted
// model) for the first kernel, the debugger for a fix, then improving the first kernel that
// passed; real NVRTC, a real SQLite file and the runner double at the process boundary, which
// times eager at 150 us as the real runner's worker would. Also: the llm+tuner hybrid asks its
// model even when the tuner's rounds on the baseline gain nothing.
#include "core/llm/llm_proposer.h"
#include "core/loop/tuning_session.h"
#include "core/model/error.h"
#include "core/model/problem.h"
#include "core/propose/hybrid_proposer.h"
#include "core/propose/starting_kernel.h"
#include "core/runnerclient/runner_client.h"
#include "core/store/store.h"
#include "core/tuner/tuner.h"
#include "tests/loop/loop_support.h"
#include "tests/loop/scripted_model.h"

#include "tests/kernelbench/kernelbench_cli.h"
#include "tests/llm/golden_text.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>

using kl::test::ReplayServer;
using kl::test::ScriptedModel;

namespace {

// A first kernel as a model would write it for the imported GELU (x, y: f32 [batch_size, dim]).
const char* kGelu = R"(## Plan
One thread per element, the exact erf form in fp32.

## Predicted effect
1.2x

```cuda
// @kl tunable THREADS = 256 in 128, 256, 512
// @kl launch gelu grid=(cdiv(batch_size * dim, THREADS)) block=(THREADS) args=(x, y, batch_size * dim as i64)
extern "C" __global__ void gelu(const float* x, float* y, long long n)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
    }
}
```
)";

std::string broken()
{
    std::string text = kGelu;
    const std::string from = "const float v = x[i];";
    text.replace(text.find(from), from.size(), "const float v = x[i]"); // NVRTC: expected a ";"
    return text;
}

std::string fixed()
{
    std::string text = kGelu;
    text.replace(text.find("```cuda\n") + 8, 0, "// Fixed: the load lacked its semicolon.\n");
    return "The compiler stopped at a missing semicolon.\n\n" + text;
}

// The imported problem folder (kernelloop-cli import-kernelbench, no --baseline).
QString importGelu(const QString& into)
{
    const auto run = kbtest::importKernelBench(QStringLiteral(KL_SOURCE_DIR "/resources/kernelbench/gelu.py"), into);
    if (run.exitCode != 0)
        qWarning("%s", qPrintable(run.err));
    return run.exitCode == 0 ? into + QStringLiteral("/problem.json") : QString();
}

std::string userPrompt(const kl::test::SeenRequest& r)
{
    const auto body = nlohmann::json::parse(r.body);
    for (const auto& m : body.value("messages", nlohmann::json::array()))
        if (m.value("role", "") == "user")
            return m.value("content", "");
    return {};
}

} // namespace

class TestFirstKernel : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void modelWritesTheFirstKernel()
    {
        QTemporaryDir tmp;
        const auto problemFile = importGelu(tmp.path() + QStringLiteral("/gelu"));
        QVERIFY2(!problemFile.isEmpty(), "import-kernelbench failed (needs Debian's python3-torch)");
        auto problem = kl::loadProblem(problemFile.toStdString());
        QVERIFY(!problem.hasBaselineKernel());
        problem.preferredLanguage = kl::CandidateLanguage::Cuda; // NVRTC is what CI compiles with

        ReplayServer server;
        ScriptedModel model(server,
            { { "first_kernel", { broken() } }, { "debugger", { fixed() } }, { "planner", {} }, { "coder", {} } });
        auto store = kl::store::Store::open((tmp.path() + QStringLiteral("/kl.db")).toStdString());
        kl::RunnerClient runner(kl::test::modelRunner());
        auto config = kl::test::loopConfig(3, 1, "llm:replay");
        kl::TuningSession session(problem, store, runner, config);
        kl::LlmProposer proposer(kl::test::client(server, kl::Provider::OpenAi), kl::PromptLibrary::builtIn());
        const auto summary = session.run(proposer);

        const auto roles = model.roles();
        QVERIFY2(roles.size() >= 2, std::to_string(roles.size()).c_str());
        QCOMPARE(roles[0], std::string("first_kernel"));
        QCOMPARE(roles[1], std::string("debugger"));
        const auto requests = server.requests();
        // The first request carries the specification: the reference's source and each tensor's dtype,
        // shape and strides at the timed size; pinned by a golden file (KL_UPDATE_GOLDEN=1 rewrites it).
        const auto first = userPrompt(requests.front());
        QVERIFY2(first.find("def reference(x") != std::string::npos, first.c_str());
        QVERIFY2(first.find("x f32 shape [4096, 8192] strides [8192, 1] (input)") != std::string::npos, first.c_str());
        QVERIFY2(first.find("y f32 shape [4096, 8192] strides [8192, 1] (output)") != std::string::npos, first.c_str());
        const auto golden = kl::test::goldenText(
            std::string(KL_SOURCE_DIR) + "/tests/fixtures/llm/prompts/first_kernel_gelu.user.md", first);
        QVERIFY2(golden == first, kl::test::firstDifference(golden, first).c_str());
        // The debugger sees the compiler's error and the specification still.
        const auto debug = userPrompt(requests[1]);
        QVERIFY2(debug.find("compile.") != std::string::npos, debug.c_str());
        QVERIFY2(debug.find("def reference(x") != std::string::npos, debug.c_str());

        // Stored: the failed first kernel, then the fix, kept, its speedup against PyTorch eager.
        QVERIFY(summary.best.has_value());
        QVERIFY(!summary.baseline.has_value());
        QCOMPARE(summary.best->index, 2);
        QVERIFY(summary.best->medianUs.has_value() && summary.best->speedup.has_value());
        QVERIFY(std::abs(*summary.best->speedup - 150.0 / *summary.best->medianUs) < 1e-3);
        const auto one = store.iteration(summary.sessionId, 1);
        QVERIFY(one && one->result);
        QVERIFY2(one->result->category.rfind("compile.", 0) == 0, one->result->category.c_str());
        const auto two = store.iteration(summary.sessionId, 2);
        QVERIFY(two && two->result && two->result->category == "passed");
        QVERIFY(two->result->timing && !two->result->timing->cases.empty() && two->result->timing->cases[0].eager);
    }

    // No kernel and a proposer that cannot write one: refused before anything is stored.
    void tunerAloneRefusedWithoutKernel()
    {
        QTemporaryDir tmp;
        const auto problemFile = importGelu(tmp.path() + QStringLiteral("/gelu"));
        QVERIFY(!problemFile.isEmpty());
        const auto problem = kl::loadProblem(problemFile.toStdString());
        auto store = kl::store::Store::open((tmp.path() + QStringLiteral("/kl.db")).toStdString());
        kl::RunnerClient runner(kl::test::modelRunner());
        kl::TuningSession session(problem, store, runner, kl::test::loopConfig(2, 1, "tuner:auto"));
        kl::Tuner tuner(kl::TunerOptions {});
        try {
            session.run(tuner);
            QFAIL("a tuner with no kernel ran");
        } catch (const kl::Error& e) {
            QCOMPARE(e.category(), std::string("problem.no-kernel"));
            QVERIFY(e.message().find("--start inductor") != std::string::npos);
        }
        QVERIFY(store.listSessions().empty()); // nothing stored, no session left running
    }

    // A starting kernel (as --start FILE or torch.compile's gives it) is round 1, timed against eager;
    // then the tuner sweeps its tunables.
    void startingKernelThenTuner()
    {
        QTemporaryDir tmp;
        const auto problemFile = importGelu(tmp.path() + QStringLiteral("/gelu"));
        QVERIFY(!problemFile.isEmpty());
        auto problem = kl::loadProblem(problemFile.toStdString());
        std::string source = kGelu;
        source = source.substr(source.find("```cuda\n") + 8);
        source = source.substr(0, source.find("```"));
        auto start = kl::parseCandidate(source, "start.cu");
        auto store = kl::store::Store::open((tmp.path() + QStringLiteral("/kl.db")).toStdString());
        kl::RunnerClient runner(kl::test::modelRunner());
        kl::TuningSession session(problem, store, runner, kl::test::loopConfig(3, 1, "tuner:auto"));
        kl::StartingKernel proposer(
            std::make_unique<kl::Tuner>(kl::TunerOptions {}), start, "inductor", "torch.compile's kernel");
        const auto summary = session.run(proposer);
        QVERIFY(summary.best.has_value());
        const auto one = store.iteration(summary.sessionId, 1);
        QVERIFY(one && one->result && one->result->category == "passed");
        QCOMPARE(one->candidate->proposerDetail, std::string("inductor"));
        const auto two = store.iteration(summary.sessionId, 2);
        QVERIFY(two && two->candidate);
        QCOMPARE(two->candidate->source, start.source); // the tuner sweeps the starting kernel's tunables
        QVERIFY(two->candidate->tunables != one->candidate->tunables);
    }

    // llm+tuner on a problem whose tuner gains nothing (every candidate times the same): the tuner's
    // rounds on the baseline do not count toward patience, so the model is asked (before this, two
    // flat tuner rounds ended the session with no request sent).
    void hybridAsksTheModel()
    {
        qputenv("KL_MODEL_RUNNER_FLAT", "1");
        QTemporaryDir tmp;
        ReplayServer server;
        ScriptedModel model(server, { { "planner", {} }, { "coder", {} } });
        auto store = kl::store::Store::open((tmp.path() + QStringLiteral("/kl.db")).toStdString());
        kl::RunnerClient runner(kl::test::modelRunner());
        auto config = kl::test::loopConfig(8, 1, "llm+tuner:replay");
        config.stop.patience = 2; // the default
        const auto problem = kl::test::layernormProblem();
        kl::TuningSession session(problem, store, runner, config);
        kl::HybridProposer proposer(std::make_unique<kl::LlmProposer>(
                                        kl::test::client(server, kl::Provider::OpenAi), kl::PromptLibrary::builtIn()),
            std::make_unique<kl::Tuner>(kl::TunerOptions {}), 2);
        const auto summary = session.run(proposer);
        qunsetenv("KL_MODEL_RUNNER_FLAT");
        QVERIFY2(!server.requests().empty(), summary.stopReason.c_str());
        QCOMPARE(model.roles().front(), std::string("planner"));
    }
};

QTEST_GUILESS_MAIN(TestFirstKernel)
#include "test_first_kernel.moc"

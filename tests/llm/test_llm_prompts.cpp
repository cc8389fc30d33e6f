// Prompt templates: every role renders the payload it should see, the coder learns the candidate
// format, empty parts leave no stray headings, and a user's folder overrides templates safely.
#include "core/llm/prompt_library.h"
#include "core/model/error.h"

#include <QtTest>

#include <QTemporaryDir>

#include <fstream>

using namespace kl;

namespace {

const std::string kSourceDir = KL_SOURCE_DIR;

PromptPayload layerNormPayload()
{
    const auto problem = loadProblem(kSourceDir + "/resources/examples/layernorm_gelu/problem.json");
    PromptPayload p;
    p.problem = describeProblem(problem);
    p.best = describeCandidate(problem.baseline, { { "THREADS", 256 }, { "VEC", 8 }, { "CACHE", 1 } });
    p.state.iteration = 3;
    p.state.currentMicros = 69.6;
    p.state.baselineMicros = 135.0;
    p.state.speedup = 135.0 / 69.6;
    p.state.correctness = "verified on 1 main and 7 fuzz size sets";
    p.state.gigabytesPerSecond = 1929;
    p.state.percentOfCeiling = 45;
    p.state.registers = 40;
    p.state.sharedBytes = 128;
    p.state.occupancy = 1.0;
    p.state.occupancyLimiter = "warps";
    p.state.achievedOccupancy = 0.81;
    p.state.primaryStall = "long_scoreboard (41% of stalls)";
    p.findings.push_back({ "dram-under-ceiling", "high", "DRAM throughput is 45% of the measured copy ceiling",
        "1929 GB/s of 4250 GB/s", "more bytes in flight per SM: wider loads, more rows per block" });
    p.hardware.device = "NVIDIA H200";
    p.hardware.arch = "sm_90";
    p.hardware.smCount = 132;
    p.hardware.l2Bytes = 60LL << 20;
    p.hardware.sharedPerSmBytes = 228LL << 10;
    p.hardware.sharedPerBlockOptInBytes = 227LL << 10;
    p.hardware.registersPerSm = 65536;
    p.hardware.maxWarpsPerSm = 64;
    p.hardware.dramGigabytesPerSecond = 4250;
    p.recent.push_back({ 2, "llm", "verify-failed", "vectorise with 16-byte loads", std::nullopt, std::nullopt,
        "VEC 1 -> 8 without an alignment check",
        "max abs error 3.1 at index (12, 4096), 4097 elements off; expected 0.412 got 0.000" });
    p.steering = "Keep one block per row; try Welford for the statistics.";
    p.rejections.push_back("iteration 1: uses atomicAdd on the output, which is not deterministic");
    p.examples.push_back({ "softmax_bf16", "1.9x over its baseline, verified", "// @kl launch softmax ...\n" });
    p.plan = "Load 16 bytes per access and keep the row in registers.";
    p.failure = FailureFacts { "verify.mismatch", "max abs error 3.1 at index (12, 4096)", "// the failing source\n" };
    return p;
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

} // namespace

class TestLlmPrompts : public QObject {
    Q_OBJECT

private slots:
    void builtInTemplatesCoverEveryRole()
    {
        const auto library = PromptLibrary::builtIn();
        for (auto role : { PromptRole::Planner, PromptRole::Coder, PromptRole::Debugger, PromptRole::Single }) {
            const std::string base(promptRoleName(role));
            QCOMPARE(library.origin(base + ".system.md"), std::string("built-in"));
            QVERIFY(!library.templateText(base + ".user.md").empty());
        }
        QVERIFY(!library.templateText("candidate_format.partial.md").empty());
    }

    void everyRoleSeesThePayload_data()
    {
        QTest::addColumn<int>("role");
        QTest::newRow("planner") << static_cast<int>(PromptRole::Planner);
        QTest::newRow("coder") << static_cast<int>(PromptRole::Coder);
        QTest::newRow("debugger") << static_cast<int>(PromptRole::Debugger);
        QTest::newRow("single") << static_cast<int>(PromptRole::Single);
    }

    void everyRoleSeesThePayload()
    {
        QFETCH(int, role);
        const auto payload = layerNormPayload();
        const auto prompt = PromptLibrary::builtIn().render(static_cast<PromptRole>(role), payload);
        const auto& u = prompt.user;
        // The problem: operation, shapes, dtypes, padding, tolerances, sizes.
        QVERIFY(has(u, "layernorm_gelu"));
        QVERIFY(has(u, "Fused LayerNorm + GELU"));
        QVERIFY(has(u, "x: input f16 [M, N], rows padded by 8 elements"));
        QVERIFY(has(u, "y: output f16 [M, N]"));
        QVERIFY(has(u, "eps: f32 = 1e-05"));
        QVERIFY(has(u, "f16: atol 0.01, rtol 0.01"));
        QVERIFY(has(u, "8192x4096: M=8192, N=4096"));
        QVERIFY(has(u, "M=13, N=4097"));
        // The best candidate, whole, with its launch rule and tunables.
        QVERIFY(has(u, payload.best.source));
        QVERIFY(has(u, "layernorm_gelu grid=(M) block=(THREADS)"));
        QVERIFY(has(u, "CACHE=1, THREADS=256, VEC=8"));
        // The measured state.
        QVERIFY(has(u, "iteration: 3"));
        QVERIFY(has(u, "69.60 us (baseline 135.00 us), speedup 1.94x"));
        QVERIFY(has(u, "40 registers/thread, 128 B shared memory/block"));
        QVERIFY(has(u, "theoretical occupancy: 100% (limited by warps), achieved 81%"));
        QVERIFY(has(u, "long_scoreboard (41% of stalls)"));
        QVERIFY(has(u, "1929 GB/s (45% of a same-size copy)"));
        QVERIFY(has(u, "memory ceiling: 4250 GB/s, measured with a 2 GiB device-to-device copy"));
        // Findings with evidence, hardware, history with its report, steering, rejections, examples.
        QVERIFY(has(u, "[high] dram-under-ceiling"));
        QVERIFY(has(u, "evidence: 1929 GB/s of 4250 GB/s"));
        QVERIFY(has(u, "SMs: 132"));
        QVERIFY(has(u, "L2 cache: 60 MiB"));
        QVERIFY(has(u, "228 KiB (up to 227 KiB per block with opt-in)"));
        QVERIFY(has(u, "iteration 2 (llm): verify-failed"));
        QVERIFY(has(u, "max abs error 3.1 at index (12, 4096)"));
        QVERIFY(has(u, "try Welford"));
        QVERIFY(has(u, "atomicAdd on the output"));
        QVERIFY(has(u, "softmax_bf16"));
        // Every placeholder was filled.
        QVERIFY2(!has(u, "{{") && !has(prompt.system, "{{"), u.c_str());
        QVERIFY(!prompt.system.empty());
    }

    void rolesGetTheirOwnParts()
    {
        const auto payload = layerNormPayload();
        const auto library = PromptLibrary::builtIn();
        const auto planner = library.render(PromptRole::Planner, payload);
        const auto coder = library.render(PromptRole::Coder, payload);
        const auto debugger = library.render(PromptRole::Debugger, payload);
        QVERIFY(has(planner.system, "## Plan") && has(planner.system, "## Predicted effect"));
        QVERIFY(has(planner.system, "Do not write the kernel"));
        QVERIFY(has(coder.user, "# The plan to carry out"));
        QVERIFY(has(coder.user, payload.plan));
        QVERIFY(!has(planner.user, "# The plan to carry out"));
        QVERIFY(has(debugger.user, "Failure: verify.mismatch"));
        QVERIFY(has(debugger.user, "// the failing source"));
        QVERIFY(!has(coder.user, "Failure: verify.mismatch"));
    }

    void theCoderLearnsTheCandidateFormat()
    {
        const auto prompt = PromptLibrary::builtIn().render(PromptRole::Coder, layerNormPayload());
        for (const char* needle :
            { "// @kl tunable", "// @kl launch", "grid=(", "block=(", "args=(", "smem=(", "// @kl scratch",
                "// @kl constraint", "cdiv(", "stride_<tensor>", "#ifndef NAME", "exactly one candidate", "```cuda" })
            QVERIFY2(has(prompt.system, needle), needle);
    }

    void emptyPartsLeaveNoHeadings()
    {
        PromptPayload minimal;
        minimal.problem.name = "tiny";
        minimal.state.iteration = 1;
        const auto prompt = PromptLibrary::builtIn().render(PromptRole::Single, minimal);
        for (const char* heading :
            { "# Findings", "# Recent iterations", "# Rejected", "# Verified kernels", "# The engineer's direction",
                "# Hardware", "# Current best candidate", "# The last candidate failed" })
            QVERIFY2(!has(prompt.user, heading), heading);
        QVERIFY(has(prompt.user, "Iteration 1 of the optimisation of tiny."));
    }

    void aUserFolderOverridesTemplates()
    {
        QTemporaryDir dir;
        std::ofstream(dir.filePath(QStringLiteral("coder.user.md")).toStdString())
            << "Improve {{problem_name}} (iteration {{iteration}}).\n{{#steering}}Note: {{steering}}{{/steering}}\n"
               "{{> candidate_format}}\n";
        std::ofstream(dir.filePath(QStringLiteral("README.md")).toStdString()) << "My prompts. {{not a placeholder}}\n";
        const auto library = PromptLibrary::withOverrides(dir.path().toStdString());
        QVERIFY(has(library.origin("coder.user.md"), "coder.user.md"));
        const auto names = library.templateNames();
        QVERIFY(std::find(names.begin(), names.end(), "README.md") == names.end());
        QCOMPARE(library.origin("coder.system.md"), std::string("built-in"));
        const auto prompt = library.render(PromptRole::Coder, layerNormPayload());
        QVERIFY2(prompt.user.rfind("Improve layernorm_gelu (iteration 3).\nNote: Keep one block per row", 0) == 0,
            prompt.user.c_str());
        QVERIFY(has(prompt.user, "// @kl launch"));
        QVERIFY(has(prompt.system, "expert CUDA programmer")); // the built-in system template still
    }

    void badOverridesAreRefusedWithTheirLocation_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("category");
        QTest::addColumn<QString>("where");
        QTest::newRow("misspelt placeholder") << "planner.user.md"
                                              << "Plan.\n\n{{findngs}}\n"
                                              << "prompt.unknown-placeholder"
                                              << "line 3";
        QTest::newRow("unknown partial") << "planner.user.md"
                                         << "{{> nothing}}\n"
                                         << "prompt.unknown-placeholder"
                                         << "line 1";
        QTest::newRow("unclosed section") << "coder.user.md"
                                          << "{{#findings}}\n{{findings}}\n"
                                          << "prompt.bad-template"
                                          << "";
        QTest::newRow("unknown file") << "coders.user.md"
                                      << "hello\n"
                                      << "prompt.unknown-template"
                                      << "";
    }

    void badOverridesAreRefusedWithTheirLocation()
    {
        QFETCH(QString, file);
        QFETCH(QString, text);
        QFETCH(QString, category);
        QFETCH(QString, where);
        QTemporaryDir dir;
        std::ofstream(dir.filePath(file).toStdString()) << text.toStdString();
        try {
            PromptLibrary::withOverrides(dir.path().toStdString());
            QFAIL("accepted a bad template");
        } catch (const Error& e) {
            QCOMPARE(QString::fromStdString(e.category()), category);
            QCOMPARE(QString::fromStdString(e.where()), where);
            QVERIFY(QString::fromStdString(e.file()).endsWith(file));
        }
    }

    void describeCandidateListsItsDeclarations()
    {
        const auto problem = loadProblem(kSourceDir + "/resources/examples/layernorm_gelu/problem.json");
        const auto facts = describeCandidate(problem.baseline);
        QCOMPARE(facts.tunables.size(), std::size_t(4));
        QCOMPARE(facts.tunables.front(), std::string("THREADS = 128 in 32, 64, 128, 256, 512, 1024"));
        QCOMPARE(facts.constraints, std::vector<std::string> { "CACHE * VEC <= 32" });
        QCOMPARE(facts.launches.size(), std::size_t(1));
        PromptPayload payload;
        payload.problem = describeProblem(problem);
        payload.best = facts;
        const auto sections = promptSections(payload);
        QCOMPARE(sections.at("kernel_names"), std::string("layernorm_gelu"));
        QVERIFY(!sections.count("findings"));
    }
};

QTEST_APPLESS_MAIN(TestLlmPrompts)
#include "test_llm_prompts.moc"

// The LLM proposers speak Triton: a problem whose baseline is a .py file gets prompts in Triton's
// words (the `# @kl` candidate format and its example, ```python blocks, Triton's compiler), and
// the reply's ```python block becomes a Triton candidate ("candidate.py") whose launch is checked
// against its @triton.jit kernel and whose compile request the helper would get. The prompt sent
// for the bundled Triton example is pinned by a golden file (real HTTP over loopback; regenerate
// with KL_UPDATE_GOLDEN=1 after a deliberate change).
#include "core/compile/triton_compiler.h"
#include "core/llm/llm_proposer.h"
#include "core/llm/reply_parser.h"
#include "core/model/problem.h"

#include "tests/llm/golden_text.h"
#include "tests/llm/replay_bodies.h"
#include "tests/llm/replay_server.h"

#include <QTest>

#include <nlohmann/json.hpp>

using kl::test::ReplayServer;
using kl::test::Reply;
using kl::test::SeenRequest;

namespace {

const std::string kExamples = std::string(KL_SOURCE_DIR) + "/resources/examples/";

kl::Problem tritonProblem() { return kl::loadProblem(kExamples + "layernorm_gelu_triton/problem.json"); }

// A wider-block rewrite of the baseline, as a model would send it.
const char* kTritonCandidate = R"(import triton
import triton.language as tl

# @kl tunable BLOCK_N = 4096 in 256..8192 pow2
# @kl tunable W = 8 in 1, 2, 4, 8, 16
# @kl launch ln_gelu_wide grid=(M) num_warps=(W) num_stages=(1) args=(x, gamma, beta, y, N, stride_x, stride_y, eps, BLOCK_N=BLOCK_N)


@triton.jit
def ln_gelu_wide(x_ptr, gamma_ptr, beta_ptr, y_ptr, N, stride_x, stride_y, eps,
                 BLOCK_N: tl.constexpr):
    # def not_a_kernel(a): a comment is not a definition
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    v = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / N
    d = tl.where(mask, v - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
    g = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(beta_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    h = d * rstd * g + b
    u = 0.7978845608028654 * (h + 0.044715 * h * h * h)
    tl.store(y_ptr + row * stride_y + cols, (h * tl.sigmoid(2.0 * u)).to(tl.float16), mask=mask)
)";

std::string reply(const std::string& fence, const std::string& code)
{
    return "## Plan\nOne pass per row: the whole row in registers.\n\n## Predicted effect\n1.6x\n\n```" + fence + "\n"
        + code + "```\n";
}

kl::ParsedReply parseForTriton(const std::string& text, const kl::Problem& problem)
{
    return kl::parseCandidateReply(text, "stop", kl::ReplyExpectations::forProblem(problem, &problem.baseline));
}

std::string replaced(std::string text, const std::string& from, const std::string& to)
{
    const auto at = text.find(from);
    if (at != std::string::npos)
        text.replace(at, from.size(), to);
    return text;
}

} // namespace

class TestLlmTriton : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void tritonReplyParsedAndItsCompileRequestBuilt()
    {
        const auto problem = tritonProblem();
        QCOMPARE(problem.language(), kl::CandidateLanguage::Triton);
        const auto parsed = parseForTriton(reply("python", kTritonCandidate), problem);
        QVERIFY2(parsed.ok(), parsed.message.c_str());
        QCOMPARE(parsed.candidate->language, kl::CandidateLanguage::Triton);
        QCOMPARE(parsed.candidate->fileName, std::string("candidate.py"));
        QCOMPARE(parsed.hypothesis.predictedSpeedup.value_or(0), 1.6);

        kl::CompileOptions options;
        options.arch = problem.arch;
        options.tunables = parsed.candidate->defaults();
        options.tritonSignature = kl::tritonSignature(problem, *parsed.candidate);
        const auto request = nlohmann::json::parse(kl::tritonCompileRequest(*parsed.candidate, options));
        QCOMPARE(request.at("kernel").get<std::string>(), std::string("ln_gelu_wide"));
        QCOMPARE(request.at("constexprs").at("BLOCK_N").get<int>(), 4096);
        QCOMPARE(request.at("num_warps").get<int>(), 8);
        QCOMPARE(request.at("num_stages").get<int>(), 1);
        QCOMPARE(request.at("signature").size(), std::size_t(8));
        QCOMPARE(request.at("signature").at(0).get<std::string>(),
            std::string("*fp16:16")); // 16-byte aligned, as the JIT assumes
    }

    void tritonRepliesRefused_data()
    {
        QTest::addColumn<QString>("fence");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("category");
        QTest::addColumn<QString>("message");
        const std::string good = kTritonCandidate;
        QTest::newRow("cuda block for a Triton problem")
            << "cuda"
            << "// @kl launch k grid=(M) block=(256) args=(x, gamma, beta, y, M, N, stride_x, stride_y, eps)\n"
               "__global__ void k() {}\n"
            << "no-code"
            << "```python block with a @triton.jit kernel";
        QTest::newRow("launch names no kernel")
            << "python" << QString::fromStdString(replaced(good, "def ln_gelu_wide(", "def other_name("))
            << "wrong-entry-point"
            << "no @triton.jit function of that name";
        QTest::newRow("kernel only in a comment")
            << "python"
            << QString::fromStdString(replaced(replaced(good, "def ln_gelu_wide(", "def other_name("),
                   "# def not_a_kernel(a)", "# def ln_gelu_wide(a)"))
            << "wrong-entry-point"
            << "it defines other_name";
        QTest::newRow("constexpr the kernel lacks")
            << "python" << QString::fromStdString(replaced(good, "BLOCK_N=BLOCK_N)", "BLOCK_N=BLOCK_N, EXTRA=2)"))
            << "changed-signature"
            << "sets EXTRA=, but ln_gelu_wide has no parameter";
        QTest::newRow("positional count")
            << "python" << QString::fromStdString(replaced(good, "stride_y, eps,\n", "stride_y,\n"))
            << "changed-signature"
            << "takes 7 parameters, but its launch";
        QTest::newRow("a buffer dropped")
            << "python"
            << QString::fromStdString(
                   replaced(replaced(good, "args=(x, gamma, beta, y,", "args=(x, gamma, gamma, y,"), "", ""))
            << "changed-signature"
            << "changed from (x, gamma, beta, y) to (x, gamma, gamma, y)";
        QTest::newRow("directives after //")
            << "python" << QString::fromStdString(replaced(good, "# @kl launch", "// @kl launch"))
            << "invalid-declarations"
            << "candidate.";
    }

    void tritonRepliesRefused()
    {
        QFETCH(QString, fence);
        QFETCH(QString, code);
        QFETCH(QString, category);
        QFETCH(QString, message);
        const auto parsed = parseForTriton(reply(fence.toStdString(), code.toStdString()), tritonProblem());
        QCOMPARE(QString::fromUtf8(kl::replyCategoryName(parsed.category).data()), category);
        QVERIFY2(parsed.message.find(message.toStdString()) != std::string::npos, parsed.message.c_str());
    }

    // A CUDA problem still wants ```cuda: the Triton block is not its candidate.
    void cudaProblemIgnoresPythonBlocks()
    {
        const auto problem = kl::loadProblem(kExamples + "layernorm_gelu/problem.json");
        const auto parsed = kl::parseCandidateReply(
            reply("python", kTritonCandidate), "stop", kl::ReplyExpectations::forProblem(problem, &problem.baseline));
        QCOMPARE(parsed.category, kl::ReplyCategory::NoCode);
        QVERIFY2(parsed.message.find("```cuda") != std::string::npos, parsed.message.c_str());
    }

    // The prompt the single role sends for the Triton example, and its reply taken as the proposal.
    void tritonPromptAndProposal()
    {
        ReplayServer server;
        server.route("/v1/chat/completions", [](const SeenRequest&, int) {
            Reply r;
            r.body = kl::test::openAiCompletion({ reply("python", kTritonCandidate) }, "replay", { 1000, 10 });
            return r;
        });
        const auto problem = tritonProblem();
        kl::ProposalContext context;
        context.problem = &problem;
        context.iteration = 1;
        context.best = problem.baseline;
        context.bestTunables = problem.baseline.defaults();
        context.bestMedianUs = 120.0;
        context.baselineMedianUs = 120.0;
        context.bestSpeedup = 1.0;
        context.remainingBudget = 4;
        kl::EndpointConfig endpoint;
        endpoint.baseUrl = server.url("/v1");
        endpoint.model = "replay";
        endpoint.retry.maxAttempts = 1;
        kl::LlmProposerConfig config;
        config.roles = kl::LlmProposerConfig::Roles::Single;
        kl::LlmProposer proposer(kl::makeChatClient(endpoint), kl::PromptLibrary::builtIn(), config);
        const auto proposals = proposer.propose(context, 1, nullptr);
        QCOMPARE(proposals.size(), std::size_t(1));
        QVERIFY2(proposals[0].failure.empty(), (proposals[0].failure + ": " + proposals[0].failureDetail).c_str());
        QCOMPARE(proposals[0].candidate.language, kl::CandidateLanguage::Triton);
        QCOMPARE(proposals[0].candidate.launches.at(0).kernel, std::string("ln_gelu_wide"));

        const auto requests = server.requests();
        QCOMPARE(requests.size(), std::size_t(1));
        std::string sent;
        const auto body = nlohmann::json::parse(requests.front().body);
        for (const auto& m : body.at("messages"))
            sent += "<<< " + m.value("role", "") + " >>>\n" + m.value("content", "");
        for (const char* phrase : { "expert Triton performance engineer", "compiled with Triton's compiler",
                 "start with `# @kl`", "```python\nimport triton", "one ```python block with its `# @kl` lines",
                 "Launches:\n- ln_gelu grid=(M) num_warps=(W)", "Tunables:\n- BLOCK_N = 256" })
            QVERIFY2(sent.find(phrase) != std::string::npos, (std::string(phrase) + " missing in:\n" + sent).c_str());
        for (const char* phrase : { "```cuda", "// @kl", "NVRTC", "__global__" })
            QVERIFY2(sent.find(phrase) == std::string::npos, (std::string(phrase) + " in:\n" + sent).c_str());

        const std::string golden
            = std::string(KL_SOURCE_DIR) + "/tests/fixtures/llm/prompts/layernorm_gelu_triton.single.md";
        const auto want = kl::test::goldenText(golden, sent);
        QVERIFY2(!want.empty(), ("no golden file " + golden + " (run with KL_UPDATE_GOLDEN=1)").c_str());
        QVERIFY2(want == sent, kl::test::firstDifference(want, sent).c_str());
    }

    // The debugger's causes are the language's own; CUDA's text is unchanged.
    void debuggerCausesFollowTheLanguage()
    {
        const auto library = kl::PromptLibrary::builtIn();
        kl::PromptPayload payload;
        payload.problem = kl::describeProblem(tritonProblem());
        const auto triton = library.render(kl::PromptRole::Debugger, payload).system;
        QVERIFY2(triton.find("without a\nmask for the last partial block") != std::string::npos, triton.c_str());
        QVERIFY2(triton.find("__syncthreads") == std::string::npos, triton.c_str());
        payload.problem = kl::describeProblem(kl::loadProblem(kExamples + "layernorm_gelu/problem.json"));
        const auto cuda = library.render(kl::PromptRole::Debugger, payload).system;
        QVERIFY2(
            cuda.find("Typical causes: a row length that is not a multiple of the vector width") != std::string::npos,
            cuda.c_str());
        QVERIFY2(cuda.find("missing `__syncthreads()`") != std::string::npos, cuda.c_str());
        QVERIFY2(cuda.find("start with `// @kl`") != std::string::npos, cuda.c_str());
        QVERIFY2(cuda.find("tl.load") == std::string::npos, cuda.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLlmTriton)
#include "test_llm_triton.moc"

// Reply parsing over realistic model replies (tests/fixtures/llm/replies, written by
// make_fixtures.py around a real vectorised LayerNorm+GELU candidate): every category, the plan and
// predicted effect, and the accepted candidate's launch plan and NVRTC compile.
#include "core/compile/compiler.h"
#include "core/llm/reply_parser.h"
#include "core/model/launch_plan.h"

#include <QtTest>

#include <fstream>
#include <set>
#include <sstream>

using namespace kl;

namespace {

const std::string kSourceDir = KL_SOURCE_DIR;

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string reply(const std::string& name) { return readFile(kSourceDir + "/tests/fixtures/llm/replies/" + name); }

const Problem& layerNorm()
{
    static const Problem problem = loadProblem(kSourceDir + "/resources/examples/layernorm_gelu/problem.json");
    return problem;
}

ParsedReply parse(const std::string& name, const std::string& finish = "stop", const std::string& plan = {})
{
    auto expect = ReplyExpectations::forProblem(layerNorm(), &layerNorm().baseline);
    expect.plan = plan;
    return parseCandidateReply(reply(name), finish, expect);
}

} // namespace

class TestLlmReplies : public QObject {
    Q_OBJECT

private slots:
    void categories_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("finish");
        QTest::addColumn<QString>("category");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("ok") << "ok_vectorised.md"
                            << "stop"
                            << "ok"
                            << "";
        QTest::newRow("ok, old entry point quoted") << "ok_with_snippet.md"
                                                    << "stop"
                                                    << "ok"
                                                    << "";
        QTest::newRow("ok, renamed as planned") << "ok_renamed_with_plan.md"
                                                << "stop"
                                                << "ok"
                                                << "";
        QTest::newRow("ok, xml plan, cpp fence") << "ok_xml_plan.md"
                                                 << "stop"
                                                 << "ok"
                                                 << "";
        QTest::newRow("no code") << "no_code.md"
                                 << "stop"
                                 << "no-code"
                                 << "no ```cuda block";
        QTest::newRow("plan only") << "plan_only.md"
                                   << "stop"
                                   << "no-code"
                                   << "";
        QTest::newRow("several") << "several_candidates.md"
                                 << "stop"
                                 << "several-candidates"
                                 << "2 code blocks";
        // Models rename kernels: the launch lines are the contract, not the old name.
        QTest::newRow("renamed, unplanned") << "wrong_entry_point.md"
                                            << "stop"
                                            << "ok"
                                            << "";
        QTest::newRow("launch of an undefined kernel")
            << "wrong_entry_point_undefined.md"
            << "stop"
            << "wrong-entry-point"
            << "defines no __global__ function of that name (it defines layernorm_gelu_kernel)";
        QTest::newRow("parameter dropped") << "changed_signature.md"
                                           << "stop"
                                           << "changed-signature"
                                           << "takes 8 parameters, but its launch (line 8) passes 9 arguments";
        QTest::newRow("buffers reordered") << "changed_buffer_order.md"
                                           << "stop"
                                           << "changed-signature"
                                           << "changed from (x, gamma, beta, y) to (x, beta, gamma, y)";
        QTest::newRow("cut off") << "truncated.md"
                                 << "length"
                                 << "truncated"
                                 << "at the token limit";
        QTest::newRow("cut off, no finish reason") << "truncated.md"
                                                   << ""
                                                   << "truncated"
                                                   << "inside a code block";
        QTest::newRow("refusal by text") << "refusal.md"
                                         << "stop"
                                         << "refusal"
                                         << "";
        QTest::newRow("refusal by finish reason") << "ok_vectorised.md"
                                                  << "refusal"
                                                  << "refusal"
                                                  << "";
        QTest::newRow("content filter") << "ok_vectorised.md"
                                        << "content_filter"
                                        << "refusal"
                                        << "";
        QTest::newRow("bad tunable") << "invalid_declarations.md"
                                     << "stop"
                                     << "invalid-declarations"
                                     << "candidate.bad-tunable at line 6: default 384 of THREADS";
        QTest::newRow("no launch line") << "no_launch.md"
                                        << "stop"
                                        << "invalid-declarations"
                                        << "candidate.no-launch";
        QTest::newRow("plan only, cut off") << "plan_only.md"
                                            << "length"
                                            << "truncated"
                                            << "";
    }

    void categories()
    {
        QFETCH(QString, file);
        QFETCH(QString, finish);
        QFETCH(QString, category);
        QFETCH(QString, messagePart);
        const auto r = parse(file.toStdString(), finish.toStdString());
        QCOMPARE(QString::fromStdString(std::string(replyCategoryName(r.category))), category);
        QVERIFY2(QString::fromStdString(r.message).contains(messagePart), r.message.c_str());
        QCOMPARE(r.candidate.has_value(), r.ok());
        if (!r.ok())
            QVERIFY(!r.message.empty());
    }

    void theAcceptedCandidateIsTheVectorisedKernel()
    {
        const auto r = parse("ok_with_snippet.md");
        QVERIFY(r.ok());
        QCOMPARE(r.candidate->launches.size(), std::size_t(1));
        QCOMPARE(r.candidate->launches[0].kernel, std::string("layernorm_gelu"));
        QCOMPARE(r.candidate->tunable("THREADS")->defaultValue, std::int64_t(128));
        QCOMPARE(r.candidate->tunable("ITEMS")->values, (std::vector<std::int64_t> { 1, 2, 4 }));
        QCOMPARE(r.code, readFile(kSourceDir + "/tests/fixtures/llm/vectorised.cu"));
        // It plans against the problem: one block per row at the main size, the tunables' block.
        const auto plan
            = planLaunches(layerNorm(), *r.candidate, layerNorm().mainSizes.front(), r.candidate->defaults(), true);
        QCOMPARE(plan.launches.size(), std::size_t(1));
        QCOMPARE(plan.launches[0].grid[0], std::int64_t(8192));
        QCOMPARE(plan.launches[0].block[0], std::int64_t(128));
        QCOMPARE(plan.launches[0].args.size(), std::size_t(9));
    }

    // A renamed kernel is accepted and compiled under its new name, but it is still held to the
    // buffers of the launch it replaces.
    void aRenamedKernelIsAcceptedAndKeepsItsBuffers()
    {
        const auto r = parse("wrong_entry_point.md");
        QVERIFY2(r.ok(), r.message.c_str());
        QCOMPARE(r.candidate->launches.size(), std::size_t(1));
        QCOMPARE(r.candidate->launches[0].kernel, std::string("ln_gelu_fast"));
        CompileOptions options;
        options.arch = layerNorm().arch;
        options.tunables = r.candidate->defaults();
        options.includeDir = layerNorm().dir;
        const auto compiled = compileCandidate(*r.candidate, options);
        QVERIFY2(compiled.ok, compiled.log.c_str());
        QVERIFY(compiled.kernel("ln_gelu_fast"));

        auto text = reply("wrong_entry_point.md");
        const auto at = text.find("args=(x, gamma, beta, y");
        QVERIFY(at != std::string::npos);
        text.replace(at, 23, "args=(x, beta, gamma, y");
        const auto reordered
            = parseCandidateReply(text, "stop", ReplyExpectations::forProblem(layerNorm(), &layerNorm().baseline));
        QCOMPARE(QString::fromStdString(std::string(replyCategoryName(reordered.category))),
            QStringLiteral("changed-signature"));
        QVERIFY2(reordered.message.find("changed from (x, gamma, beta, y) to (x, beta, gamma, y)") != std::string::npos,
            reordered.message.c_str());
    }

    void theCandidateCompilesWithNvrtc()
    {
        const auto r = parse("ok_vectorised.md");
        QVERIFY(r.ok());
        CompileOptions options;
        options.arch = layerNorm().arch;
        options.tunables = r.candidate->defaults();
        options.includeDir = layerNorm().dir;
        const auto result = compileCandidate(*r.candidate, options);
        QVERIFY2(result.ok, result.log.c_str());
        const auto* kernel = result.kernel("layernorm_gelu");
        QVERIFY(kernel);
        QVERIFY(kernel->registers > 0 && kernel->registers <= 255);
        QCOMPARE(kernel->spillStoreBytes, std::int64_t(0));
    }

    void theHypothesisIsKeptWithItsPrediction()
    {
        const auto r = parse("ok_vectorised.md");
        QVERIFY(r.hypothesis.plan.find("16 bytes per access") != std::string::npos);
        QVERIFY(r.hypothesis.plan.find("## Predicted") == std::string::npos);
        QVERIFY(r.hypothesis.prediction.find("About 1.5x") != std::string::npos);
        QCOMPARE(r.hypothesis.predictedSpeedup, std::optional<double>(1.5));
        const auto xml = parse("ok_xml_plan.md");
        QCOMPARE(xml.hypothesis.plan, std::string("Vectorise the loads to 16 bytes and keep the row in registers."));
        QCOMPARE(xml.hypothesis.predictedSpeedup, std::optional<double>(1.4));
        // A failed reply still keeps what the model meant to do.
        QVERIFY(!parse("several_candidates.md").hypothesis.plan.empty());
    }

    void predictedSpeedupForms_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<double>("speedup");
        QTest::newRow("times") << "## Predicted effect\nRoughly 1.8x faster." << 1.8;
        QTest::newRow("unicode times") << "## Predicted effect\n~2\u00d7 less time" << 2.0;
        QTest::newRow("speedup word") << "Predicted effect: a speedup of 1.25 on the main size" << 1.25;
        QTest::newRow("latency range") << "## Prediction\nfrom 80 us to 40 us" << 2.0;
        QTest::newRow("bold heading") << "**Predicted effect:** 1.3x" << 1.3;
        QTest::newRow("none") << "## Predicted effect\nfaster, hopefully" << 0.0;
    }

    void predictedSpeedupForms()
    {
        QFETCH(QString, text);
        QFETCH(double, speedup);
        const auto h = parseHypothesis(text.toStdString());
        if (speedup == 0.0)
            QVERIFY(!h.predictedSpeedup);
        else
            QCOMPARE(h.predictedSpeedup.value_or(-1.0), speedup);
    }

    void aNewEntryPointIsFineWithOrWithoutAPlanThatNamesIt()
    {
        QCOMPARE(parse("wrong_entry_point.md").category, ReplyCategory::Ok);
        const auto r = parse("wrong_entry_point.md", "stop", "Rewrite as ln_gelu_fast with one warp per row.");
        QVERIFY2(r.ok(), r.message.c_str());
    }

    void aScalarPassedAsAPointerIsAChangedSignature()
    {
        auto text = reply("ok_vectorised.md");
        const std::string from = "int stride_y, float eps)";
        text.replace(text.find(from), from.size(), "int stride_y, const float* eps)");
        const auto r
            = parseCandidateReply(text, "stop", ReplyExpectations::forProblem(layerNorm(), &layerNorm().baseline));
        QCOMPARE(r.category, ReplyCategory::ChangedSignature);
        QVERIFY2(r.message.find("scalar eps") != std::string::npos, r.message.c_str());
    }

    void oversizedReplies()
    {
        std::string huge = reply("ok_vectorised.md");
        huge += "\n" + std::string(300 * 1024, 'x');
        const auto r = parseCandidateReply(huge, "stop", ReplyExpectations::forProblem(layerNorm(), nullptr));
        QCOMPARE(r.category, ReplyCategory::Oversized);
        // A candidate block over the source limit, in a reply the limit lets through.
        auto expect = ReplyExpectations::forProblem(layerNorm(), nullptr);
        expect.maxReplyBytes = 4u << 20;
        std::string big = "## Plan\nUnroll everything.\n\n```cuda\n"
            + readFile(kSourceDir + "/tests/fixtures/llm/vectorised.cu") + "// " + std::string(600 * 1024, 'y')
            + "\n```\n";
        const auto r2 = parseCandidateReply(big, "stop", expect);
        QCOMPARE(r2.category, ReplyCategory::Oversized);
    }

    void planReplies()
    {
        const auto ok = parsePlanReply(reply("plan_only.md"), "stop");
        QVERIFY(ok.ok());
        QCOMPARE(ok.hypothesis.predictedSpeedup, std::optional<double>(1.5));
        QCOMPARE(parsePlanReply("", "stop").category, ReplyCategory::NoPlan);
        QCOMPARE(parsePlanReply(reply("refusal.md"), "stop").category, ReplyCategory::Refusal);
        QCOMPARE(parsePlanReply(reply("plan_only.md"), "length").category, ReplyCategory::Truncated);
        QCOMPARE(parsePlanReply(reply("plan_only.md"), "content_filter").category, ReplyCategory::Refusal);
    }

    void everyCategoryHasAName()
    {
        std::set<std::string_view> names;
        for (int i = 0; i <= static_cast<int>(ReplyCategory::NoPlan); ++i)
            QVERIFY(names.insert(replyCategoryName(static_cast<ReplyCategory>(i))).second);
        QVERIFY(!names.count("unknown"));
    }
};

QTEST_APPLESS_MAIN(TestLlmReplies)
#include "test_llm_replies.moc"

// From the loop's context to the prompt's payload: what the model is told about past iterations,
// failures, rejections, steering, findings and examples; and which failures go to the debugger.
#include "core/llm/prompt_library.h"
#include "core/llm/proposal_prompt.h"
#include "core/model/problem.h"

#include <QTest>

namespace {

kl::Problem layernorm()
{
    return kl::loadProblem(std::string(KL_SOURCE_DIR) + "/resources/examples/layernorm_gelu/problem.json");
}

kl::EvaluatedProposal entry(int iteration, std::string proposer, std::string category, std::string detail = {})
{
    kl::EvaluatedProposal e;
    e.iteration = iteration;
    e.proposer = std::move(proposer);
    e.category = std::move(category);
    e.detail = std::move(detail);
    e.sourceHash = "hash" + std::to_string(iteration) + "0123456789";
    return e;
}

} // namespace

class TestLlmProposer : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void outcomesInTheModelsWords_data()
    {
        QTest::addColumn<QString>("proposer");
        QTest::addColumn<QString>("category");
        QTest::addColumn<bool>("kept");
        QTest::addColumn<QString>("words");
        QTest::addColumn<bool>("fixable");
        QTest::newRow("baseline") << "baseline"
                                  << "passed" << true << "baseline" << false;
        QTest::newRow("kept") << "llm"
                              << "passed" << true << "faster (kept as the new best)" << false;
        QTest::newRow("slower") << "llm"
                                << "passed" << false << "correct but not faster than the best" << false;
        QTest::newRow("compile") << "llm"
                                 << "compile.syntax" << false << "compile-error (syntax)" << true;
        QTest::newRow("wrong") << "llm"
                               << "wrong-result" << false << "verify-failed (wrong-result)" << true;
        QTest::newRow("timeout") << "llm"
                                 << "timeout" << false << "verify-failed (timeout)" << true;
        QTest::newRow("rejected") << "llm"
                                  << "rejected" << false << "rejected by the engineer" << false;
        QTest::newRow("no code") << "llm"
                                 << "proposer.no-code" << false << "proposer-error (no-code)" << false;
        QTest::newRow("illegal address") << "llm"
                                         << "illegal-address" << false << "verify-failed (illegal-address)" << true;
        QTest::newRow("runner lost") << "llm"
                                     << "runner-lost" << false << "verify-failed (runner-lost)" << false;
    }
    void outcomesInTheModelsWords()
    {
        QFETCH(QString, proposer);
        QFETCH(QString, category);
        QFETCH(bool, kept);
        QFETCH(QString, words);
        QFETCH(bool, fixable);
        auto e = entry(3, proposer.toStdString(), category.toStdString());
        e.kept = kept;
        QCOMPARE(QString::fromStdString(kl::outcomeWords(e)), words);
        QCOMPARE(kl::isFixableFailure(e), fixable);
    }

    void payloadCarriesHistoryFailuresAndTheEngineersWords()
    {
        const auto problem = layernorm();
        kl::ProposalContext c;
        c.problem = &problem;
        c.iteration = 7;
        c.best = problem.baseline;
        c.bestTunables = problem.baseline.defaults();
        c.bestSourceHash = "besthash";
        c.bestMedianUs = 49.76;
        c.baselineMedianUs = 72.58;
        c.bestSpeedup = 1.46;
        c.bestGbps = 2698;
        c.bestPctOfCopy = 66.9;
        c.bestStatic = { 40, 128, 0, 1.0, "warps", "long_scoreboard", {} };
        c.hardware.name = "NVIDIA H200";
        c.hardware.smCount = 132;
        c.hardware.copyGbps = 4030;
        kl::Finding low { "tail-effect", kl::Finding::Severity::Info, "tail effect", "", { { "waves", 5.17 } }, {}, {},
            0.1 };
        kl::Finding high { "bandwidth.under-ceiling", kl::Finding::Severity::Critical, "bandwidth 67% of copy", "",
            { { "pct_of_copy", 66.9 } }, { "more bytes in flight" }, {}, 2.5 };
        c.bestFindings = { low, high };
        for (int i = 1; i <= 12; ++i)
            c.history.push_back(entry(i, "llm", "passed"));
        c.history.push_back(
            entry(13, "llm", "wrong-result", std::string(5000, 'e') + " max abs error 3.2 at index 4097"));
        auto rejected = entry(14, "llm", "rejected");
        rejected.rejection = "uses atomics on the output";
        c.history.push_back(rejected);
        c.steering = { "keep THREADS at 256", "try two rows per block" };
        c.examples.push_back({ "layernorm_gelu", "1.46x over its baseline, verified", "// example source", 1.46 });

        kl::PayloadLimits limits;
        limits.recentIterations = 4;
        limits.reportBytes = 100;
        const auto p = kl::payloadFor(c, limits);
        QCOMPARE(p.state.iteration, 7);
        QCOMPARE(*p.state.currentMicros, 49.76);
        QCOMPARE(*p.state.registers, 40);
        QCOMPARE(QString::fromStdString(p.state.primaryStall), QStringLiteral("long_scoreboard"));
        QCOMPARE(*p.hardware.dramGigabytesPerSecond, 4030.0);
        // Findings most important first, with their numbers and directions.
        QCOMPARE(p.findings.size(), std::size_t(2));
        QCOMPARE(QString::fromStdString(p.findings[0].id), QStringLiteral("bandwidth.under-ceiling"));
        QCOMPARE(QString::fromStdString(p.findings[0].severity), QStringLiteral("high"));
        QVERIFY(p.findings[0].evidence.find("pct_of_copy = 66.9") != std::string::npos);
        QCOMPARE(QString::fromStdString(p.findings[0].direction), QStringLiteral("more bytes in flight"));
        // The last four iterations only, the failure with its report cut to the limit.
        QCOMPARE(p.recent.size(), std::size_t(4));
        QCOMPARE(p.recent.front().iteration, 11);
        QCOMPARE(QString::fromStdString(p.recent[2].outcome), QStringLiteral("verify-failed (wrong-result)"));
        QVERIFY(p.recent[2].report.size() < 200);
        QVERIFY(p.recent[2].report.find("more bytes]") != std::string::npos);
        QVERIFY(p.recent[0].report.empty()); // a passed iteration has no report
        QCOMPARE(p.rejections, (std::vector<std::string> { "iteration 14: uses atomics on the output" }));
        QCOMPARE(QString::fromStdString(p.steering), QStringLiteral("keep THREADS at 256\ntry two rows per block"));
        QCOMPARE(p.examples.size(), std::size_t(1));

        // And the templates really put them in front of the model.
        const auto prompt = kl::PromptLibrary::builtIn().render(kl::PromptRole::Planner, p);
        for (const char* text : { "uses atomics on the output", "try two rows per block", "bandwidth 67% of copy",
                 "verify-failed (wrong-result)", "49.76" })
            QVERIFY2(prompt.user.find(text) != std::string::npos, text);
    }
};

QTEST_APPLESS_MAIN(TestLlmProposer)
#include "test_llm_proposer.moc"

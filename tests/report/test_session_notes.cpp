// What `history` and the window's history both say around a session's iterations (issue 26), from
// core/report/session_notes.h: the stop line with pass@k/speedup@k, the mixed-GPU warning and the
// hypothesis log, read from the bundled H200 sessions as the CLI reads them.
#include "core/figures/iteration_figures.h"
#include "core/loop/store_records.h"
#include "core/report/session_notes.h"
#include "core/store/store.h"
#include "tests/test_files.h"

#include <QtTest/QTest>

using namespace kl;
using namespace kl::report;

namespace {

store::Store bundled(const std::string& name)
{
    return store::Store::open(test::sourceDir() + "/resources/sessions/" + name, { .readOnly = true });
}

} // namespace

class TestSessionNotes : public QObject {
    Q_OBJECT

private slots:
    // The stored summary read back typed; the line says k, pass@k, speedup@k and the LLM tokens.
    void theStopLineSaysPassAtK_data()
    {
        QTest::addColumn<QString>("session");
        QTest::addColumn<QString>("line");
        QTest::newRow("llm, k=1") << QStringLiteral("layernorm_gelu-llm-replay-h200.klsession")
                                  << QStringLiteral("stopped: iteration budget of 4 spent; 5 candidates in 5.6 s "
                                                    "(53.7/min); k=1: pass@k 0.75, speedup@k 1.19x; 34554 LLM tokens");
        QTest::newRow("tuner, k=4") << QStringLiteral("gemm_fp16_triton-tuner-h200.klsession")
                                    << QStringLiteral("stopped: iteration budget of 3 spent; 13 candidates in 26.1 s "
                                                      "(29.9/min); k=4: pass@k 1.00, speedup@k 1.23x");
    }
    void theStopLineSaysPassAtK()
    {
        QFETCH(QString, session);
        QFETCH(QString, line);
        const auto store = bundled(session.toStdString());
        const auto record = store.session(1);
        QVERIFY(record);
        const auto summary = loopSummary(record->summary);
        QVERIFY(summary);
        QCOMPARE(QString::fromStdString(stopLine(*summary)), line);
    }

    // A session the loop never summarised (still running, or ended before the summary) has no line.
    void noSummaryNoLine()
    {
        QVERIFY(!loopSummary(std::nullopt));
        store::SessionSummary counted;
        counted.evaluated = 3;
        QVERIFY(!loopSummary(counted));
        // Without pass@k (written before k candidates a round), the line stops at the rate.
        store::SessionSummary stored = counted;
        stored.stopReason = "target reached";
        stored.wallSeconds = 2.0;
        stored.candidatesPerMinute = 90.0;
        const auto old = loopSummary(stored);
        QVERIFY(old);
        QCOMPARE(stopLine(*old), std::string("stopped: target reached; 3 candidates in 2.0 s (90.0/min)"));
    }

    void twoGpuModelsAreWarnedAbout()
    {
        std::map<int, store::Store::MeasuredOn> runners;
        runners[1] = { "local:0", "NVIDIA H200", 0 };
        runners[2] = { "local:1", "NVIDIA H200", 1 };
        QCOMPARE(mixedModelsWarning(gpuModelsOf(runners)), std::string());
        runners[3] = { "ssh:box:0", "NVIDIA A100-SXM4-80GB", 0 };
        runners[4] = { "ssh:box:1", "", -1 }; // no device: not a model
        QCOMPARE(mixedModelsWarning(gpuModelsOf(runners)),
            std::string("warning [store.mixed-gpu-models]: results of 2 GPU models (NVIDIA A100-SXM4-80GB: 1, NVIDIA "
                        "H200: 2); each speedup is against the baseline on its own GPU, never compare across models"));
    }

    // The window counts models from its chart figures, the CLI from the runners: the same counts.
    void figuresAndRunnersCountTheSameModels()
    {
        const auto store = bundled("layernorm_gelu-h200.klsession");
        const auto fromRunners = gpuModelsOf(store.sessionRunners(1));
        QCOMPARE(fromRunners.size(), std::size_t(1));
        QCOMPARE(fromRunners.begin()->first, std::string("NVIDIA H200"));
        QVERIFY(fromRunners.begin()->second > 10);
        QCOMPARE(gpuModelsOf(figures::readFigures(store, 1)), fromRunners);
    }

    // Each iteration that said what it expected, with the decision that measured it against the best then.
    void theHypothesisLogPairsPredictionsWithDecisions()
    {
        const auto store = bundled("layernorm_gelu-llm-replay-h200.klsession");
        const auto log = hypothesisLog(store.listIterations(1), store.sessionDecisionReasons(1));
        QCOMPARE(log.size(), std::size_t(5));
        QCOMPARE(log[0].proposer, std::string("baseline"));
        QCOMPARE(log[0].hypothesis, std::string("the problem's baseline"));
        QCOMPARE(log[0].measured, std::string());
        QCOMPARE(log[1].index, 2);
        QCOMPARE(log[1].proposer, std::string("llm"));
        QCOMPARE(log[1].verdict, std::string("passed"));
        QVERIFY(log[1].predictedSpeedup && std::abs(*log[1].predictedSpeedup - 1.45) < 1e-9);
        QVERIFY(log[1].speedup && *log[1].speedup > 1.47);
        QVERIFY2(log[1].measured.rfind("new best: 1.484x [1.482, 1.486] faster", 0) == 0, log[1].measured.c_str());
        QCOMPARE(log[2].verdict, std::string("unwritten-output"));
        QVERIFY(!log[2].speedup);
        // One line of the hypothesis; the last decision of an iteration is the one kept.
        for (const auto& e : log)
            QVERIFY(e.hypothesis.find('\n') == std::string::npos);
        QVERIFY2(log[4].measured.rfind("not faster beyond the noise", 0) == 0, log[4].measured.c_str());
    }
};

QTEST_GUILESS_MAIN(TestSessionNotes)
#include "test_session_notes.moc"

// Whether a compute-bound fp16 kernel uses the tensor cores, through the real pipeline: kernelloop-cli
// evaluate on the bundled GEMM (real NVRTC, a real SQLite file), the runner double replaying a sol
// profile whose tensor pipe is not idle. On the H200 a CUDA-core GEMM executes a little on the tensor
// pipe (1.1% busy, sm__inst_executed_pipe_tensor.sum not 0), so only the candidate's own code can say
// that it issued no tensor-core instruction.
#include "core/figures/roofline.h"
#include "core/store/store.h"
#include "tests/scoped_env.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <set>

namespace {

const QString kExample = QStringLiteral(KL_SOURCE_DIR "/resources/examples/gemm_fp16/");
const std::string kFixtures = KL_SOURCE_DIR "/tests/fixtures/findings/";
// What the H200 showed for the naive tiled baseline (docs/measurements.md, 2026-12-03 17:10Z): its tensor
// pipe 1.1% busy; the executed count was not recorded, any count but 0 is the case.
const std::string kTensorPipeBusy = "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active=1.1,"
                                    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active=1.1,"
                                    "sm__inst_executed_pipe_tensor.sum=262144";

// kernelloop-cli; the exit code and what it printed.
std::pair<int, QString> cli(const QStringList& arguments)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(QStringLiteral(KL_CLI_PATH), arguments);
    if (!process.waitForFinished(120000))
        return { -1, QStringLiteral("timed out") };
    return { process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -2,
        QString::fromUtf8(process.readAll()) };
}

// kernelloop-cli evaluate with the runner double.
std::pair<int, QString> evaluate(const QString& db, const QString& candidate)
{
    return cli({ QStringLiteral("evaluate"), kExample + QStringLiteral("problem.json"), candidate,
        QStringLiteral("--db"), db, QStringLiteral("--runner"), QStringLiteral(KL_MODEL_RUNNER),
        QStringLiteral("--metrics"), QStringLiteral("sol") });
}

// The rule ids of each iteration of the store's only session, and their messages for a failure's text.
std::vector<std::set<std::string>> findingsOf(const QString& db, QString* messages)
{
    const auto store = kl::store::Store::open(db.toStdString(), kl::store::Store::Options { .readOnly = true });
    std::vector<std::set<std::string>> out;
    for (const auto& row : store.listIterations(1)) {
        const auto detail = store.iteration(1, row.index);
        std::set<std::string> ids;
        for (const auto& f : detail->findings) {
            ids.insert(f.ruleId);
            *messages += QString::number(row.index) + QStringLiteral(": ") + QString::fromStdString(f.ruleId)
                + QStringLiteral(" ") + QString::fromStdString(f.message) + QStringLiteral("\n");
        }
        out.push_back(std::move(ids));
    }
    return out;
}

} // namespace

class TestTensorFindings : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_output; // what the last evaluate printed
    int m_stores = 0;

    // The example's `file` evaluated into a store of its own, the runner double replaying the recorded reply
    // `fixture` with one more of its knobs set; the store's path, or empty (m_output says why) when it failed.
    QString evaluated(const QString& file, const std::string& fixture, const std::pair<std::string, std::string>& knob)
    {
        kl::test::ScopedEnv env { { "KL_MODEL_RUNNER_RECORDED", kFixtures + fixture }, knob };
        const QString db = m_dir.filePath(QStringLiteral("%1.db").arg(++m_stores));
        const auto [rc, text] = evaluate(db, kExample + file);
        m_output = text;
        return rc == 0 ? db : QString();
    }

private Q_SLOTS:
    // Iteration 1 is the problem's baseline and iteration 2 the same kernel again: answered from the
    // result cache, where no compile report is at hand. Both must say it from the code.
    void cudaCoreGemmIssuedNoTensorInstructions()
    {
        const QString db = evaluated(
            QStringLiteral("baseline.cu"), "gemm-tiled-sol-h200.json", { "KL_MODEL_RUNNER_METRICS", kTensorPipeBusy });
        QVERIFY2(!db.isEmpty(), qPrintable(m_output));
        QString messages;
        const auto iterations = findingsOf(db, &messages);
        QCOMPARE(iterations.size(), std::size_t(2));
        for (const auto& ids : iterations) {
            QVERIFY2(ids.count("compute.no-tensor-instructions"), qPrintable(messages));
            QVERIFY2(!ids.count("compute.tensor-pipe"), qPrintable(messages));
        }
        QVERIFY2(
            messages.contains(QStringLiteral("no mma.sync/wgmma.mma_async/wmma.mma in the PTX")), qPrintable(messages));
    }

    // The runner's measured tensor ceiling, recorded with the device, beside the theoretical one.
    void historyAndShowGiveTheMeasuredTensorCeiling()
    {
        const QString db = evaluated(
            QStringLiteral("baseline.cu"), "gemm-tiled-sol-h200.json", { "KL_MODEL_RUNNER_TENSOR_TFLOPS", "635.4" });
        QVERIFY2(!db.isEmpty(), qPrintable(m_output));
        const QString line = QStringLiteral(
            "tensor:     FP16 tensor ceiling 1070.5 TFLOP/s theoretical, 635.4 measured (mma.sync, 59%) at 1980 MHz\n");
        const auto history = cli({ QStringLiteral("history"), QStringLiteral("--db"), db });
        QVERIFY2(history.first == 0 && history.second.contains(line), qPrintable(history.second));
        const auto show = cli({ QStringLiteral("show"), QStringLiteral("2"), QStringLiteral("--db"), db });
        QVERIFY2(show.first == 0 && show.second.contains(line), qPrintable(show.second));
        // The GUI's roofline reads it typed: a roof beside the theoretical FP16 tensor one.
        const auto store = kl::store::Store::open(db.toStdString(), kl::store::Store::Options { .readOnly = true });
        const auto detail = store.iteration(1, 2);
        QVERIFY(detail && detail->result);
        const auto roofline = kl::figures::rooflineOf(*detail->result);
        QCOMPARE(roofline.measuredTensorGflops.value_or(0.0), 635400.0);
        QVERIFY(roofline.precisionPeakGflops && std::abs(*roofline.precisionPeakGflops - 1070530.6) < 1.0);
    }

    // The WMMA candidate's PTX holds wmma.mma: the tensor pipe's figure is the finding, whatever ran.
    void wmmaGemmIsReadByItsTensorPipe()
    {
        const QString db = evaluated(QStringLiteral("wmma.cu"), "gemm-wmma-sol-h200.json",
            { "KL_MODEL_RUNNER_METRICS", "sm__inst_executed_pipe_tensor.sum=0" });
        QVERIFY2(!db.isEmpty(), qPrintable(m_output));
        QString messages;
        const auto iterations = findingsOf(db, &messages);
        QCOMPARE(iterations.size(), std::size_t(2));
        QVERIFY2(!iterations.back().count("compute.no-tensor-instructions"), qPrintable(messages));
        QVERIFY2(iterations.back().count("compute.tensor-pipe"), qPrintable(messages));
    }
};

QTEST_GUILESS_MAIN(TestTensorFindings)
#include "test_tensor_findings.moc"

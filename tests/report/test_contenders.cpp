// PyTorch as a contender, shown honestly: the eager and torch.compile medians the runner timed in
// the same job as the candidate (cold L2, CUDA events) are read from the stored timing by one
// reader (core/figures/contenders.h) and shown by the figures (GUI), `show`, `history` and the
// exported kernel, per main size. The stored results are written as the loop writes them: the
// runner's typed reply (protocol::EvaluateResult with eager/torchCompile) through
// store::resultFromEvaluateResult into a real SQLite store. The numbers are made up (no recorded
// H200 reply with contenders exists yet); the keys and the path are the runner's.
#include "core/figures/contenders.h"
#include "core/figures/iteration_figures.h"
#include "core/report/kernel_export.h"
#include "core/report/size_figures.h"
#include "core/store/runner_result.h"
#include "core/store/store.h"

#include "store_fixtures.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QTest>

using namespace kl;

namespace {

protocol::TimingSummary summary(double median)
{
    protocol::TimingSummary s;
    s.medianUs = median;
    s.p20Us = median - 0.2;
    s.p80Us = median + 0.3;
    s.minUs = median - 0.5;
    s.meanUs = median;
    s.reps = 50;
    return s;
}

// The runner's reply for a candidate of `candidateUs` against eager (120 us) and, unless
// `compileError` is given, torch.compile (80 us).
store::ResultRecord storedReply(double candidateUs, const std::string& compileError = {})
{
    nlohmann::json reply = nlohmann::json::parse(R"({"v":1,"type":"result","id":"job-1","status":"ok",
        "category":"passed","detail":"verified"})");
    protocol::EvaluateResult result = reply.get<protocol::EvaluateResult>();
    protocol::Timing timing;
    timing.smClockMhz = 1980;
    protocol::CaseTiming c;
    c.label = "8192x4096";
    c.bytes = 134234112;
    c.candidate = summary(candidateUs);
    c.baseline = summary(90.0);
    c.copy = summary(33.6);
    c.gbps = c.bytes / (candidateUs * 1000.0);
    c.pctOfCopy = 33.6 / candidateUs * 100.0;
    c.speedupVsBaseline = 90.0 / candidateUs;
    // Speed of light as the runner gives it for LayerNorm+GELU: the copy binds, the FLOPs held to the
    // CUDA cores' FP32 ceiling (not a matrix product: the request's reason, echoed).
    c.flops = 671088640;
    c.compute = Precision::Fp32;
    c.computeReason = CeilingReason::NotMatrixProduct;
    c.ceilingTflops = 66.9;
    c.solUs = 33.6;
    c.pctOfSol = 33.6 / candidateUs * 100.0;
    c.solBound = Bound::Memory;
    c.eager = summary(120.0);
    c.speedupVsEager = 120.0 / candidateUs;
    if (compileError.empty()) {
        c.torchCompile = summary(80.0);
        c.speedupVsCompile = 80.0 / candidateUs;
    } else {
        c.torchCompileError = compileError;
    }
    timing.cases.push_back(c);
    result.timing = timing;
    return store::resultFromEvaluateResult(result, "13.0");
}

const char* kTritonSource = "import triton\nimport triton.language as tl\n\n"
                            "# @kl tunable BLOCK_N = 256 in 256..8192 pow2\n"
                            "# @kl launch k grid=(M) num_warps=(4) num_stages=(1) args=(x, y, N, BLOCK_N=BLOCK_N)\n"
                            "@triton.jit\ndef k(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):\n    pass\n";

// A Triton session: the baseline (1, 90 us), a faster candidate (2, 60 us), one whose
// torch.compile failed (3), and a failure (4).
std::int64_t tritonSession(store::Store& s, bool contenders = true)
{
    store::SessionRecord rec;
    rec.problemHash = s.addProblem(store::fixtures::problem());
    rec.device = "NVIDIA H200 #0";
    rec.proposer = "tuner";
    const auto id = s.createSession(rec);
    std::optional<std::int64_t> parent;
    for (int i = 0; i < 4; ++i) {
        auto c = store::fixtures::candidate(i, parent);
        c.source = kTritonSource;
        c.fileName = "candidate.py";
        c.tunables = { { "BLOCK_N", 256 << i } };
        const auto cid = s.addCandidate(id, c);
        const auto ref = s.beginIteration(id, cid, i);
        auto r = i == 3   ? store::fixtures::failedResult(i)
            : !contenders ? store::fixtures::passedResult(i)
            : i == 2      ? storedReply(75.0, "torch.compile failed: Dynamo does not support the op")
                          : storedReply(i == 0 ? 90.0 : 60.0);
        s.recordResult(ref, r);
        s.finishIteration(ref);
        parent = cid;
    }
    kl::store::SessionSummary summary;
    summary.stopReason = "budget";
    summary.bestIteration = 2;
    s.recordSessionSummary(id, summary);
    return id;
}

QString cli(const QStringList& arguments)
{
    QProcess p;
    p.start(QStringLiteral(KL_CLI_PATH), arguments);
    if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return QStringLiteral("(failed) ") + QString::fromUtf8(p.readAllStandardError());
    return QString::fromUtf8(p.readAllStandardOutput());
}

} // namespace

class TestContenders : public QObject {
    Q_OBJECT

private slots:
    void readFromTheStoredTiming()
    {
        const auto stored = storedReply(60.0);
        const auto c = figures::contendersOf(stored.timing.value());
        QCOMPARE(c.size(), std::size_t(1));
        QCOMPARE(c[0].size, std::string("8192x4096"));
        QCOMPARE(c[0].eagerUs.value_or(0), 120.0);
        QCOMPARE(c[0].torchCompileUs.value_or(0), 80.0);
        QCOMPARE(c[0].speedupVsEager.value_or(0), 2.0);
        QVERIFY(qFuzzyCompare(c[0].speedupVsCompile.value_or(0), 80.0 / 60.0));
        QCOMPARE(figures::contendersText(c[0]),
            std::string("vs eager 2.00x (eager 120.00 us), vs torch.compile 1.33x (torch.compile 80.00 us)"));
        // A CUDA reference has no contenders; a median that is none reads as absent.
        QVERIFY(figures::contendersOf(store::fixtures::passedResult(1).timing.value()).empty());
        auto none = stored.timing.value();
        none.cases[0].eager.reset();
        none.cases[0].torchCompile->medianUs = -1;
        none.cases[0].speedupVsEager.reset();
        none.cases[0].speedupVsCompile.reset();
        QVERIFY(figures::contendersOf(none).empty());
    }

    void figuresForTheGui()
    {
        QTemporaryDir dir;
        auto s = store::Store::open(dir.filePath(QStringLiteral("t.db")).toStdString());
        const auto id = tritonSession(s);
        const auto all = figures::readFigures(s, id);
        QCOMPARE(all.size(), std::size_t(4));
        QCOMPARE(all[1].sizes.at(0).eagerUs.value_or(0), 120.0);
        QCOMPARE(all[1].sizes.at(0).speedupVsEager.value_or(0), 2.0);
        QCOMPARE(all[1].sizes.at(0).torchCompileUs.value_or(0), 80.0);
        QVERIFY(!all[2].sizes.at(0).torchCompileUs);
        QCOMPARE(
            all[2].sizes.at(0).torchCompileError, std::string("torch.compile failed: Dynamo does not support the op"));
        QVERIFY(all[3].sizes.empty() || !all[3].sizes[0].eagerUs);
        const auto one = figures::figuresOf(*s.iteration(id, 2));
        QCOMPARE(one.sizes.at(0).speedupVsCompile, all[1].sizes.at(0).speedupVsCompile);
        QCOMPARE(report::sizeFiguresText(one.sizes.at(0)).find("; vs eager 2.00x") != std::string::npos, true);

        const auto cuda = tritonSession(s, false);
        for (const auto& f : figures::readFigures(s, cuda))
            for (const auto& size : f.sizes)
                QVERIFY(!size.eagerUs && size.torchCompileError.empty());
    }

    void exportedTritonKernel()
    {
        QTemporaryDir dir;
        auto s = store::Store::open(dir.filePath(QStringLiteral("t.db")).toStdString());
        const auto id = tritonSession(s);
        const auto text = report::exportKernel(s, id).text;
        QVERIFY2(text.rfind("# Exported by KernelLoop from session", 0) == 0, text.c_str());
        QVERIFY2(text.find("# Against the PyTorch reference timed in the same job (medians), 8192x4096: vs eager 2.00x "
                           "(eager 120.00 us), vs torch.compile 1.33x (torch.compile 80.00 us).")
                != std::string::npos,
            text.c_str());
        QVERIFY2(text.find("56.0% of SOL (memory; ceiling FP32 CUDA cores: not a matrix product)") != std::string::npos,
            text.c_str());
        // The chosen value becomes the tunable's default: Python has no #define.
        QVERIFY2(text.find("# @kl tunable BLOCK_N = 512 in 256..8192 pow2\n") != std::string::npos, text.c_str());
        QVERIFY2(text.find("#ifndef") == std::string::npos && text.find("\n//") == std::string::npos, text.c_str());
    }

    void showAndHistory()
    {
        QTemporaryDir dir;
        const auto db = dir.filePath(QStringLiteral("t.db"));
        {
            auto s = store::Store::open(db.toStdString());
            tritonSession(s);
        }
        if (qEnvironmentVariableIsSet("KL_KEEP_DB"))
            QFile::copy(db, qEnvironmentVariable("KL_KEEP_DB"));
        const auto show = cli({ QStringLiteral("show"), QStringLiteral("2"), QStringLiteral("--db"), db });
        QVERIFY2(show.contains(QStringLiteral("pytorch:    vs eager 2.00x (eager 120.00 us), vs torch.compile 1.33x "
                                              "(torch.compile 80.00 us) (same job, cold L2, medians)")),
            qPrintable(show));
        const auto failed = cli({ QStringLiteral("show"), QStringLiteral("3"), QStringLiteral("--db"), db });
        QVERIFY2(
            failed.contains(QStringLiteral("pytorch:    vs eager 1.60x (eager 120.00 us), torch.compile not timed: "
                                           "torch.compile failed: Dynamo")),
            qPrintable(failed));
        const auto history = cli({ QStringLiteral("history"), QStringLiteral("--db"), db });
        QVERIFY2(history.contains(QStringLiteral("\n       vs eager 2.00x (eager 120.00 us), vs torch.compile 1.33x")),
            qPrintable(history));
        // Each % of SOL says which ceiling the FLOPs are held to and why.
        QVERIFY2(show.contains(QStringLiteral(
                     "56.0% of SOL (memory; ceiling FP32 CUDA cores: not a matrix product), 1.50x vs baseline")),
            qPrintable(show));
        QVERIFY2(history.contains(QStringLiteral(
                     "\n%SOL: the larger of a same-size copy and the FLOPs at the ceiling FP32 CUDA cores: not a "
                     "matrix product\n")),
            qPrintable(history));
        QCOMPARE(history.count(QStringLiteral("%SOL: ")), 1); // once for the rows that share it
    }
};

QTEST_GUILESS_MAIN(TestContenders)
#include "test_contenders.moc"

// FLOPs of imported PyTorch problems: import-kernelbench counts the matrix products and convolutions of
// KernelBench-style files (tests/kernelbench/flops: a matmul, a convolution, attention written out) on
// meta tensors with Debian's CPU PyTorch 1.13 (python/kernelloop/flop_count.py), writes them over the size
// symbols, and `check` then shows which floor of speed of light binds and which ceiling: a product's
// (FP32 CUDA cores for these fp32 inputs), an element-wise operator's CUDA cores.
#include "kernelbench_cli.h"

#include "core/model/expression.h"
#include "core/model/problem.h"

#include <nlohmann/json.hpp>

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace kbtest;

namespace {
const QString kFiles = QStringLiteral(KL_SOURCE_DIR "/tests/kernelbench/flops/");

nlohmann::json problemJson(const QString& dir)
{
    return nlohmann::json::parse(readText(dir + QStringLiteral("/problem.json")).toStdString());
}
} // namespace

class TestFlopCount : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        if (!hasTorch())
            QSKIP("no PyTorch for /usr/bin/python3 (apt-get install python3-torch)");
    }

    void flopsOverTheSymbols_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("flops");
        QTest::addColumn<double>("atMain");
        QTest::addColumn<QString>("binds");
        // 2·M·N·K at M=1024, K=4096, N=2048.
        QTest::newRow("matmul") << QStringLiteral("matmul") << QStringLiteral("2 * M * K * N")
                                << 2.0 * 1024 * 4096 * 2048 << QStringLiteral("compute");
        // 2 · N · Cout · (H-2)(W-2) · Cin · 3·3, Cout = 64: 1152 = 2·64·9.
        QTest::newRow("conv") << QStringLiteral("conv")
                              << QStringLiteral("1152 * batch_size * in_channels * (height - 2) * (width - 2)")
                              << 1152.0 * 16 * 3 * 254 * 126 << QStringLiteral("memory");
        // Q·Kᵀ and P·V: 2 · 2 · B·H · S² · D.
        QTest::newRow("attention") << QStringLiteral("attention")
                                   << QStringLiteral("4 * seq_len * seq_len * head_dim * batch_size * heads")
                                   << 4.0 * 512 * 512 * 64 * 4 * 8 << QStringLiteral("compute");
    }

    void flopsOverTheSymbols()
    {
        QFETCH(QString, file);
        QFETCH(QString, flops);
        QFETCH(double, atMain);
        QFETCH(QString, binds);
        QTemporaryDir tmp;
        const QString dir = tmp.path() + QLatin1Char('/') + file;
        const auto run = importKernelBench(kFiles + file + QStringLiteral(".py"), dir);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        const auto p = problemJson(dir);
        QVERIFY2(p.contains("flops"), p.dump(1).c_str());
        QCOMPARE(QString::fromStdString(p["flops"].get<std::string>()), flops);
        const auto problem = kl::loadProblem((dir + QStringLiteral("/problem.json")).toStdString());
        QCOMPARE(problem.flops(problem.mainSizes.front()), atMain);
        // Each is a matrix product (its FLOPs per byte grow with the sizes), of fp32 inputs: FP32 CUDA cores.
        QVERIFY(problem.isMatrixProduct());
        QCOMPARE(
            problem.computeCeiling(), (kl::ComputeCeiling { kl::Precision::Fp32, kl::CeilingReason::MatrixProduct }));
        // check: the intensity and which floor binds on the nominal H200 (FP32: a ridge of ~15.7 FLOP/byte).
        const auto check = runCli({ QStringLiteral("check"), dir + QStringLiteral("/problem.json") });
        QVERIFY2(check.out.contains(QStringLiteral("speed of light: FLOPs in FP32 CUDA cores: a matrix product")),
            qPrintable(check.out));
        // The size's row ends with the floor that binds.
        const QRegularExpression row(binds + QStringLiteral("\\s*$"), QRegularExpression::MultilineOption);
        QVERIFY2(check.out.contains(row), qPrintable(check.out));
    }

    // Element-wise operators have no products to count: no "flops", as before.
    void noProductsNoFlops()
    {
        QTemporaryDir tmp;
        const QString dir = tmp.path() + QStringLiteral("/gelu");
        const auto run = importKernelBench(QStringLiteral(KL_SOURCE_DIR "/resources/kernelbench/gelu.py"), dir);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        QVERIFY(!problemJson(dir).contains("flops"));
        const auto problem = kl::loadProblem((dir + QStringLiteral("/problem.json")).toStdString());
        QCOMPARE(problem.computeCeiling(),
            (kl::ComputeCeiling { kl::Precision::Fp32, kl::CeilingReason::NotMatrixProduct }));
    }
};

QTEST_GUILESS_MAIN(TestFlopCount)
#include "test_flop_count.moc"

// The real kernelloop-cli binary: "check" on the bundled example (table, --set, --json) and its
// exit codes and messages for a malformed problem, a compile error and bad options.
#include "cli/command.h"
#include "fixtures.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run check(QStringList arguments)
{
    QProcess cli;
    cli.setWorkingDirectory(QStringLiteral(KL_SOURCE_DIR));
    arguments.prepend(QStringLiteral("check"));
    cli.start(QStringLiteral(KL_CLI_PATH), arguments);
    Run r;
    if (!cli.waitForFinished(60000) || cli.exitStatus() != QProcess::NormalExit)
        return r;
    r.exitCode = cli.exitCode();
    r.out = QString::fromUtf8(cli.readAllStandardOutput());
    r.err = QString::fromUtf8(cli.readAllStandardError());
    return r;
}

const QString kLayernorm = QStringLiteral("resources/examples/layernorm_gelu/problem.json");

// The row of the resources table for `kernel`, split into cells.
QStringList kernelRow(const QString& out, const QString& kernel)
{
    for (const auto& line : out.split(QLatin1Char('\n')))
        if (line.startsWith(kernel + QLatin1Char(' ')))
            return line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    return {};
}

} // namespace

class CompileCliTest : public QObject {
    Q_OBJECT

private slots:
    void tableForTheExample()
    {
        const auto r = check({ kLayernorm });
        QVERIFY2(r.exitCode == kl::cli::Ok, qPrintable(r.err));
        QVERIFY(r.out.contains(QStringLiteral("registers/thread")));
        QVERIFY(r.out.contains(QStringLiteral("occupancy")));
        QVERIFY(r.out.contains(QStringLiteral("CACHE=0 TANH=0 THREADS=128 VEC=1")));
        const auto row = kernelRow(r.out, QStringLiteral("layernorm_gelu"));
        QCOMPARE(row.value(1), QStringLiteral("32")); // registers/thread
        QVERIFY2(r.out.contains(QStringLiteral("100.0 %  warps")), qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("8192x4096")));
    }

    // The issue's --set example: more threads and wider vectors cost registers and occupancy.
    void setChangesRegistersAndOccupancy()
    {
        const auto r = check({ kLayernorm, QStringLiteral("--set"), QStringLiteral("THREADS=1024"),
            QStringLiteral("--set"), QStringLiteral("VEC=8"), QStringLiteral("--set"), QStringLiteral("CACHE=4") });
        QVERIFY2(r.exitCode == kl::cli::Ok, qPrintable(r.err));
        QCOMPARE(kernelRow(r.out, QStringLiteral("layernorm_gelu")).value(1), QStringLiteral("64"));
        QVERIFY2(r.out.contains(QStringLiteral("50.0 %  registers")), qPrintable(r.out));
    }

    // Speed of light names the ceiling and why: LayerNorm+GELU is no matrix product, so its 0.67 GFLOP are
    // held to the CUDA cores' FP32 ceiling (66.9 TFLOP/s on the nominal H200: 10.03 us, not FP16 tensor's
    // 0.63 us); the fp16 GEMM to FP16 tensor, as its "compute" says and as the rule gives without it.
    void speedOfLightCeiling()
    {
        const auto layernorm = check({ kLayernorm });
        QVERIFY2(layernorm.exitCode == kl::cli::Ok, qPrintable(layernorm.err));
        QVERIFY2(
            layernorm.out.contains(QStringLiteral("speed of light: FLOPs in FP32 CUDA cores: not a matrix "
                                                  "product (set \"compute\" to say otherwise), 256 FLOP/SM/clock")),
            qPrintable(layernorm.out));
        QVERIFY2(layernorm.out.contains(QStringLiteral("31.58 us       10.03 us  memory")), qPrintable(layernorm.out));

        const auto gemm = check({ QStringLiteral("resources/examples/gemm_fp16/problem.json") });
        QVERIFY2(gemm.exitCode == kl::cli::Ok, qPrintable(gemm.err));
        QVERIFY2(gemm.out.contains(QStringLiteral(
                     "speed of light: FLOPs in FP16 tensor: the problem's \"compute\", 4096 FLOP/SM/clock")),
            qPrintable(gemm.out));
        QVERIFY2(gemm.out.contains(QStringLiteral("128.38 us  compute")), qPrintable(gemm.out));

        QTemporaryDir dir;
        const QString example = QStringLiteral(KL_SOURCE_DIR "/resources/examples/gemm_fp16/");
        for (const char* source : { "reference.cu", "baseline.cu" })
            QVERIFY(QFile::copy(example + QLatin1String(source), dir.filePath(QLatin1String(source))));
        auto problem = nlohmann::json::parse(kl::test::readFile(example.toStdString() + "problem.json"));
        problem.erase("compute");
        QFile file(dir.filePath(QStringLiteral("problem.json")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray::fromStdString(problem.dump()));
        file.close();
        const auto derived = check({ file.fileName() });
        QVERIFY2(derived.exitCode == kl::cli::Ok, qPrintable(derived.err));
        QVERIFY2(derived.out.contains(QStringLiteral("speed of light: FLOPs in FP16 tensor: a matrix product (set "
                                                     "\"compute\" to say otherwise), 4096 FLOP/SM/clock")),
            qPrintable(derived.out));
        QVERIFY2(derived.out.contains(QStringLiteral("128.38 us  compute")), qPrintable(derived.out));
    }

    void json()
    {
        const auto r = check({ kLayernorm, QStringLiteral("--json") });
        QVERIFY2(r.exitCode == kl::cli::Ok, qPrintable(r.err));
        const auto j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["ok"].get<bool>(), true);
        QCOMPARE(j["compile"]["kernels"][0]["registers"].get<int>(), 32);
        QCOMPARE(j["launches"][0]["occupancy"]["blocks_per_sm"].get<int>(), 16);
        QCOMPARE(j["launches"][0]["size"].get<std::string>(), std::string("8192x4096"));
        QVERIFY(j["compile"]["compile_ms"].get<double>() > 0.0);
    }

    void malformedProblem()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto problem = nlohmann::json::parse(kl::test::readFile(kl::test::examplePath("layernorm_gelu")));
        problem["inputs"][1]["dtype"] = "f17";
        for (const char* source : { "baseline.cu", "reference.cu" })
            QVERIFY(
                QFile::copy(QStringLiteral(KL_SOURCE_DIR "/resources/examples/layernorm_gelu/") + QLatin1String(source),
                    dir.filePath(QLatin1String(source))));
        QFile file(dir.filePath(QStringLiteral("problem.json")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray::fromStdString(problem.dump()));
        file.close();

        const auto r = check({ file.fileName() });
        QCOMPARE(r.exitCode, int(kl::cli::BadInput));
        QVERIFY2(r.err.contains(QStringLiteral("inputs[1].dtype")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("error [problem.")), qPrintable(r.err));

        const auto j = check({ file.fileName(), QStringLiteral("--json") });
        QCOMPARE(j.exitCode, int(kl::cli::BadInput));
        const auto parsed = nlohmann::json::parse(j.out.toStdString());
        QCOMPARE(parsed["error"]["where"].get<std::string>(), std::string("inputs[1].dtype"));
    }

    void compileErrorShowsWhere()
    {
        const auto r = check(
            { kLayernorm, QStringLiteral("--candidate"), QStringLiteral("tests/fixtures/compile/errors/syntax.cu") });
        QCOMPARE(r.exitCode, int(kl::cli::Failure));
        QVERIFY2(r.err.contains(QStringLiteral("syntax.cu:6:5: error [syntax]: expected a \";\"")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("error [compile.syntax]")), qPrintable(r.err));
    }

    void badOptions_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown tunable") << QStringList { QStringLiteral("--set"), QStringLiteral("THREADZ=64") }
                                         << QStringLiteral("candidate.unknown-tunable");
        QTest::newRow("broken constraint") << QStringList { QStringLiteral("--set"), QStringLiteral("VEC=8"),
            QStringLiteral("--set"), QStringLiteral("CACHE=8") }
                                           << QStringLiteral("plan.constraint");
        QTest::newRow("not NAME=VALUE") << QStringList { QStringLiteral("--set"), QStringLiteral("THREADS") }
                                        << QStringLiteral("NAME=INTEGER");
        QTest::newRow("unknown arch") << QStringList { QStringLiteral("--arch"), QStringLiteral("sm_61") }
                                      << QStringLiteral("device.unknown-arch");
        // Bad input, not our bug: these were "[internal] stoll" / "stoi" with exit 1, or exit 0.
        QTest::newRow("20-digit value") << QStringList { QStringLiteral("--set"),
            QStringLiteral("THREADS=99999999999999999999") }
                                        << QStringLiteral("[cli.bad-set]");
        QTest::newRow("11-digit arch") << QStringList { QStringLiteral("--arch"), QStringLiteral("sm_99999999999") }
                                       << QStringLiteral("[device.unknown-arch]");
        QTest::newRow("empty arch") << QStringList { QStringLiteral("--arch"), QString() }
                                    << QStringLiteral("[cli.bad-option]");
        QTest::newRow("empty candidate") << QStringList { QStringLiteral("--candidate"), QString() }
                                         << QStringLiteral("[cli.bad-option]");
    }

    // Any error line means a non-zero exit: 300 KiB of dynamic shared memory cannot launch, so the
    // candidate failed (exit 1, as README's exit codes say), with --json too.
    void errorLineMeansNonZeroExit()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString example = QStringLiteral(KL_SOURCE_DIR "/resources/examples/layernorm_gelu/");
        for (const char* file : { "problem.json", "reference.cu" })
            QVERIFY(QFile::copy(example + QLatin1String(file), dir.filePath(QLatin1String(file))));
        auto baseline
            = QString::fromStdString(kl::test::readFile((example + QStringLiteral("baseline.cu")).toStdString()));
        QVERIFY(baseline.contains(QStringLiteral("smem=(0)")));
        baseline.replace(QStringLiteral("smem=(0)"), QStringLiteral("smem=(300 * 1024)"));
        QFile out(dir.filePath(QStringLiteral("baseline.cu")));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(baseline.toUtf8());
        out.close();
        for (const auto& extra : { QStringList {}, QStringList { QStringLiteral("--json") } }) {
            const auto r = check(QStringList { dir.filePath(QStringLiteral("problem.json")) } + extra);
            QVERIFY2(r.err.contains(QStringLiteral("error [compile.too-many-resources]")), qPrintable(r.err));
            QCOMPARE(r.exitCode, int(kl::cli::Failure));
        }
    }

    void badOptions()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        arguments.prepend(kLayernorm);
        const auto r = check(arguments);
        QCOMPARE(r.exitCode, int(kl::cli::BadInput));
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(CompileCliTest)
#include "test_compile_cli.moc"

// `kernelloop-cli show N --compare-code M` as a user runs it on the bundled H200 sessions: the SASS of
// the WMMA rewrite against its parent with the instruction mix, and, for the tuner session that kept no
// listing, the PTX of both iterations compiled here (real NVRTC) saying so.
#include <QProcess>
#include <QtTest/QTest>

namespace {

QString show(const QStringList& arguments)
{
    QProcess cli;
    cli.start(QStringLiteral(KL_CLI_PATH), QStringList { QStringLiteral("show") } + arguments);
    if (!cli.waitForFinished(60000) || cli.exitCode() != 0)
        return QStringLiteral("failed: ") + QString::fromUtf8(cli.readAllStandardError());
    return QString::fromUtf8(cli.readAllStandardOutput());
}

} // namespace

class TestShowCompareCodeCli : public QObject {
    Q_OBJECT

private slots:
    void sassOfTwoIterationsWithTheirMix()
    {
        const QString out
            = show({ QStringLiteral("2"), QStringLiteral("--compare-code"), QStringLiteral("1"), QStringLiteral("--db"),
                QStringLiteral(KL_SOURCE_DIR "/resources/sessions/gemm_fp16-wmma-h200.klsession") });
        QVERIFY2(out.contains(QStringLiteral("SASS of iteration 2 against iteration 1: +")), qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("tensor core (HMMA, WGMMA...)            0       40      +40")),
            qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("--- iteration 1\n+++ iteration 2\n")), qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("\n+    HMMA.16816.F32 ")), qPrintable(out));
    }

    void ptxCompiledHereWhereNoListingWasStored()
    {
        const QString out
            = show({ QStringLiteral("6"), QStringLiteral("--compare-code"), QStringLiteral("4"), QStringLiteral("--db"),
                QStringLiteral(KL_SOURCE_DIR "/resources/sessions/layernorm_gelu-h200.klsession") });
        QVERIFY2(out.contains(QStringLiteral("PTX of iteration 6 against iteration 4: +")), qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("PTX compared: neither iteration 4 nor iteration 6 has SASS (compiled "
                                             "here from the stored source (NVRTC ")),
            qPrintable(out));
        QVERIFY2(out.contains(QStringLiteral("\nglobal loads ")), qPrintable(out));
    }

    void anIterationThatIsNotThereIsAnError()
    {
        QVERIFY(
            show({ QStringLiteral("2"), QStringLiteral("--compare-code"), QStringLiteral("9"), QStringLiteral("--db"),
                     QStringLiteral(KL_SOURCE_DIR "/resources/sessions/gemm_fp16-wmma-h200.klsession") })
                .startsWith(QStringLiteral("failed: ")));
    }
};

QTEST_GUILESS_MAIN(TestShowCompareCodeCli)
#include "test_show_compare_code_cli.moc"

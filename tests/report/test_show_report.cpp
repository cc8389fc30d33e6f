// `kernelloop-cli show` says what the GUI's Verification, Evidence, Findings and Metrics pages say, from
// core (issue 26): the verification report per case (and a failed case's window), the evidence behind
// the figures (tolerances, the floor checks), findings' evidence as text, and each metric's unit and
// direction. Golden: the report lines of `show` on the bundled H200 sessions, against
// tests/fixtures/show/*.txt (regenerate with KL_UPDATE_GOLDEN=1 after a deliberate change). The static
// facts are words too (ptxas's registers, shared memory, occupancy), never the stored JSON.
#include "tests/test_files.h"

#include <QFile>
#include <QProcess>
#include <QtTest/QTest>

namespace {

// The lines of `show` that the report adds, in order.
QString reportLines(const QString& out)
{
    QStringList kept;
    for (const QString& line : out.split(QLatin1Char('\n')))
        if (line.startsWith(QLatin1String("verified:")) || line.startsWith(QLatin1String("  case "))
            || line.startsWith(QLatin1String("  window ")) || line.startsWith(QLatin1String("evidence:"))
            || line.startsWith(QLatin1String("  evidence: ")) || line.startsWith(QLatin1String("  metric "))
            || line.startsWith(QLatin1String("static:")))
            kept.append(line);
    return kept.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

} // namespace

class TestShowReport : public QObject {
    Q_OBJECT

private slots:
    void showSaysWhatThePagesSay_data()
    {
        QTest::addColumn<QString>("session");
        QTest::addColumn<QString>("iteration");
        QTest::addColumn<QString>("golden");
        // A failed verification with its window (the GUI's llm-verification screenshot).
        QTest::newRow("failed verification") << QStringLiteral("layernorm_gelu-llm-replay-h200.klsession")
                                             << QStringLiteral("3") << QStringLiteral("llm-replay-3.txt");
        // A passed, profiled candidate: its findings' evidence and the metrics with units.
        QTest::newRow("findings and metrics")
            << QStringLiteral("layernorm_gelu-h200.klsession") << QStringLiteral("6") << QStringLiteral("tuner-6.txt");
        // Tensor cores: the static facts name the kernel's mma instructions.
        QTest::newRow("tensor instructions") << QStringLiteral("gemm_fp16-wmma-h200.klsession") << QStringLiteral("2")
                                             << QStringLiteral("gemm-wmma-2.txt");
    }
    void showSaysWhatThePagesSay()
    {
        QFETCH(QString, session);
        QFETCH(QString, iteration);
        QFETCH(QString, golden);
        const QString db
            = QString::fromStdString(kl::test::sourceDir()) + QStringLiteral("/resources/sessions/") + session;
        QProcess cli;
        cli.start(QStringLiteral(KL_CLI_PATH), { QStringLiteral("show"), iteration, QStringLiteral("--db"), db });
        QVERIFY(cli.waitForFinished(30000));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
        const QString report = reportLines(QString::fromUtf8(cli.readAllStandardOutput()));
        const QString path
            = QString::fromStdString(kl::test::sourceDir()) + QStringLiteral("/tests/fixtures/show/") + golden;
        if (qEnvironmentVariableIsSet("KL_UPDATE_GOLDEN")) {
            QFile out(path);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(report.toUtf8());
        }
        QFile expected(path);
        QVERIFY2(expected.open(QIODevice::ReadOnly), qPrintable(path));
        QCOMPARE(report, QString::fromUtf8(expected.readAll()));
        QVERIFY(report.contains(QLatin1String("verified:   ")));
        QVERIFY(report.contains(QLatin1String("evidence:   tolerance ")));
        QVERIFY(!report.contains(QLatin1Char('{'))); // text, not JSON
    }
};

QTEST_GUILESS_MAIN(TestShowReport)
#include "test_show_report.moc"

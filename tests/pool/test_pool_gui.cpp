// The pool in the GUI: the run dialog's endpoints fill the recipe's runners (one a line, Slurm
// arguments with spaces kept), runners file and remote runner, and the `kernelloop-cli tune` line
// round-trips; the pool status panel shows a real pool's status() (runner doubles, one killed on
// every job and quarantined); the history table names the runner and GPU of each iteration. Offscreen;
// $KL_POOL_SCREENSHOTS=DIR saves pool-status.png and run-dialog-pool.png there (docs/images).
#include "pool_support.h"
#include "widgets/history_panel.h"
#include "widgets/iteration_selection.h"
#include "widgets/iteration_table_model.h"
#include "widgets/pool_status_panel.h"
#include "widgets/run_dialog.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QtTest/QTest>

#include <set>

using namespace kl;
using namespace kl::test;

namespace {
void screenshot(QWidget* widget, const QString& name)
{
    const QString dir = qEnvironmentVariable("KL_POOL_SCREENSHOTS");
    if (dir.isEmpty())
        return;
    QDir().mkpath(dir);
    QTest::qWait(100);
    QVERIFY(widget->grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png")));
}
} // namespace

class TestPoolGui : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void runDialogTakesEndpoints()
    {
        gui::RunDialog dialog;
        auto* endpoints = dialog.findChild<QPlainTextEdit*>(QStringLiteral("runnerEndpoints"));
        auto* file = dialog.findChild<QLineEdit*>(QStringLiteral("runnersFile"));
        auto* remote = dialog.findChild<QLineEdit*>(QStringLiteral("remoteRunner"));
        QVERIFY(endpoints && file && remote);
        endpoints->setPlainText(QStringLiteral("local:all\n  ssh:me@gpu-box:1\n# a comment\nslurm:-p gpu --time=60\n"));
        file->setText(QStringLiteral("/home/me/runners"));
        remote->setText(QStringLiteral("/opt/kl/bin/kernelloop-runner"));
        const auto r = dialog.recipe();
        QCOMPARE(int(r.runners.size()), 3);
        QCOMPARE(QString::fromStdString(r.runners[0]), u"local:all"_qs);
        QCOMPARE(QString::fromStdString(r.runners[1]), u"ssh:me@gpu-box:1"_qs);
        QCOMPARE(QString::fromStdString(r.runners[2]), u"slurm:-p gpu --time=60"_qs);
        QCOMPARE(QString::fromStdString(r.runnersFile), u"/home/me/runners"_qs);
        QCOMPARE(QString::fromStdString(r.remoteRunner), u"/opt/kl/bin/kernelloop-runner"_qs);
        const QString line = dialog.commandLine();
        QVERIFY2(line.contains(u"--runner local:all"_qs), qPrintable(line));
        QVERIFY2(line.contains(u"--runners-file"_qs), qPrintable(line));
        QVERIFY(session::parseCommandLine(line.toStdString()) == r);
        gui::RunDialog other;
        QCOMPARE(other.useCommandLine(line), QString());
        QCOMPARE(other.findChild<QPlainTextEdit*>(QStringLiteral("runnerEndpoints"))->toPlainText(),
            u"local:all\nssh:me@gpu-box:1\nslurm:-p gpu --time=60"_qs);
        QVERIFY(other.recipe() == r);
        dialog.resize(1100, dialog.sizeHint().height());
        screenshot(&dialog, QStringLiteral("run-dialog-pool"));
    }

    void panelShowsThePool()
    {
        // As test_runner_pool's quarantine case: jobs long enough that the killed runner gets one each round.
        ScopedEnv env({ { "KL_MODEL_RUNNER_KILL_DEVICE", "1" }, { "KL_MODEL_RUNNER_DELAY_MS", "600" } });
        pool::RunnerPool runners(endpoints({ "local:0", "local:1" }), modelPoolOptions());
        PooledSession s;
        s.run(runners, 2, 2);
        const auto status = runners.status();
        gui::PoolStatusPanel panel;
        panel.setStatus(status);
        auto* t = panel.table();
        QCOMPARE(t->rowCount(), 2);
        QCOMPARE(t->columnCount(), 6);
        QCOMPARE(t->item(0, 0)->text(), u"local:0"_qs);
        QCOMPARE(t->item(0, 1)->text(), u"Model GPU #0"_qs);
        QCOMPARE(t->item(1, 2)->text(), u"quarantined"_qs);
        QVERIFY2(t->item(1, 5)->text().contains(u"[runner.lost]"_qs), qPrintable(t->item(1, 5)->text()));
        int jobs = 0;
        for (int row = 0; row < 2; ++row)
            jobs += t->item(row, 3)->text().toInt();
        QCOMPARE(jobs, s.summary.evaluated);
        QVERIFY2(panel.summaryText().startsWith(u"1 of 2 runners usable"_qs), qPrintable(panel.summaryText()));
        panel.resize(900, 200);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        // No clipped column: every column but the last is as wide as its widest cell wants.
        const auto fm = t->fontMetrics();
        for (int c = 0; c + 1 < t->columnCount(); ++c)
            for (int row = 0; row < t->rowCount(); ++row)
                QVERIFY2(t->columnWidth(c) > fm.horizontalAdvance(t->item(row, c)->text()),
                    qPrintable(t->item(row, c)->text()));
        screenshot(&panel, QStringLiteral("pool-status"));
    }

    // The history table says which runner and GPU measured each iteration of a pooled session, as
    // `history` does: the results' endpoints and devices, read with the session's figures.
    void historyNamesTheGpuOfEachIteration()
    {
        // Jobs longer than a compile: the round's candidates run on both runners at once.
        ScopedEnv env({ { "KL_MODEL_RUNNER_DELAY_MS", "2000" } });
        pool::RunnerPool runners(endpoints({ "local:0", "local:1" }), modelPoolOptions());
        PooledSession s;
        s.run(runners, 1, 3);
        QCOMPARE(s.summary.passed, 4);
        const auto id = s.summary.sessionId;
        auto rows = std::make_shared<gui::SessionView>();
        rows->session = *s.store.session(id);
        rows->rows = s.store.listIterations(id);
        rows->indexCandidates();
        gui::IterationTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(!model.setSession(rows));
        QCOMPARE(model.headerData(gui::IterationTableModel::GpuColumn, Qt::Horizontal).toString(), u"GPU"_qs);
        // Before the figures arrive the cells are empty, then they change in place.
        QCOMPARE(model.index(0, gui::IterationTableModel::GpuColumn).data().toString(), QString());
        auto withFigures = std::make_shared<gui::SessionView>(*rows);
        withFigures->figures = figures::readFigures(s.store, id);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QVERIFY(model.setSession(withFigures));
        QCOMPARE(changed.count(), 1);
        std::set<QString> shown;
        for (const auto& o : s.finished) {
            const int row = model.rowOf(o.index);
            QVERIFY(row >= 0);
            const QString text = model.index(row, gui::IterationTableModel::GpuColumn).data().toString();
            QCOMPARE(text, QString::fromStdString(o.endpoint) + u" · Model GPU"_qs);
            shown.insert(text);
        }
        QCOMPARE(shown, (std::set<QString> { u"local:0 · Model GPU"_qs, u"local:1 · Model GPU"_qs }));
        // The panel shows the GPU column; no PyTorch reference, so no "vs eager".
        gui::IterationSelection selection;
        gui::HistoryPanel panel(&selection);
        panel.showSession(withFigures);
        QVERIFY(!panel.table()->isColumnHidden(gui::IterationTableModel::GpuColumn));
        QVERIFY(panel.table()->isColumnHidden(gui::IterationTableModel::VsEagerColumn));
        QVERIFY(panel.table()->isColumnHidden(gui::IterationTableModel::VsCompileColumn));
    }
};

QTEST_MAIN(TestPoolGui)
#include "test_pool_gui.moc"

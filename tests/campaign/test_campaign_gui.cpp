// The campaign report in the workbench, offscreen: a campaign run by the real CLI over the runner double,
// then Review ▸ Campaign Report on its store: the table (model tester) has its problems with the figures
// of the report, the plot saves as PNG and SVG, and a double-click on a problem opens its session in the
// review workspace.
#include "app/main_window.h"
#include "app/review_workspace.h"
#include "core/campaign/campaign_report.h"
#include "core/store/campaign_store.h"
#include "core/store/store.h"
#include "widgets/campaign_table_model.h"
#include "widgets/campaign_view.h"
#include "widgets/iteration_selection.h"
#include "widgets/session_view.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QImage>
#include <QLabel>
#include <QMenuBar>
#include <QProcess>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace kl;

class TestCampaignGui : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void reportOpensItsSessions()
    {
        QTemporaryDir dir;
        const auto db = dir.filePath(u"s.db"_qs);
        const QString examples = QStringLiteral(KL_SOURCE_DIR "/resources/examples/");
        QProcess cli;
        cli.start(QStringLiteral(KL_CLI),
            { u"campaign"_qs, u"--name"_qs, u"g"_qs, u"--db"_qs, db, u"--runner"_qs, QStringLiteral(KL_MODEL_RUNNER),
                u"--runner"_qs, u"local:0"_qs, u"--runner"_qs, u"local:1"_qs, u"--budget"_qs, u"2"_qs, u"--metrics"_qs,
                u"none"_qs, examples + u"layernorm_gelu"_qs, examples + u"softmax_bf16"_qs,
                examples + u"gemm_fp16"_qs });
        QVERIFY(cli.waitForFinished(120'000));
        const QByteArray said = cli.readAllStandardOutput() + cli.readAllStandardError();
        QVERIFY2(cli.exitCode() == 0, said.constData());

        gui::MainWindow window;
        window.resize(1200, 800);
        window.show();
        QVERIFY(window.openStore(db));
        QAction* action = nullptr;
        for (QAction* menu : window.menuBar()->actions())
            if (menu->menu())
                for (QAction* a : menu->menu()->actions())
                    if (a->text() == gui::MainWindow::tr("Campaign &Report…"))
                        action = a;
        QVERIFY(action);
        QVERIFY(action->isEnabled());
        action->trigger();
        auto* view = window.findChild<gui::CampaignView*>();
        QVERIFY(view);
        QAbstractItemModelTester tester(view->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(view->model()->rowCount(), 3);
        QVERIFY2(view->summary()->text().contains(u"3 done"_qs), said.constData());

        // The table's figures are the report's.
        const auto report = view->model()->report();
        for (int row = 0; row < 3; ++row) {
            const auto& r = report->rows[std::size_t(row)];
            QCOMPARE(view->model()->index(row, gui::CampaignTableModel::SpeedupColumn).data().toString(),
                QString::number(*r.speedup, 'f', 2) + u"x"_qs);
            QCOMPARE(
                view->model()->index(row, 0).data(gui::CampaignTableModel::SessionIdRole).toLongLong(), r.sessionId);
        }

        // The plot, both ways.
        QCOMPARE(view->savePlot(dir.filePath(u"plot.png"_qs)), QString());
        QImage png(dir.filePath(u"plot.png"_qs));
        QVERIFY(!png.isNull() && png.width() > 400);
        QCOMPARE(view->savePlot(dir.filePath(u"plot.svg"_qs)), QString());
        QVERIFY(QFile(dir.filePath(u"plot.svg"_qs)).size() > 500);

        // A double-click on the second problem opens its session.
        const auto wanted = report->rows[1].sessionId;
        QSignalSpy opened(view, &gui::CampaignView::openSessionRequested);
        const auto index = view->model()->index(1, gui::CampaignTableModel::ProblemColumn);
        QVERIFY(QTest::qWaitForWindowExposed(view));
        view->view()->scrollTo(index);
        const QRect cell = view->view()->visualRect(index);
        QVERIFY(cell.isValid());
        QTest::mouseClick(view->view()->viewport(), Qt::LeftButton, {}, cell.center());
        QTest::mouseDClick(view->view()->viewport(), Qt::LeftButton, {}, cell.center());
        QCOMPARE(opened.count(), 1);
        QCOMPARE(opened.front().front().toLongLong(), wanted);
        QTRY_VERIFY(
            window.review()->selection()->session() && window.review()->selection()->session()->session.id == wanted);
        QCOMPARE(window.currentWorkspace(), gui::MainWindow::Workspace::Review);
    }
};

QTEST_MAIN(TestCampaignGui)
#include "test_campaign_gui.moc"

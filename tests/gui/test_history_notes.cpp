// The window's history says what `kernelloop-cli history` says around the iterations (issue 26): on the
// bundled H200 LLM session, the stop line with pass@k and speedup@k above the table is the CLI's line,
// and the Hypotheses tab holds the rows of `history --hypotheses` (prediction, measured speedup and the
// decision that measured it); choosing one selects its iteration everywhere.
#include "app/review_workspace.h"
#include "review_fixture.h"
#include "widgets/history_panel.h"
#include "widgets/hypothesis_log_model.h"
#include "widgets/iteration_selection.h"

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QProcess>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

using namespace kl;
using namespace kl::gui;

namespace {

QStringList cliLines(const QStringList& arguments)
{
    QProcess cli;
    cli.start(QStringLiteral(KL_CLI), arguments);
    if (!cli.waitForFinished(60000) || cli.exitCode() != 0)
        return {};
    return QString::fromUtf8(cli.readAllStandardOutput()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

} // namespace

class TestHistoryNotes : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { testing::useTestSettings(QStringLiteral("test_gui_history_notes")); }

    void historySaysTheStopLineAndTheHypothesesAsTheCliDoes()
    {
        const QStringList history
            = cliLines({ QStringLiteral("history"), QStringLiteral("--db"), testing::llmSession });
        QVERIFY(!history.isEmpty());
        QVERIFY2(history.last().startsWith(u"stopped: "_qs), qPrintable(history.last()));
        QVERIFY(history.last().contains(u"pass@k 0.75, speedup@k 1.19x"_qs));
        QStringList hypotheses = cliLines(
            { QStringLiteral("history"), QStringLiteral("--hypotheses"), QStringLiteral("--db"), testing::llmSession });
        QCOMPARE(hypotheses.size(), 6); // the header and five iterations
        hypotheses.removeFirst();

        auto review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        HistoryPanel* panel = review->history();
        QAbstractItemModelTester tester(
            panel->hypothesisModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        testing::openAndWait(*review, testing::llmSession);
        QVERIFY(review->hasSession());

        // One model measured it all: the stop line alone, as the CLI's last line.
        QVERIFY(panel->note()->isVisible());
        QCOMPARE(panel->note()->text(), history.last());

        const HypothesisLogModel* log = panel->hypothesisModel();
        QCOMPARE(log->rowCount(), 5);
        for (int row = 0; row < log->rowCount(); ++row) {
            // "   2 llm      passed                      1.45x     1.48x  new best: 1.484x [1.482, 1.486] faster over
            // ..."
            const QStringList printed = hypotheses[row].split(QLatin1Char(' '), Qt::SkipEmptyParts);
            const auto cell = [&](int column) { return log->index(row, column).data().toString(); };
            QCOMPARE(cell(HypothesisLogModel::IterationColumn), printed[0]);
            QCOMPARE(cell(HypothesisLogModel::ProposerColumn), printed[1]);
            QCOMPARE(cell(HypothesisLogModel::VerdictColumn), printed[2]);
            QCOMPARE(cell(HypothesisLogModel::PredictedColumn).replace(u"×"_qs, u"x"_qs).replace(u"–"_qs, u"-"_qs),
                printed[3]);
            QCOMPARE(cell(HypothesisLogModel::SpeedupColumn).replace(u"×"_qs, u"x"_qs).replace(u"–"_qs, u"-"_qs),
                printed[4]);
            // The CLI cuts the decision at 44 characters and the hypothesis at 80; the panel has them whole.
            const QString measured = cell(HypothesisLogModel::MeasuredColumn);
            QVERIFY2(hypotheses[row].contains(measured.left(44)), qPrintable(measured));
            QVERIFY2(hypotheses[row].endsWith(cell(HypothesisLogModel::HypothesisColumn).left(80)),
                qPrintable(hypotheses[row]));
        }
        QVERIFY(log->index(1, HypothesisLogModel::MeasuredColumn)
                    .data()
                    .toString()
                    .startsWith(u"new best: 1.484x [1.482, 1.486] faster"_qs));

        // The log follows the selection, and choosing a row selects its iteration.
        review->selection()->select(4);
        QCOMPARE(panel->hypotheses()->currentIndex().row(), 3);
        panel->tabs()->setCurrentWidget(panel->hypotheses());
        panel->hypotheses()->setCurrentIndex(log->index(1, HypothesisLogModel::MeasuredColumn));
        QCOMPARE(review->selection()->current(), 2);
    }

    // A session without a stored summary (an interrupted run) shows no stop line and no empty bar.
    void noSummaryNoNote()
    {
        SessionView view;
        view.session.id = 7;
        IterationSelection selection;
        HistoryPanel panel(&selection);
        panel.showSession(std::make_shared<const SessionView>(view));
        QVERIFY(panel.note()->isHidden());
        QCOMPARE(panel.hypothesisModel()->rowCount(), 0);
    }

    // Results of two GPU models: the warning the CLI prints, under the stop line.
    void twoGpuModelsAreWarnedAbout()
    {
        SessionView view;
        view.session.id = 8;
        view.summary = LoopSummary {};
        view.summary->stopReason = "target 2.0x reached";
        view.summary->evaluated = 3;
        for (const auto* model : { "NVIDIA H200", "NVIDIA H200", "NVIDIA A100-SXM4-80GB" }) {
            figures::IterationFigures f;
            f.index = int(view.figures.size()) + 1;
            f.gpuModel = model;
            view.figures.push_back(f);
        }
        IterationSelection selection;
        HistoryPanel panel(&selection);
        panel.showSession(std::make_shared<const SessionView>(view));
        QVERIFY(!panel.note()->isHidden());
        QCOMPARE(panel.note()->text(),
            u"stopped: target 2.0x reached; 3 candidates in 0.0 s (0.0/min)\nwarning [store.mixed-gpu-models]: results "
            u"of 2 GPU models (NVIDIA A100-SXM4-80GB: 1, NVIDIA H200: 2); each speedup is against the baseline on its "
            u"own GPU, never compare across models"_qs);
    }
};

QTEST_MAIN(TestHistoryNotes)
#include "test_history_notes.moc"

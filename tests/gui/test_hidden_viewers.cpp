// Panels nobody can see wait (issue 10: the GUI thread's stalls while a live session streams): a
// viewer behind another tab keeps only the newest session and focus and draws them when it is shown;
// the panels in view stay exactly current. A live refresh of the same session appends rows to the
// history models (under QAbstractItemModelTester) and points to the latency chart's series instead of
// rebuilding them. On the bundled recorded LLM session, in a shown workspace.
#include "app/review_workspace.h"
#include "review_fixture.h"
#include "widgets/bandwidth_chart.h"
#include "widgets/charts_panel.h"
#include "widgets/iteration_selection.h"
#include "widgets/iteration_table_model.h"
#include "widgets/kernel_editor.h"
#include "widgets/latency_chart.h"
#include "widgets/line_profile_panel.h"
#include "widgets/proposal_tree_model.h"
#include "widgets/source_panel.h"
#include "widgets/string_conversion.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>
#include <QtCharts/QXYSeries>

#include <set>
#include <string>

using namespace kl;
using namespace kl::gui;

namespace {

int inspectorIndex(ReviewWorkspace& review, const QString& title)
{
    for (int i = 0; i < review.inspector()->count(); ++i)
        if (review.inspector()->tabText(i) == title)
            return i;
    return -1;
}

// The session as it looked when only its first `rows` iterations were committed.
std::shared_ptr<const SessionView> firstRows(const SessionView& session, std::size_t rows)
{
    auto view = std::make_shared<SessionView>(session);
    view->rows.resize(std::min(rows, view->rows.size()));
    view->figures.resize(std::min(rows, view->figures.size()));
    return view;
}

qsizetype pointsOf(const QChart* chart, const QString& name)
{
    for (QAbstractSeries* series : chart->series())
        if (series->name() == name)
            if (auto* xy = qobject_cast<QXYSeries*>(series))
                return xy->count();
    return -1;
}

QString sourceOf(const IterationFocus& focus)
{
    return focus.detail && focus.detail->candidate ? toQString(focus.detail->candidate->source) : QString();
}

} // namespace

class TestHiddenViewers : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { testing::useTestSettings(QStringLiteral("test_gui_hidden_viewers")); }

    void hiddenLinesPanelShowsTheNewestIterationWhenShown()
    {
        auto review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        testing::openAndWait(*review, testing::llmSession);
        IterationSelection* selection = review->selection();
        const int lines = inspectorIndex(*review, QStringLiteral("Lines"));
        QVERIFY(lines > 0);
        auto* panel = qobject_cast<LineProfilePanel*>(review->inspector()->widget(lines));
        QVERIFY(panel);
        QVERIFY(!panel->isVisible());
        // Seen once at iteration 1, then hidden behind Source again.
        selection->select(1);
        review->inspector()->setCurrentIndex(lines);
        QCOMPARE(pendingUpdates(panel), 0);
        const QString first = panel->editor()->source();
        QCOMPARE(first, sourceOf(*selection->focus()));
        review->inspector()->setCurrentIndex(0);

        // Hidden: N selections leave it as it was, with one focus waiting (the newest), while the
        // Source panel in front follows every one of them.
        const int rows = static_cast<int>(selection->session()->rows.size());
        QVERIFY(rows >= 4);
        QString newest;
        for (int index = 2; index <= rows; ++index) {
            selection->select(index);
            QCOMPARE(review->sourcePanel()->editor()->source(), sourceOf(*selection->focus()));
            QCOMPARE(pendingUpdates(panel), 1);
            QCOMPARE(panel->editor()->source(), first);
            newest = sourceOf(*selection->focus());
        }
        QVERIFY(newest != first); // or the test could not tell the two apart
        // Shown: the newest iteration, before anything is painted.
        review->inspector()->setCurrentIndex(lines);
        QCOMPARE(pendingUpdates(panel), 0);
        QCOMPARE(panel->editor()->source(), newest);
        // In view, it follows at once.
        selection->select(1);
        QCOMPARE(panel->editor()->source(), first);
    }

    void hiddenChartDrawsTheNewestSessionWhenShown()
    {
        auto review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        testing::openAndWait(*review, testing::llmSession);
        IterationSelection* selection = review->selection();
        ChartsPanel* charts = review->charts();
        QCOMPARE(charts->tabs()->currentWidget(), static_cast<QWidget*>(charts->latency()));
        BandwidthChart* bandwidth = charts->bandwidth();
        QVERIFY(!bandwidth->isVisible());
        const auto full = selection->session();
        const qsizetype rows = static_cast<qsizetype>(full->rows.size());
        const QString pct = QStringLiteral("% of copy");
        // Shown once with the whole session, then hidden.
        charts->tabs()->setCurrentWidget(bandwidth);
        const qsizetype drawn = pointsOf(bandwidth->chart(), pct);
        QVERIFY(drawn > 2);
        charts->tabs()->setCurrentWidget(charts->latency());

        // A live session's refreshes, 2 rows, 3 rows, ...: the latency chart in view draws each, the
        // hidden bandwidth chart keeps what it drew.
        for (qsizetype shown = 2; shown < rows; ++shown) {
            selection->updateSession(firstRows(*full, std::size_t(shown)));
            QVERIFY(pointsOf(charts->latency()->chart(), QStringLiteral("median")) <= shown);
            QCOMPARE(pointsOf(bandwidth->chart(), pct), drawn);
            QVERIFY(pendingUpdates(bandwidth) >= 1);
        }
        const auto last = firstRows(*full, std::size_t(rows - 1));
        qsizetype expected = 0;
        for (const auto& f : last->figures)
            if (f.passed && f.atSize(bandwidth->size()) && f.atSize(bandwidth->size())->pctOfCopy)
                ++expected;
        QVERIFY(expected < drawn);
        charts->tabs()->setCurrentWidget(bandwidth);
        QCOMPARE(pendingUpdates(bandwidth), 0);
        QCOMPARE(pointsOf(bandwidth->chart(), pct), expected);
    }

    void liveRefreshAppendsInsteadOfRebuilding()
    {
        auto review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        testing::openAndWait(*review, testing::llmSession);
        const auto full = review->selection()->session();
        const std::size_t rows = full->rows.size();

        IterationTableModel table;
        ProposalTreeModel tree;
        QAbstractItemModelTester tableTester(&table, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester treeTester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(!table.setSession(firstRows(*full, 1))); // a first fill resets
        QVERIFY(!tree.setSession(firstRows(*full, 1)));
        QSignalSpy tableReset(&table, &QAbstractItemModel::modelReset);
        QSignalSpy treeReset(&tree, &QAbstractItemModel::modelReset);
        QSignalSpy tableInserted(&table, &QAbstractItemModel::rowsInserted);
        QSignalSpy treeInserted(&tree, &QAbstractItemModel::rowsInserted);
        for (std::size_t shown = 2; shown <= rows; ++shown) {
            QVERIFY(table.setSession(firstRows(*full, shown)));
            QVERIFY(tree.setSession(firstRows(*full, shown)));
        }
        QCOMPARE(tableReset.count(), 0);
        QCOMPARE(treeReset.count(), 0);
        QCOMPARE(tableInserted.count(), int(rows - 1));
        QCOMPARE(treeInserted.count(), int(rows - 1));
        // What was appended reads as a model filled at once.
        ProposalTreeModel fresh;
        fresh.setSession(full);
        QCOMPARE(table.rowCount(), int(rows));
        for (const auto& row : full->rows) {
            const QModelIndex a = tree.indexOf(row.index), b = fresh.indexOf(row.index);
            QVERIFY(a.isValid());
            QCOMPARE(a.row(), b.row());
            QCOMPARE(
                a.parent().data(ProposalTreeModel::IterationRole), b.parent().data(ProposalTreeModel::IterationRole));
            QCOMPARE(a.siblingAtColumn(IterationTableModel::VerdictColumn).data(),
                b.siblingAtColumn(IterationTableModel::VerdictColumn).data());
        }
        // A changed row (its decision recorded later) is announced, not reset.
        auto changed = std::make_shared<SessionView>(*full);
        changed->rows[0].topFindingMessage = "a later finding";
        QSignalSpy tableChanged(&table, &QAbstractItemModel::dataChanged);
        QSignalSpy treeChanged(&tree, &QAbstractItemModel::dataChanged);
        QVERIFY(table.setSession(changed));
        QVERIFY(tree.setSession(changed));
        QCOMPARE(tableChanged.count(), 1);
        QCOMPARE(treeChanged.count(), 1);
        QCOMPARE(
            table.index(0, IterationTableModel::FindingColumn).data().toString(), QStringLiteral("a later finding"));
        // Another session resets.
        auto other = std::make_shared<SessionView>(*full);
        other->session.id += 1000;
        QVERIFY(!table.setSession(other));
        QCOMPARE(tableReset.count(), 1);

        // The latency chart keeps its series over refreshes that bring no new failure category (one
        // that does adds a lane, and the series are created anew) and takes the new points.
        auto failedIn = [&](std::size_t shown) {
            std::set<std::string> categories;
            for (std::size_t i = 0; i < shown && i < full->figures.size(); ++i)
                if (!full->figures[i].passed)
                    categories.insert(full->figures[i].category);
            return categories;
        };
        std::size_t from = 2;
        while (from < rows && failedIn(from) != failedIn(rows))
            ++from;
        QVERIFY2(from + 1 < rows, "the recorded session gives no refresh without a new category");
        LatencyChart* latency = review->charts()->latency();
        review->selection()->updateSession(firstRows(*full, from));
        const int created = latency->seriesCreated();
        const qsizetype before = pointsOf(latency->chart(), QStringLiteral("median"));
        for (std::size_t shown = from + 1; shown <= rows; ++shown)
            review->selection()->updateSession(firstRows(*full, shown));
        QCOMPARE(latency->seriesCreated(), created);
        QVERIFY(pointsOf(latency->chart(), QStringLiteral("median")) > before);
    }
};

QTEST_MAIN(TestHiddenViewers)
#include "test_hidden_viewers.moc"

// The diff panel lays out its table only when it is seen: a rewrite's diff costs QTextDocument
// ~40 ms, which stalled the window when a live session's refresh filled the hidden Diff tab
// (bench/gui/bench_live_stall). Its header and figures stay current while hidden; the text is laid
// out when the tab is shown, or when a caller reads body().
#include "app/review_workspace.h"
#include "review_fixture.h"
#include "widgets/diff_panel.h"
#include "widgets/iteration_selection.h"

#include <QTabWidget>
#include <QTest>
#include <QTextBrowser>

using namespace kl;
using namespace kl::gui;

class TestDiffPanelDeferred : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { testing::useTestSettings(QStringLiteral("test_gui_diff_panel_deferred")); }

    void hiddenDiffIsLaidOutWhenShown()
    {
        auto review = testing::shownReviewWorkspace();
        QVERIFY(QTest::qWaitForWindowExposed(review.get()));
        testing::openAndWait(*review, testing::llmSession);
        DiffPanel* diff = review->diffPanel();
        QVERIFY(review->inspector()->currentWidget() != diff); // the Source tab is in front
        auto* text = diff->findChild<QTextBrowser*>(); // the browser itself, not body(), which lays it out
        QVERIFY(text);
        review->selection()->select(4);
        // Hidden: the figures and header are current, the table waits.
        QVERIFY2(diff->headerText().contains(QStringLiteral("against its parent, iteration 2")),
            qPrintable(diff->headerText()));
        QCOMPARE(diff->shownDiff().added, 10);
        QVERIFY(!text->toPlainText().contains(QStringLiteral("tanh.approx.f32")));
        // Shown: laid out.
        review->inspector()->setCurrentWidget(diff);
        QVERIFY(diff->isVisible());
        QVERIFY(text->toPlainText().contains(QStringLiteral("tanh.approx.f32")));
        // A selection while it is shown is laid out at once; hidden again, the next one waits.
        review->selection()->select(2);
        const QString shown = text->toPlainText();
        QVERIFY(!shown.isEmpty());
        review->inspector()->setCurrentIndex(0);
        review->selection()->select(4);
        QCOMPARE(text->toPlainText(), shown);
        // Read through body(): laid out for the reader.
        QVERIFY(diff->body()->toPlainText().contains(QStringLiteral("tanh.approx.f32")));
    }
};

QTEST_MAIN(TestDiffPanelDeferred)
#include "test_diff_panel_deferred.moc"

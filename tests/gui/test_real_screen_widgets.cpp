// Issue 28, the widgets on their own: what a first-contact test on a real screen found broken.
#include "tab_bar_check.h"
#include "widgets/charts_panel.h"
#include "widgets/fitting_tab_widget.h"
#include "widgets/iteration_selection.h"
#include "widgets/latency_chart.h"
#include "widgets/run_dialog.h"
#include "widgets/session_browser.h"
#include "widgets/session_view.h"

#include <QComboBox>
#include <QGroupBox>
#include <QLabel>
#include <QTabBar>
#include <QTest>
#include <QToolButton>

using namespace kl;
using namespace kl::gui;

namespace {

figures::IterationFigures timed(int index, double medianUs)
{
    figures::IterationFigures f;
    f.index = index;
    f.status = "ok";
    f.category = "passed";
    f.passed = true;
    figures::SizeFigures size;
    size.size = "8192x4096";
    size.medianUs = medianUs;
    size.p20Us = medianUs * 0.99;
    size.p80Us = medianUs * 1.01;
    size.baselineUs = 100.0;
    f.sizes.push_back(size);
    return f;
}

} // namespace

class TestRealScreenWidgets : public QObject {
    Q_OBJECT
private slots:
    // A live session's rows and figures are read apart: the baseline can be committed between the
    // two reads, so the figures hold an iteration the rows do not. The charts drew from rows.back()
    // and crashed (SIGSEGV in LatencyChart::rebuild after a finished session, then a live start).
    void chartsDrawFiguresAheadOfTheRows()
    {
        IterationSelection selection;
        ChartsPanel panel(&selection);
        panel.resize(800, 500);
        panel.show();
        auto view = std::make_shared<SessionView>();
        view->session.id = 2;
        view->figures = { timed(1, 80.0) };
        auto failed = figures::IterationFigures();
        failed.index = 2;
        failed.status = "failed";
        failed.category = "wrong-result";
        view->figures.push_back(failed);
        view->sizes = figures::timedSizes(view->figures);
        selection.setSession(view, {});
        LatencyChart* latency = panel.latency();
        QVERIFY(latency);
        latency->redraw();
        QCOMPARE(latency->failedCategories(), QStringList { QStringLiteral("wrong-result") });
        QCOMPARE(latency->baselineValue(), std::optional<double>(100.0));
    }

    // Every metric set the CLI takes is offered, and a pasted line keeps its set: "From a line" with
    // --metrics lines left the combo at "default" and the session ran without PC sampling.
    void runDialogOffersEveryMetricSet()
    {
        RunDialog dialog;
        auto* metrics = dialog.findChild<QComboBox*>(QStringLiteral("metrics"));
        QVERIFY(metrics);
        for (const char* set : { "none", "default", "sol", "stalls", "lines", "deep" }) {
            QVERIFY2(metrics->findText(QLatin1String(set)) >= 0, set);
            QCOMPARE(dialog.useCommandLine(
                         QStringLiteral("kernelloop-cli tune p.json --metrics %1").arg(QLatin1String(set))),
                QString());
            QCOMPARE(QString::fromStdString(dialog.recipe().metrics), QLatin1String(set));
            QVERIFY(dialog.commandLine().contains(QStringLiteral("--metrics %1").arg(QLatin1String(set)))
                || std::string(set) == "default");
        }
    }

    // The dialog in groups as the engineer decides (problem, proposer, budget, runner, LLM), each field
    // in its group, the whole dialog within a 1366x768 laptop's screen under a title bar.
    void runDialogIsGroupedAndFitsALaptop()
    {
        RunDialog dialog;
        auto groupOf = [](QWidget* field) {
            for (QWidget* w = field ? field->parentWidget() : nullptr; w; w = w->parentWidget())
                if (auto* group = qobject_cast<QGroupBox*>(w))
                    return group->title();
            return QString();
        };
        const std::pair<const char*, const char*> fields[]
            = { { "start", "Problem" }, { "language", "Problem" }, { "metrics", "Proposer" }, { "runner", "Runner" },
                  { "runnerEndpoints", "Runner" }, { "runnersFile", "Runner" }, { "remoteRunner", "Runner" } };
        for (const auto& [name, group] : fields)
            QCOMPARE(groupOf(dialog.findChild<QWidget*>(QLatin1String(name))), QLatin1String(group));
        QStringList titles;
        for (auto* group : dialog.findChildren<QGroupBox*>())
            titles << group->title();
        for (const char* title : { "Problem", "Proposer", "Budget", "Runner", "LLM" })
            QVERIFY2(titles.contains(QLatin1String(title)), qPrintable(titles.join(QLatin1Char(','))));
        const QSize hint = dialog.sizeHint();
        QVERIFY2(hint.width() <= 1366 && hint.height() <= 768 - 40,
            qPrintable(QStringLiteral("%1x%2").arg(hint.width()).arg(hint.height())));
    }

    // The tab widget alone: room for every tab keeps the style's padding; less room takes padding
    // away, never the labels; far too little scrolls as a plain tab bar.
    void tabsGiveUpPaddingBeforeTheyScroll()
    {
        FittingTabWidget tabs;
        tabs.setDocumentMode(true);
        for (const char* title :
            { "Source", "Diff", "Verification", "Metrics", "Findings", "Evidence", "LLM", "Lines", "Code Diff" })
            tabs.addTab(new QWidget, QString::fromLatin1(title));
        tabs.resize(1200, 200);
        tabs.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tabs));
        const int full = tabs.tabPadding();
        QCOMPARE(test::cutTabs(&tabs), QStringList());
        int needed = 0;
        for (int i = 0; i < tabs.count(); ++i)
            needed += tabs.tabBar()->tabRect(i).width();
        tabs.resize(needed - 60, 200);
        QVERIFY2(test::cutTabs(&tabs).isEmpty(), qPrintable(test::cutTabs(&tabs).join(QLatin1Char('\n'))));
        QVERIFY(tabs.tabPadding() < full);
        tabs.resize(needed / 2, 200);
        QCOMPARE(tabs.tabPadding(), FittingTabWidget::kLeastPadding);
        QVERIFY(!test::cutTabs(&tabs).isEmpty()); // scrolls: the labels are still whole, some out of view
        tabs.resize(1200, 200);
        QCOMPARE(tabs.tabPadding(), full);
        QCOMPARE(test::cutTabs(&tabs), QStringList());
    }

    // The empty states point to the window's own way to a session, not to a command to type elsewhere.
    void emptyStatesPointToNewSession()
    {
        SessionBrowser browser;
        QStringList texts;
        for (const QLabel* label : browser.findChildren<QLabel*>())
            texts << label->text();
        QVERIFY2(texts.join(QLatin1Char(' ')).contains(QStringLiteral("Session ▸ New Session")),
            qPrintable(texts.join(QLatin1Char('|'))));
        browser.setSessions({});
        texts.clear();
        for (const QLabel* label : browser.findChildren<QLabel*>())
            texts << label->text();
        QVERIFY(texts.join(QLatin1Char(' ')).contains(QStringLiteral("Session ▸ New Session")));
        QVERIFY(!texts.join(QLatin1Char(' ')).contains(QStringLiteral("kernelloop-cli")));
    }
};

QTEST_MAIN(TestRealScreenWidgets)
#include "test_real_screen_widgets.moc"

// Issue 28, the window on a real screen, offscreen: a 1366x768 laptop and a 1920x1080 monitor. The
// window (with room for a title bar) and its status bar stay on the screen in each workspace and
// while a proposal waits for review; long messages do not widen it; Reject works from the keyboard;
// a session runs on the runner the run dialog names while the default one has no GPU.
// Real parts: the runner double at the process boundary, the LLM replay server over loopback.
#include "app/analysis.h"
#include "app/live_session.h"
#include "app/main_window.h"
#include "app/review_workspace.h"
#include "app/session_controller.h"
#include "live_window.h"
#include "real_screens.h"
#include "review_fixture.h"
#include "review_replay.h"
#include "tests/llm/replay_bodies.h"
#include "tests/llm/replay_server.h"
#include "tests/scoped_env.h"
#include "widgets/diff_panel.h"
#include "widgets/history_panel.h"
#include "widgets/iteration_selection.h"
#include "widgets/iteration_table_model.h"
#include "widgets/kernel_editor.h"
#include "widgets/phase_strip.h"
#include "widgets/review_panel.h"
#include "widgets/run_dialog.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QHeaderView>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>
#include <QToolBar>

#include <nlohmann/json.hpp>

using namespace kl;
using namespace kl::gui;

namespace {

const QString examplePath = QStringLiteral(KL_SOURCE_DIR "/resources/examples/layernorm_gelu/problem.json");

// What a window manager's title bar takes above the window on the screens tried (openbox: 20-30 px).
constexpr int kTitleBar = 40;

// Empty when the window, with a title bar above it, and its status bar are on a screen of `screen`.
QString fits(MainWindow& window, QSize screen)
{
    QTest::qWait(100); // docks shown on the event loop lay out on it
    const int room = screen.height() - kTitleBar;
    if (window.minimumSizeHint().height() > room)
        return QStringLiteral("the window needs %1 px of height, the screen has %2 under its title bar")
            .arg(window.minimumSizeHint().height())
            .arg(room);
    if (window.height() > room || window.width() > screen.width())
        return QStringLiteral("the window is %1x%2 on a %3x%4 screen")
            .arg(window.width())
            .arg(window.height())
            .arg(screen.width())
            .arg(screen.height());
    QStatusBar* status = window.statusBar();
    if (!status->isVisible() || status->mapTo(&window, QPoint(0, status->height())).y() > window.height())
        return QStringLiteral("the status bar is not on the window");
    return {};
}

// With KL_SCREENSHOT_DIR the states are saved as PNGs (docs/images through KL_SCREENSHOTS_TO_DOCS).
void screenshot(QWidget* widget, const QString& name)
{
    const QString dir = qEnvironmentVariable("KL_SCREENSHOT_DIR");
    if (dir.isEmpty())
        return;
    QTest::qWait(150); // the charts lay out on the event loop
    QVERIFY(widget->grab().save(dir + QLatin1Char('/') + name + QStringLiteral(".png")));
}

} // namespace

class TestRealScreen : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelLoopTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_gui_real_screen"));
        qputenv("KERNELLOOP_NO_KEYCHAIN", "1");
        qputenv("KERNELLOOP_RUNNER", KL_MODEL_RUNNER);
        qputenv("KL_TEST_LLM_KEY", "sk-kl-real-screen-test");
        qunsetenv("KL_MODEL_RUNNER_NO_DEVICE");
        qunsetenv("KL_MODEL_RUNNER_DELAY_MS");
    }

    void editorWorkspaceFitsALaptop()
    {
        MainWindow window;
        const QSize laptop(1366, 768);
        window.resize(laptop.width(), laptop.height() - kTitleBar);
        window.show();
        QVERIFY(window.openProblem(examplePath));
        window.showWorkspace(MainWindow::Workspace::Editor);
        QString why = fits(window, laptop);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        window.showWorkspace(MainWindow::Workspace::Review);
        why = fits(window, laptop);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    // A long status or phase-strip message is cut, not a wider window.
    void longMessagesDoNotWidenTheWindow()
    {
        MainWindow window;
        window.resize(1366, 728);
        window.show();
        QVERIFY(window.openProblem(examplePath));
        const QString longText = QStringLiteral("[runner.lost] ") + QString(400, QLatin1Char('x'));
        emit window.review()->statusMessage(longText, true); // what a failed read says in the status bar
        SessionController* controller = window.sessionController();
        controller->phaseStrip()->setState(longText);
        controller->phaseStrip()->parentWidget()->show();
        QTest::qWait(100);
        QVERIFY2(window.width() <= 1366 && window.minimumSizeHint().width() <= 1366,
            qPrintable(QStringLiteral("%1 / %2").arg(window.width()).arg(window.minimumSizeHint().width())));
        QVERIFY(controller->phaseStrip()->text().endsWith(longText)); // whole for tests and the tooltip
    }

    // The no-GPU banner quotes the loader ("libcuda.so.1: cannot open shared object file: ..."): on one
    // line it made the window 1544 px wide on a 1366-px laptop. It wraps instead.
    void noGpuBannerDoesNotWidenTheWindow()
    {
        const test::ScopedEnv noDevice { { "KL_MODEL_RUNNER_NO_DEVICE",
            "libcuda.so.1: cannot open shared object file: No such file or directory (test)" } };
        MainWindow window;
        QVERIFY(test::openWithRunner(window, examplePath, QStringLiteral(KL_MODEL_RUNNER), QSize(1366, 728)));
        QVERIFY(window.sessionController()->noDevice());
        QTRY_VERIFY(window.findChild<QToolBar*>(QStringLiteral("noGpuBanner"))->isVisible());
        QVERIFY2(window.width() <= 1366 && window.minimumSizeHint().width() <= 1366,
            qPrintable(QStringLiteral("%1 / %2").arg(window.width()).arg(window.minimumSizeHint().width())));
        const QString why = fits(window, QSize(1366, 768));
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    void reviewDockKeepsTheWindowOnTheScreen_data()
    {
        QTest::addColumn<QSize>("screen");
        QTest::newRow("1366x768") << QSize(1366, 768);
        QTest::newRow("1920x1080") << QSize(1920, 1080);
    }

    // A proposal arrives in review mode: the Proposal Review dock opens with its long plan, the diff and
    // the static report, and the window stays within the screen with the buttons on it. Then Reject
    // from the keyboard (Ctrl+Shift+R, also once File ▸ Reload Problem) sends the reason.
    void reviewDockKeepsTheWindowOnTheScreen()
    {
        QFETCH(QSize, screen);
        QTemporaryDir dir;
        test::ReplayServer server;
        test::serveVariants(server, 40);
        const test::ScopedEnv env { { "KL_MODEL_RUNNER_RECORDED", test::recordedSession() } };
        MainWindow window;
        window.move(screen.width() == 1366 ? QPoint(0, 0) : QPoint(1366, 0)); // onto that screen
        QVERIFY(test::openWithRunner(
            window, examplePath, QStringLiteral(KL_MODEL_RUNNER), QSize(screen.width(), screen.height() - kTitleBar)));
        SessionController* controller = window.sessionController();
        QCOMPARE(controller->startSession(test::reviewRecipe(dir.filePath(QStringLiteral("r.db")), server)), QString());
        ReviewPanel* panel = controller->reviewPanel();
        QTRY_VERIFY_WITH_TIMEOUT(panel->hasRequest(), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(!panel->staticText().startsWith(QStringLiteral("Compiling")), 20000);
        QVERIFY(panel->planText().contains(QStringLiteral("sentence 39")));
        // The diff names the files, not where the baseline was read from (a temporary folder's path).
        QVERIFY2(
            panel->diffText().contains(QStringLiteral("--- incumbent/baseline.cu")), qPrintable(panel->diffText()));
        QVERIFY(!panel->diffText().contains(QStringLiteral(KL_SOURCE_DIR)));
        const QString why = fits(window, screen);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        screenshot(&window, QStringLiteral("live-review-panel-%1").arg(screen.width()));
        for (QPushButton* button : { panel->acceptButton(), panel->rejectButton() }) {
            QVERIFY(button->isVisible());
            const QPoint bottom = button->mapTo(&window, QPoint(0, button->height()));
            QVERIFY2(bottom.y() <= window.height(), qPrintable(QString::number(bottom.y())));
        }

        // Reject from the keyboard, with the reason typed in the panel.
        QVERIFY(QTest::qWaitForWindowActive(&window));
        panel->reasonEdit()->setFocus();
        QTest::keyClicks(panel->reasonEdit(), QStringLiteral("KEY-REASON: keep the scalar tail"));
        QTest::keyClick(panel->reasonEdit(), Qt::Key_R, Qt::ControlModifier | Qt::ShiftModifier);
        QVERIFY2(!panel->hasRequest(), "Ctrl+Shift+R did not reject");
        QVERIFY(server.waitForRequests("/v1/chat/completions", 2, std::chrono::seconds(20)));
        QVERIFY(server.requests().back().body.find("KEY-REASON") != std::string::npos);
        controller->stop();
        QTRY_VERIFY_WITH_TIMEOUT(!controller->live()->running(), 20000);
    }

    // No GPU here, a GPU elsewhere: the default runner has no device, the run dialog's Runner field (a
    // command line, as ssh would be) or an endpoint names one that has; the session runs on it. The
    // default runner alone is still refused with the runner's words.
    void runnerFromTheDialogWhileTheDefaultHasNoDevice()
    {
        const test::ScopedEnv noDevice { { "KL_MODEL_RUNNER_NO_DEVICE", "cuInit failed: CUDA_ERROR_NO_DEVICE (test)" },
            { "KL_MODEL_RUNNER_RECORDED", test::recordedSession() } };
        QTemporaryDir dir;
        MainWindow window;
        QVERIFY(test::openWithRunner(window, examplePath, QStringLiteral(KL_MODEL_RUNNER), QSize(1366, 728)));
        SessionController* controller = window.sessionController();
        QVERIFY(controller->noDevice());
        const QString elsewhere = QStringLiteral("env -u KL_MODEL_RUNNER_NO_DEVICE " KL_MODEL_RUNNER);
        for (const bool asEndpoint : { false, true }) {
            RunDialog dialog(&window);
            session::SessionRecipe recipe;
            recipe.problem = examplePath.toStdString();
            recipe.db = dir.filePath(asEndpoint ? QStringLiteral("e.db") : QStringLiteral("r.db")).toStdString();
            recipe.budget = 1;
            recipe.metrics = "none";
            recipe.trials = 1;
            dialog.setRecipe(recipe);
            if (asEndpoint)
                dialog.findChild<QPlainTextEdit*>(QStringLiteral("runnerEndpoints"))
                    ->setPlainText(QStringLiteral("cmd:") + elsewhere);
            else
                dialog.findChild<QLineEdit*>(QStringLiteral("runner"))->setText(elsewhere);
            QCOMPARE(controller->startSession(dialog.recipe()), QString());
            QTRY_VERIFY_WITH_TIMEOUT(!controller->live()->running(), 60000);
            QVERIFY2(controller->live()->finalStatus() == QStringLiteral("finished"),
                qPrintable(controller->live()->lastError()));
            QVERIFY(controller->live()->iterations().size() >= 2); // the baseline and a candidate, measured
        }
        // The default runner, probed: refused, and the refusal says where a GPU elsewhere goes.
        session::SessionRecipe local;
        local.problem = examplePath.toStdString();
        local.db = dir.filePath(QStringLiteral("n.db")).toStdString();
        const QString refused = controller->startSession(local);
        QVERIFY2(refused.startsWith(QStringLiteral("[runner.no-device]")), qPrintable(refused));
        QVERIFY(refused.contains(QStringLiteral("Runner endpoints")));
    }

    // Side by side: each side its own pane with a title, both sides readable at a laptop's inspector
    // width (the old one table gave the old side the pane and ~12 characters to the new side).
    void sideBySideDiffHasAPaneEachSide()
    {
        MainWindow window;
        window.resize(1366, 728);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy figures(window.review(), &ReviewWorkspace::figuresShown);
        QVERIFY(window.openStore(testing::llmSession));
        QVERIFY(figures.wait(20000));
        ReviewWorkspace* review = window.review();
        DiffPanel* diff = review->diffPanel();
        review->inspector()->setCurrentWidget(diff);
        diff->setLayout(DiffPanel::Layout::SideBySide);
        review->selection()->select(4);
        QTest::qWait(50);
        QCOMPARE(diff->beforeTitle(), QStringLiteral("− Iteration 2 (its parent)"));
        QCOMPARE(diff->afterTitle(), QStringLiteral("+ Iteration 4"));
        QTextBrowser* before = diff->beforePane();
        QTextBrowser* after = diff->afterPane();
        QVERIFY(before->isVisible() && after->isVisible());
        QVERIFY(after->toPlainText().contains(QStringLiteral("tanh.approx.f32"))); // the new side's new line
        QVERIFY(!before->toPlainText().contains(QStringLiteral("tanh.approx.f32")));
        // Each side has at least 40 % of the panel's width, and its own horizontal scroll.
        QVERIFY2(after->width() >= diff->width() * 2 / 5, qPrintable(QString::number(after->width())));
        QVERIFY(before->width() >= diff->width() * 2 / 5);
        QVERIFY(before->horizontalScrollBar() != after->horizontalScrollBar());
        // Rows scroll together.
        after->verticalScrollBar()->setValue(after->verticalScrollBar()->maximum() / 2);
        QCOMPARE(before->verticalScrollBar()->value(), after->verticalScrollBar()->value());
        screenshot(&window, QStringLiteral("review-diff-side-by-side-1366"));
    }

    // The history of every bundled session reads without sideways scrolling in a 1366-px window: the
    // top finding, the one long text, gives way (elided, whole in its tooltip).
    void historyFitsALaptop_data()
    {
        QTest::addColumn<QString>("session");
        QTest::newRow("tuner") << testing::tunerSession;
        QTest::newRow("llm") << testing::llmSession;
        QTest::newRow("kernelbench") << QStringLiteral(
            KL_SOURCE_DIR "/resources/sessions/kernelbench-softmax-triton-h200.klsession");
    }

    void historyFitsALaptop()
    {
        QFETCH(QString, session);
        MainWindow window;
        window.resize(1366, 728);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy figures(window.review(), &ReviewWorkspace::figuresShown);
        QVERIFY(window.openStore(session));
        QVERIFY(figures.wait(20000));
        QTest::qWait(50);
        QTableView* table = window.review()->history()->table();
        const int columns = table->horizontalHeader()->length();
        QStringList widths; // what each column takes, for the message
        for (int column = 0; column < IterationTableModel::ColumnCount; ++column)
            if (!table->isColumnHidden(column))
                widths << QStringLiteral("%1 %2")
                              .arg(table->model()->headerData(column, Qt::Horizontal).toString())
                              .arg(table->columnWidth(column));
        QVERIFY2(columns <= table->viewport()->width(),
            qPrintable(QStringLiteral("the history's columns take %1 px in a %2 px pane: %3")
                           .arg(columns)
                           .arg(table->viewport()->width())
                           .arg(widths.join(QStringLiteral(", ")))));
        QCOMPARE(table->horizontalScrollBar()->maximum(), 0);
    }

    // The run dialog opens with the last run's fields (not its key), on the problem open now.
    void runDialogRemembersTheLastRun()
    {
        QSettings().remove(QStringLiteral("session/lastCommandLine"));
        const test::ScopedEnv recorded { { "KL_MODEL_RUNNER_RECORDED", test::recordedSession() } };
        QTemporaryDir dir;
        MainWindow window;
        QVERIFY(test::openWithRunner(window, examplePath, QStringLiteral(KL_MODEL_RUNNER), QSize(1366, 728)));
        SessionController* controller = window.sessionController();
        const QString db = dir.filePath(QStringLiteral("remembered.db"));
        auto answer = [&](bool run) {
            QTimer::singleShot(0, &window, [&, run] {
                auto* dialog = qobject_cast<RunDialog*>(QApplication::activeModalWidget());
                QVERIFY(dialog);
                if (run) {
                    dialog->useCommandLine(QStringLiteral("kernelloop-cli tune %1 --db %2 --runner %3 --budget 1 "
                                                          "--metrics lines --label remembered-label")
                                               .arg(examplePath, db, QStringLiteral(KL_MODEL_RUNNER)));
                    dialog->accept();
                } else {
                    const auto recipe = dialog->recipe();
                    QCOMPARE(QString::fromStdString(recipe.label), QStringLiteral("remembered-label"));
                    QCOMPARE(QString::fromStdString(recipe.metrics), QStringLiteral("lines"));
                    QCOMPARE(recipe.budget, 1);
                    QCOMPARE(QString::fromStdString(recipe.db), db);
                    dialog->reject();
                }
            });
        };
        answer(true);
        controller->showRunDialog();
        QTRY_VERIFY_WITH_TIMEOUT(!controller->live()->running(), 60000);
        answer(false);
        controller->showRunDialog();
    }

    // A kernel the editor marks as not compiling is not sent to the runner; the status bar says why.
    void editorDoesNotSendANonCompilingKernel()
    {
        MainWindow window;
        QVERIFY(test::openWithRunner(window, examplePath, QStringLiteral(KL_MODEL_RUNNER), QSize(1366, 728)));
        QTRY_VERIFY_WITH_TIMEOUT(!window.isAnalysing() && window.lastOutcome(), 60000);
        QSignalSpy analysed(&window, &MainWindow::analysisShown);
        window.editor()->setSource(window.editor()->source() + QStringLiteral("\nthis is not C++ at all;\n"));
        window.analyseNow(); // as the pause after typing does
        QVERIFY(analysed.wait(60000));
        QTRY_VERIFY_WITH_TIMEOUT(!window.isAnalysing(), 60000);
        QVERIFY(window.lastOutcome()->report && !window.lastOutcome()->report->compile.ok);
        SessionController* controller = window.sessionController();
        controller->evaluateEditorKernel();
        QVERIFY(!controller->live()->running());
        QVERIFY2(window.statusBar()->currentMessage().contains(QStringLiteral("does not compile")),
            qPrintable(window.statusBar()->currentMessage()));
    }

    // The review actions are in the Session menu, with the keys the panel's hint names.
    void reviewActionsInTheMenu()
    {
        MainWindow window;
        QStringList shortcuts;
        for (QAction* menu : window.menuBar()->actions())
            if (menu->menu())
                for (QAction* a : menu->menu()->actions())
                    if (!a->shortcut().isEmpty())
                        shortcuts << a->shortcut().toString();
        for (const char* key : { "Ctrl+Return", "Ctrl+Shift+R", "Ctrl+Shift+T", "Ctrl+Shift+E" })
            QCOMPARE(shortcuts.count(QLatin1String(key)), 1);
        QCOMPARE(shortcuts.count(QStringLiteral("F5")), 1); // Reload Problem
        QCOMPARE(shortcuts.removeDuplicates(), 0); // no key claimed twice

        // Help ▸ Keyboard Shortcuts lists them, read from the menus.
        auto* help = window.findChild<QAction*>(QStringLiteral("helpShortcuts"));
        QVERIFY(help);
        QStringList listed;
        QTimer::singleShot(0, &window, [&listed] {
            QWidget* dialog = QApplication::activeModalWidget();
            if (!dialog)
                return;
            if (auto* table = dialog->findChild<QTableWidget*>(QStringLiteral("shortcutTable")))
                for (int row = 0; row < table->rowCount(); ++row)
                    listed << table->item(row, 0)->text() + QStringLiteral(" = ") + table->item(row, 1)->text();
            dialog->close();
        });
        help->trigger();
        QVERIFY2(listed.contains(QStringLiteral("Session ▸ Reject Proposal with the Reason = Ctrl+Shift+R")),
            qPrintable(listed.join(QLatin1Char('\n'))));
        QVERIFY(listed.contains(QStringLiteral("File ▸ Reload Problem = F5")));
    }
};

int main(int argc, char** argv) { return kl::test::runOnRealScreens<TestRealScreen>(argc, argv); }
#include "test_real_screen.moc"

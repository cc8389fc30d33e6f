// The live session's runners come from the recipe, as the CLI's do: two endpoints named in the
// recipe (the run dialog's "runner endpoints") run the session's candidates on both runner doubles
// (tests/loop/model_runner.cpp, real processes), the store records both endpoints, and the Runner
// Pool dock lists both with their jobs; a runner given as a command line (the dialog's Runner field, a
// cmd: endpoint) runs the session. Offscreen; with KL_LIVE_SCREENSHOTS=DIR the window is saved.
#include "app/live_session.h"
#include "app/main_window.h"
#include "app/session_controller.h"
#include "core/store/store.h"
#include "live_window.h"
#include "widgets/pool_status_panel.h"
#include "widgets/run_dialog.h"

#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <set>

using namespace kl;
using namespace kl::gui;

namespace {

std::string problemPath() { return std::string(KL_SOURCE_DIR) + "/resources/examples/layernorm_gelu/problem.json"; }

session::SessionRecipe poolRecipe(const QString& db)
{
    session::SessionRecipe r;
    r.problem = problemPath();
    r.db = db.toStdString();
    r.runner = KL_MODEL_RUNNER;
    r.metrics = "none";
    r.patience = 0;
    r.trials = 1;
    r.noCache = true;
    r.budget = 2;
    r.candidatesPerRound = 3;
    return r;
}

} // namespace

class TestLiveSessionPool : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelLoopTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_gui_live_session_pool"));
        qputenv("KERNELLOOP_NO_KEYCHAIN", "1");
        qputenv("KERNELLOOP_RUNNER", KL_MODEL_RUNNER);
        qunsetenv("KL_MODEL_RUNNER_NO_DEVICE");
        qputenv("KL_MODEL_RUNNER_DELAY_MS", "150"); // each job takes a while, so a round spreads over both
    }

    void twoEndpointsRunOnBoth()
    {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("pool.db"));
        MainWindow window;
        QVERIFY(test::openWithRunner(
            window, QString::fromStdString(problemPath()), QStringLiteral(KL_MODEL_RUNNER), QSize(1500, 950)));
        SessionController* controller = window.sessionController();
        QVERIFY(controller->poolDock()->isHidden()); // no session yet

        auto recipe = poolRecipe(db);
        recipe.runners = { "local:0", "local:1" };
        QCOMPARE(controller->startSession(recipe), QString());
        LiveSession* live = controller->live();
        QVERIFY(controller->poolDock()->isVisible());
        QTableWidget* table = controller->poolPanel()->table();
        // While it runs, the dock polls the pool: both endpoints are listed.
        QTRY_COMPARE_WITH_TIMEOUT(table->rowCount(), 2, 15000);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("local:0"));
        QCOMPARE(table->item(1, 0)->text(), QStringLiteral("local:1"));
        QTRY_VERIFY2_WITH_TIMEOUT(!live->running(), qPrintable(live->lastError()), 60000);
        QCOMPARE(live->finalStatus(), QStringLiteral("finished"));
        QCOMPARE(live->iterations().size(), std::size_t(7)); // the baseline and 2 rounds of 3

        // The store: the session's results were measured on both endpoints.
        const auto store = store::Store::open(db.toStdString());
        std::set<std::string> used;
        for (const auto& [index, on] : store.sessionRunners(live->sessionId()))
            used.insert(on.endpoint);
        QCOMPARE(used, (std::set<std::string> { "local:0", "local:1" }));

        // The dock's final rows: both runners with jobs done.
        const auto rows = live->poolStatus();
        QCOMPARE(rows.size(), std::size_t(2));
        for (const auto& r : rows)
            QVERIFY2(r.jobsDone > 0, r.endpoint.c_str());
        int jobsColumn = -1;
        for (int c = 0; c < table->columnCount(); ++c)
            if (table->horizontalHeaderItem(c)->text() == QStringLiteral("Jobs"))
                jobsColumn = c;
        QVERIFY(jobsColumn >= 0);
        for (int row = 0; row < 2; ++row)
            QVERIFY2(table->item(row, jobsColumn)->text().toInt() > 0, qPrintable(table->item(row, 0)->text()));
        QVERIFY2(controller->poolPanel()->summaryText().contains(QStringLiteral("2 of 2 runners usable")),
            qPrintable(controller->poolPanel()->summaryText()));

        const QString shots = qEnvironmentVariable("KL_LIVE_SCREENSHOTS");
        if (!shots.isEmpty()) {
            QDir().mkpath(shots);
            QTest::qWait(150);
            QVERIFY(window.grab().save(shots + QStringLiteral("/live-runner-pool.png")));
        }
    }

    // While the session runs, the status bar counts its iterations (it kept the "0 iteration(s)" of
    // the session's opening before).
    void statusBarFollowsTheRunningSession()
    {
        QTemporaryDir dir;
        qputenv("KL_MODEL_RUNNER_DELAY_MS", "400");
        MainWindow window;
        window.show();
        SessionController* controller = window.sessionController();
        auto recipe = poolRecipe(dir.filePath(QStringLiteral("status.db")));
        recipe.candidatesPerRound = 1;
        recipe.budget = 3;
        QCOMPARE(controller->startSession(recipe), QString());
        QTRY_VERIFY2_WITH_TIMEOUT(window.statusText().contains(QStringLiteral("running: 2 iteration(s) so far")),
            qPrintable(window.statusText()), 20000);
        QVERIFY(!window.statusText().contains(QStringLiteral(" 0 iteration(s)")));
        QTRY_VERIFY_WITH_TIMEOUT(!controller->live()->running(), 20000);
        qputenv("KL_MODEL_RUNNER_DELAY_MS", "150");
    }

    // "Evaluate the Editor's Kernel" starts a session too: the Runner Pool dock shows its runner and
    // is polled while it runs (it was left hidden, with only the final rows read at the end).
    void evaluatingTheEditorsKernelPollsThePool()
    {
        QTemporaryDir dir;
        qputenv("KERNELLOOP_DB", dir.filePath(QStringLiteral("evaluate.db")).toLocal8Bit());
        qputenv("KL_MODEL_RUNNER_DELAY_MS", "1500"); // the job outlasts a few polls
        MainWindow window;
        QVERIFY(test::openWithRunner(
            window, QString::fromStdString(problemPath()), QStringLiteral(KL_MODEL_RUNNER), QSize(1500, 950)));
        SessionController* controller = window.sessionController();
        QVERIFY(controller->poolDock()->isHidden());
        controller->evaluateEditorKernel();
        LiveSession* live = controller->live();
        QVERIFY2(live->running(), qPrintable(window.statusText()));
        QVERIFY(controller->poolDock()->isVisible());
        QTableWidget* table = controller->poolPanel()->table();
        QTRY_COMPARE_WITH_TIMEOUT(table->rowCount(), 1, 15000);
        QVERIFY(live->running()); // listed by the poll, not by the end's last read
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("local:0"));
        QTRY_VERIFY_WITH_TIMEOUT(!live->running(), 30000);
        QVERIFY2(live->finalStatus() == QStringLiteral("finished"), qPrintable(live->lastError()));
        qunsetenv("KERNELLOOP_DB");
        qputenv("KL_MODEL_RUNNER_DELAY_MS", "150");
    }

    // The runner as a command (`ssh gpuhost kernelloop-runner` in use; `env VAR=... runner` here): typed
    // in the run dialog's Runner field, and as a cmd: endpoint in its endpoints list. The command really
    // starts the runner (the variable it sets makes the double log each job, with the --device it got)
    // and the session's iterations land in the store.
    void runnerCommandsFromTheDialog()
    {
        QTemporaryDir dir;
        MainWindow window;
        QVERIFY(test::openWithRunner(
            window, QString::fromStdString(problemPath()), QStringLiteral(KL_MODEL_RUNNER), QSize(1500, 950)));
        SessionController* controller = window.sessionController();
        LiveSession* live = controller->live();

        for (const bool endpoint : { false, true }) {
            const QString log = dir.filePath(endpoint ? QStringLiteral("cmd.log") : QStringLiteral("runner.log"));
            const QString db = dir.filePath(endpoint ? QStringLiteral("cmd.db") : QStringLiteral("runner.db"));
            const QString command
                = QStringLiteral("env KL_MODEL_RUNNER_LOG=%1 %2").arg(log, QStringLiteral(KL_MODEL_RUNNER));
            RunDialog dialog;
            auto start = poolRecipe(db);
            start.runner.clear();
            start.candidatesPerRound = 1;
            start.device = 2;
            dialog.setRecipe(start);
            auto* runner = dialog.findChild<QLineEdit*>(QStringLiteral("runner"));
            QVERIFY(runner);
            QVERIFY(runner->placeholderText().contains(QStringLiteral("command line")));
            QVERIFY(runner->toolTip().contains(QStringLiteral("ssh gpuhost kernelloop-runner")));
            if (endpoint)
                dialog.findChild<QPlainTextEdit*>(QStringLiteral("runnerEndpoints"))
                    ->setPlainText(QStringLiteral("cmd:") + command);
            else
                runner->setText(command);
            const auto recipe = dialog.recipe();
            QCOMPARE(QString::fromStdString(endpoint ? recipe.runners.at(0) : recipe.runner),
                endpoint ? QStringLiteral("cmd:") + command : command);
            // The command line shows it as one word and reads back to the same recipe and form.
            const QString line = dialog.commandLine();
            QVERIFY2(line.contains(QStringLiteral("--runner '") + (endpoint ? QStringLiteral("cmd:") : QString())
                         + command + QStringLiteral("'")),
                qPrintable(line));
            QVERIFY(session::parseCommandLine(line.toStdString()) == recipe);
            RunDialog pasted;
            QCOMPARE(pasted.useCommandLine(line), QString());
            QVERIFY(pasted.recipe() == recipe);

            QCOMPARE(controller->startSession(recipe), QString());
            QTRY_VERIFY2_WITH_TIMEOUT(!live->running(), qPrintable(live->lastError()), 30000);
            QVERIFY2(live->finalStatus() == QStringLiteral("finished"), qPrintable(live->lastError()));
            QCOMPARE(live->iterations().size(), std::size_t(3)); // the baseline and 2 rounds
            const auto store = store::Store::open(db.toStdString(), store::Store::Options { .readOnly = true });
            const auto rows = store.listIterations(live->sessionId());
            QCOMPARE(rows.size(), live->iterations().size());
            for (const auto& row : rows)
                QVERIFY2(row.category == "passed", row.category.c_str());
            // `log` is named in this command only: its lines are jobs that reached the runner through it.
            const QStringList jobs = test::runnerLogLines(log);
            QCOMPARE(jobs.size(), 3);
            for (const QString& job : jobs)
                QVERIFY2(job.contains(QStringLiteral(" device=2 ")), qPrintable(job)); // --device follows it
        }
    }

    // A bad endpoint in the recipe fails the session with the CLI's category, before anything runs.
    void badEndpointIsRefused()
    {
        QTemporaryDir dir;
        MainWindow window;
        SessionController* controller = window.sessionController();
        auto recipe = poolRecipe(dir.filePath(QStringLiteral("bad.db")));
        recipe.runners = { "local:0", "local:0" };
        QCOMPARE(controller->startSession(recipe), QString());
        LiveSession* live = controller->live();
        QTRY_VERIFY_WITH_TIMEOUT(!live->running(), 15000);
        QCOMPARE(live->finalStatus(), QStringLiteral("failed"));
        QVERIFY2(
            live->lastError().startsWith(QStringLiteral("[runner.duplicate-endpoint]")), qPrintable(live->lastError()));
        QVERIFY(live->iterations().empty());
    }
};

QTEST_MAIN(TestLiveSessionPool)
#include "test_live_session_pool.moc"

// The engineer's controls over a session, through the window, read back through the store: "Evaluate"
// of the editor's kernel goes into the open session (also when no loop runs), "Continue from here"
// makes the chosen iteration the stored parent of the next round, and the session browser counts a
// running session's iterations as they arrive; Pause after the candidate and Resume, Extend Budget,
// closing the window while a review waits, Stop Now after several iterations (with the runner double
// replaying the H200's recorded session). The runner double at the process boundary
// (tests/loop/model_runner.cpp), a real SQLite store, real NVRTC.
#include "app/live_session.h"
#include "app/main_window.h"
#include "app/review_workspace.h"
#include "app/session_controller.h"
#include "core/model/problem.h"
#include "core/store/store.h"
#include "live_window.h"
#include "tests/scoped_env.h"
#include "widgets/iteration_selection.h"
#include "widgets/kernel_editor.h"
#include "widgets/occupancy_chart.h"
#include "widgets/phase_strip.h"
#include "widgets/session_browser.h"
#include "widgets/session_list_model.h"

#include <QAction>
#include <QChart>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>

#include <algorithm>
#include <memory>

using namespace kl;
using namespace kl::gui;

namespace {

std::string problemPath() { return std::string(KL_SOURCE_DIR) + "/resources/examples/layernorm_gelu/problem.json"; }

session::SessionRecipe tunerRecipe(const QString& db, int budget)
{
    session::SessionRecipe r;
    r.problem = problemPath();
    r.db = db.toStdString();
    r.runner = KL_MODEL_RUNNER;
    r.metrics = "none";
    r.patience = 0;
    r.trials = 1;
    r.budget = budget;
    return r;
}

// A Session menu action by its text without the mnemonic ("Pause after", "Resume", "Extend Budget").
QAction* sessionAction(MainWindow& window, const QString& startsWith)
{
    for (QAction* a : window.findChildren<QAction*>())
        if (a->text().remove(QLatin1Char('&')).startsWith(startsWith))
            return a;
    return nullptr;
}

// The jobs the runner double received so far (KL_MODEL_RUNNER_LOG, one line each).
int runnerJobs(const QString& log) { return int(test::runnerLogLines(log).size()); }

store::Store readStore(const QString& db)
{
    return store::Store::open(db.toStdString(), store::Store::Options { .readOnly = true });
}

// A window on the example problem with the runner double probed.
struct Bench {
    MainWindow window;
    SessionController* controller = nullptr;
    bool ready()
    {
        controller = window.sessionController();
        return test::openWithRunner(
                   window, QString::fromStdString(problemPath()), QStringLiteral(KL_MODEL_RUNNER), QSize(1400, 900))
            && !controller->noDevice();
    }
    // The editor holds the baseline with one line of the engineer's own and THREADS=256.
    void editKernel()
    {
        const auto problem = window.problem();
        window.openCandidate(QString::fromStdString("// the engineer's version\n" + problem->baseline.source),
            TunableValues { { "THREADS", 256 }, { "VEC", 1 }, { "CACHE", 0 }, { "TANH", 0 } });
    }
};

} // namespace

class TestLiveSessionControls : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelLoopTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_gui_live_session_controls"));
        qputenv("KERNELLOOP_NO_KEYCHAIN", "1");
        qputenv("KERNELLOOP_RUNNER", KL_MODEL_RUNNER);
        qunsetenv("KL_MODEL_RUNNER_NO_DEVICE");
        qunsetenv("KL_MODEL_RUNNER_DELAY_MS");
    }

    void evaluateGoesIntoTheOpenSession();
    void evaluateWhileRunningIsQueuedIntoIt();
    void continueFromHereForksTheStoredTree();
    void occupancyChartShowsNoStaleAxes();
    void pauseAfterTheCandidateThenResume();
    void historyRowsComeFromTheAnnouncedOutcomes();
    void extendBudgetRunsPastIt();
    void closingTheWindowAnswersAWaitingReview();
    void stopAfterSeveralIterationsKeepsThemAll();
};

// Pause after the current candidate: the candidate in flight finishes, then no job starts while
// paused (the runner double's log stays as it was); Resume goes on to the end of the budget.
void TestLiveSessionControls::pauseAfterTheCandidateThenResume()
{
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("pause.db"));
    const QString log = dir.filePath(QStringLiteral("jobs.log"));
    const test::ScopedEnv env { { "KL_MODEL_RUNNER_DELAY_MS", "200" }, { "KL_MODEL_RUNNER_LOG", log.toStdString() } };
    Bench bench;
    QVERIFY(bench.ready());
    LiveSession* live = bench.controller->live();
    QAction* pause = sessionAction(bench.window, QStringLiteral("Pause after"));
    QAction* resume = sessionAction(bench.window, QStringLiteral("Resume"));
    QVERIFY(pause && resume);
    QCOMPARE(bench.controller->startSession(tunerRecipe(db, 5)), QString());
    QSignalSpy held(live, &LiveSession::holdChanged);
    QTRY_VERIFY_WITH_TIMEOUT(live->iterations().size() >= 2, 30000);
    QVERIFY(pause->isEnabled() && !resume->isEnabled());
    QCOMPARE(held.count(), 0); // no pause asked: never held
    pause->trigger();
    QVERIFY(live->paused());
    QVERIFY(bench.controller->phaseStrip()->text().contains(QStringLiteral("pausing")));
    QVERIFY(resume->isEnabled() && !pause->isEnabled());
    // What was under way finishes (at most the candidate in flight: 200 ms a job), then nothing more.
    QTest::qWait(1000);
    const std::size_t paused = live->iterations().size();
    const int jobs = runnerJobs(log);
    QTest::qWait(1500); // seven jobs' time: a job that started would have been logged
    QCOMPARE(live->iterations().size(), paused);
    QCOMPARE(runnerJobs(log), jobs);
    QVERIFY(live->running());
    QVERIFY2(paused < 6, "the budget ran out before the pause: nothing was tested");
    // The loop told the window it holds (no polling): once, and the strip says so.
    QCOMPARE(held.count(), 1);
    QCOMPARE(held.at(0).at(0).toBool(), true);
    QVERIFY(live->holding());
    QVERIFY(bench.controller->phaseStrip()->text().contains(QStringLiteral("| paused")));

    resume->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(held.count(), 2, 2000);
    QCOMPARE(held.at(1).at(0).toBool(), false);
    QVERIFY(!live->paused());
    QTRY_VERIFY_WITH_TIMEOUT(live->iterations().size() > paused, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(!live->running(), 30000);
    QVERIFY2(live->finalStatus() == QStringLiteral("finished"), qPrintable(live->lastError()));
    QCOMPARE(live->iterations().size(), std::size_t(6)); // the baseline and the 5 rounds, none lost
    QCOMPARE(readStore(db).listIterations(live->sessionId()).size(), std::size_t(6));
    QVERIFY(runnerJobs(log) > jobs);
}

// The running session's history row and chart figures of an iteration are there when the loop announces
// it (built from the outcome), not a store read later; the store is read for the followed iteration's
// detail, at most ten times a second, and once at the end, when the rows are the store's.
void TestLiveSessionControls::historyRowsComeFromTheAnnouncedOutcomes()
{
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("rows.db"));
    const test::ScopedEnv env { { "KL_MODEL_RUNNER_DELAY_MS", "50" } };
    Bench bench;
    QVERIFY(bench.ready());
    LiveSession* live = bench.controller->live();
    IterationSelection* selection = bench.window.review()->selection();
    QStringList missing;
    int announced = 0;
    // After the controller's own handler (connected first): what the panels hold when the loop announces it.
    connect(live, &LiveSession::iterationFinished, this, [&](const IterationOutcome& outcome) {
        ++announced;
        const auto shown = selection->session();
        if (!shown || shown->session.id != live->sessionId() || !shown->row(outcome.index)
            || !shown->figuresOf(outcome.index))
            missing << QString::number(outcome.index);
        else if (shown->row(outcome.index)->category != outcome.category
            || shown->figuresOf(outcome.index)->sizes.empty() != !outcome.medianUs)
            missing << QStringLiteral("%1 (other values)").arg(outcome.index);
        else if (const auto* row = shown->row(outcome.index); row->startedMs <= 0 || row->endedMs < row->startedMs)
            missing << QStringLiteral("%1 (no start and end times)").arg(outcome.index);
    });
    QCOMPARE(bench.controller->startSession(tunerRecipe(db, 8)), QString());
    QTRY_VERIFY_WITH_TIMEOUT(!live->running(), 60000);
    QVERIFY2(live->finalStatus() == QStringLiteral("finished"), qPrintable(live->lastError()));
    QCOMPARE(announced, 9); // the baseline and 8 rounds
    QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("not shown when announced: ") + missing.join(u',')));
    // Reconciled with the store at the end: its rows, all of them.
    QTRY_VERIFY_WITH_TIMEOUT(selection->session() && selection->session()->rows.size() == 9
            && selection->session()->rows.front().startedMs > 0,
        5000);
}

// Extend Budget while the session runs: it goes past the rounds it was started with.
void TestLiveSessionControls::extendBudgetRunsPastIt()
{
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("extend.db"));
    const test::ScopedEnv slow { { "KL_MODEL_RUNNER_DELAY_MS", "150" } };
    Bench bench;
    QVERIFY(bench.ready());
    LiveSession* live = bench.controller->live();
    QAction* extend = sessionAction(bench.window, QStringLiteral("Extend Budget"));
    QVERIFY(extend);
    QCOMPARE(bench.controller->startSession(tunerRecipe(db, 2)), QString());
    QTRY_VERIFY_WITH_TIMEOUT(live->iterations().size() >= 1, 30000); // round 1 runs: the budget is not spent
    QVERIFY(extend->isEnabled());
    extend->trigger();
    QCOMPARE(live->budget(), 7);
    QVERIFY2(bench.controller->phaseStrip()->text().contains(QStringLiteral("of 7")),
        qPrintable(bench.controller->phaseStrip()->text()));
    QTRY_VERIFY_WITH_TIMEOUT(!live->running(), 30000);
    QVERIFY2(live->finalStatus() == QStringLiteral("finished"), qPrintable(live->lastError()));
    QCOMPARE(live->iterations().size(), std::size_t(8)); // the baseline, 2 rounds and 5 more
    const auto store = readStore(db);
    QCOMPARE(store.listIterations(live->sessionId()).size(), std::size_t(8));
    QCOMPARE(QString::fromStdString(store.session(live->sessionId())->status), QStringLiteral("finished"));
}

// Closing the window while a proposal waits in the review panel answers the gate: the loop thread
// ends (the window's destruction joins it at once, it never hangs) and the session is stored
// cancelled, with its committed iterations.
void TestLiveSessionControls::closingTheWindowAnswersAWaitingReview()
{
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("close.db"));
    auto bench = std::make_unique<Bench>();
    QVERIFY(bench->ready());
    LiveSession* live = bench->controller->live();
    auto recipe = tunerRecipe(db, 4);
    recipe.mode = LoopMode::Review;
    int reviews = 0;
    connect(live, &LiveSession::reviewRequested, this, [&](const ReviewRequested&) {
        if (++reviews == 1) // the first proposal is accepted; the second waits
            live->answerReview({ ReviewDecision::Kind::Accept, {}, {}, std::nullopt, {} });
    });
    QCOMPARE(bench->controller->startSession(recipe), QString());
    QTRY_VERIFY_WITH_TIMEOUT(reviews == 2 && live->reviewWaiting(), 30000);
    const std::int64_t id = live->sessionId();
    const std::size_t committed = live->iterations().size();
    QCOMPARE(committed, std::size_t(2)); // the baseline and the accepted round

    QElapsedTimer clock;
    clock.start();
    QVERIFY(bench->window.close());
    QTRY_VERIFY_WITH_TIMEOUT(!live->running(), 5000);
    QCOMPARE(live->finalStatus(), QStringLiteral("cancelled"));
    bench.reset(); // the window and its session go: the worker is already done
    QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));

    const auto store = readStore(db);
    QCOMPARE(QString::fromStdString(store.session(id)->status), QStringLiteral("cancelled"));
    const auto rows = store.listIterations(id);
    QVERIFY(rows.size() >= committed);
    for (std::size_t i = 0; i < committed; ++i)
        QCOMPARE(QString::fromStdString(rows[i].category), QStringLiteral("passed"));
}

// Stop Now during a later candidate (round 3 or after): the runner is gone within 2 s, the session is
// stored cancelled, and every iteration committed before the stop is in the store as the window saw it.
void TestLiveSessionControls::stopAfterSeveralIterationsKeepsThemAll()
{
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("stop.db"));
    const test::ScopedEnv env { { "KL_MODEL_RUNNER_DELAY_MS", "700" },
        { "KL_MODEL_RUNNER_RECORDED", test::recordedSession() } };
    Bench bench;
    QVERIFY(bench.ready());
    SessionController* controller = bench.controller;
    LiveSession* live = controller->live();
    QCOMPARE(controller->startSession(tunerRecipe(db, 6)), QString());
    QTRY_VERIFY_WITH_TIMEOUT(live->iterations().size() >= 3, 30000); // the baseline and rounds 1 and 2
    // The next candidate is in the runner (the double sleeps in its job).
    QTRY_VERIFY_WITH_TIMEOUT(controller->phaseStrip()->phase() == LoopPhase::Verify
            || controller->phaseStrip()->phase() == LoopPhase::Benchmark,
        10000);
    const auto seen = live->iterations(); // what the window had when the engineer pressed Stop
    QVERIFY(seen.size() >= 3 && seen.size() < 7);
    const QString stopped = test::stopNow(controller);
    QVERIFY2(stopped.isEmpty(), qPrintable(stopped));
    const auto store = readStore(db);
    QCOMPARE(QString::fromStdString(store.session(live->sessionId())->status), QStringLiteral("cancelled"));
    for (const auto& outcome : seen) {
        const auto stored = store.iteration(live->sessionId(), outcome.index);
        QVERIFY2(stored, qPrintable(QString::number(outcome.index)));
        QCOMPARE(QString::fromStdString(stored->row.category), QString::fromStdString(outcome.category));
    }
    // Nothing was committed behind the window's back (the stopped candidate is not stored): the store
    // holds what the window shows once the session has ended.
    QCOMPARE(store.listIterations(live->sessionId()).size(), live->iterations().size());

    // What was kept is what the H200 measured: its device, the baseline as its iteration 1, every
    // other candidate one of its passed iterations.
    QVERIFY(QString::fromStdString(store.session(live->sessionId())->device).startsWith(QStringLiteral("NVIDIA H200")));
    const auto recording = readStore(QString::fromStdString(test::recordedSession()));
    const auto recordedRows = recording.listIterations(recording.listSessions().back().session.id);
    std::vector<double> recordedMedians;
    for (const auto& row : recordedRows)
        if (row.category == "passed" && row.medianUs)
            recordedMedians.push_back(*row.medianUs);
    const auto rows = store.listIterations(live->sessionId());
    QCOMPARE(rows.front().medianUs, recordedRows.front().medianUs);
    for (const auto& row : rows)
        if (row.category == "passed")
            QVERIFY2(row.medianUs
                    && std::find(recordedMedians.begin(), recordedMedians.end(), *row.medianUs)
                        != recordedMedians.end(),
                qPrintable(QString::number(row.index)));
}

// The live screenshots showed a row of "…" x labels and axes under "appears after the first analysis".
void TestLiveSessionControls::occupancyChartShowsNoStaleAxes()
{
    OccupancyChart chart;
    chart.resize(600, 220);
    chart.show();
    const auto axes = chart.chart()->axes();
    QCOMPARE(axes.size(), 2);
    for (auto* axis : axes)
        QVERIFY2(!axis->isVisible(), qPrintable(axis->titleText())); // empty: the title says why, no axes
    chart.setKernel(DeviceLimits::forArch("sm_90"), { QStringLiteral("k"), 128, 32, 0, 1 });
    auto* x = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Horizontal).value(0));
    QVERIFY(x && x->isVisible());
    QCOMPARE(x->tickInterval(), 32.0);
    QCOMPARE(x->max(), 256.0);
    QVERIFY(!chart.chart()->title().startsWith(QStringLiteral("Occupancy appears")));
    chart.clear();
    QVERIFY(!x->isVisible());
    QCOMPARE(chart.curvePointCount(), 0);
}

void TestLiveSessionControls::evaluateGoesIntoTheOpenSession()
{
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("open.db"));
    Bench bench;
    QVERIFY(bench.ready());
    SessionController* controller = bench.controller;
    LiveSession* live = controller->live();
    QCOMPARE(controller->startSession(tunerRecipe(db, 1)), QString());
    QTRY_VERIFY_WITH_TIMEOUT(!live->running(), 30000);
    QCOMPARE(live->finalStatus(), QStringLiteral("finished"));
    const std::int64_t id = live->sessionId();
    QTRY_VERIFY(bench.window.review()->hasSession()); // the finished session is the open one
    const auto before = readStore(db).listIterations(id);
    QCOMPARE(before.size(), std::size_t(2));

    // No loop runs: the editor's kernel becomes the open session's next iteration.
    bench.editKernel();
    controller->evaluateEditorKernel();
    QVERIFY(live->running());
    QTRY_VERIFY_WITH_TIMEOUT(!live->running(), 30000);
    QVERIFY2(live->finalStatus() == QStringLiteral("finished"), qPrintable(live->lastError()));
    QCOMPARE(live->sessionId(), id);
    const auto store = readStore(db);
    QCOMPARE(store.listSessions().size(), std::size_t(1)); // not a session of its own
    const auto after = store.listIterations(id);
    QCOMPARE(after.size(), before.size() + 1);
    QVERIFY(after.back().proposer == store::CandidateRecord::Proposer::Human);
    QCOMPARE(QString::fromStdString(after.back().category), QStringLiteral("passed"));
    const auto detail = store.iteration(id, after.back().index);
    QVERIFY(detail && detail->candidate && detail->parent);
    QVERIFY(detail->candidate->source.rfind("// the engineer's version", 0) == 0);
    QCOMPARE(detail->candidate->tunables.at("THREADS"), 256);
    QCOMPARE(QString::fromStdString(store.session(id)->status), QStringLiteral("finished"));
    // The window shows it: the session is open again with the new iteration in its history.
    QTRY_VERIFY_WITH_TIMEOUT(bench.window.review()->selection()->session()
            && bench.window.review()->selection()->session()->rows.size() == after.size(),
        5000);
}

void TestLiveSessionControls::evaluateWhileRunningIsQueuedIntoIt()
{
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("running.db"));
    const test::ScopedEnv slow { { "KL_MODEL_RUNNER_DELAY_MS", "150" } };
    Bench bench;
    QVERIFY(bench.ready());
    SessionController* controller = bench.controller;
    LiveSession* live = controller->live();
    QCOMPARE(controller->startSession(tunerRecipe(db, 5)), QString());
    QTRY_VERIFY_WITH_TIMEOUT(live->iterations().size() >= 1, 30000);
    bench.editKernel();
    controller->evaluateEditorKernel(); // queued for the loop: the next proposal is the engineer's

    // The session browser counts the running session's iterations as they arrive (it said 0).
    SessionBrowser* browser = bench.window.review()->sessionBrowser();
    const auto countShown = [&] {
        for (const auto& row : browser->model()->sessions())
            if (row.session.id == live->sessionId())
                return row.iterations;
        return -1;
    };
    QTRY_VERIFY_WITH_TIMEOUT(live->iterations().size() >= 3, 30000);
    QVERIFY(live->running());
    QTRY_VERIFY_WITH_TIMEOUT(countShown() >= 3, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(!live->running(), 30000);
    QTRY_COMPARE_WITH_TIMEOUT(countShown(), int(live->iterations().size()), 5000);

    const auto store = readStore(db);
    QCOMPARE(store.listSessions().size(), std::size_t(1));
    int human = 0; // the baseline is stored as a human's candidate too: count after it
    for (const auto& row : store.listIterations(live->sessionId()))
        if (row.index > 1 && row.proposer == store::CandidateRecord::Proposer::Human)
            ++human;
    QCOMPARE(human, 1);
}

void TestLiveSessionControls::continueFromHereForksTheStoredTree()
{
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("fork.db"));
    Bench bench;
    QVERIFY(bench.ready());
    SessionController* controller = bench.controller;
    LiveSession* live = controller->live();
    auto recipe = tunerRecipe(db, 3);
    recipe.mode = LoopMode::Review; // the loop waits in each round: the fork lands on the next one
    int best = 1;
    connect(live, &LiveSession::incumbentChanged, this, [&](const IncumbentChanged& c) { best = c.best.index; });
    int reviews = 0;
    int forkTo = 0;
    connect(live, &LiveSession::reviewRequested, this, [&](const ReviewRequested&) {
        if (++reviews == 2) { // round 2: continue from whichever of the baseline and round 1 is not the best
            forkTo = best == 1 ? 2 : 1;
            ReviewWorkspace* review = bench.window.review();
            review->openSession(live->sessionId());
            review->selection()->select(forkTo);
            controller->continueFromSelected();
        }
        live->answerReview({ ReviewDecision::Kind::Accept, {}, {}, std::nullopt, {} });
    });
    QCOMPARE(controller->startSession(recipe), QString());
    QTRY_VERIFY_WITH_TIMEOUT(!live->running(), 30000);
    QVERIFY2(live->finalStatus() == QStringLiteral("finished"), qPrintable(live->lastError()));
    QCOMPARE(reviews, 3);
    QVERIFY(forkTo == 1 || forkTo == 2);

    const auto store = readStore(db);
    const auto forked = store.iteration(live->sessionId(), forkTo);
    const auto next = store.iteration(live->sessionId(), 4); // round 3's candidate
    QVERIFY(forked && forked->candidate && next && next->parent);
    QCOMPARE(next->parent->id, forked->candidate->id);
}

QTEST_MAIN(TestLiveSessionControls)
#include "test_live_session_controls.moc"

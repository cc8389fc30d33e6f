// The engineer's controls over a session, through the window, read back through the store: "Evaluate"
// of the editor's kernel goes into the open session (also when no loop runs), "Continue from here"
// makes the chosen iteration the stored parent of the next round, and the session browser counts a
// running session's iterations as they arrive. The runner double at the process boundary
// (tests/loop/model_runner.cpp), a real SQLite store, real NVRTC.
#include "app/live_session.h"
#include "app/main_window.h"
#include "live_window.h"
#include "app/review_workspace.h"
#include "app/session_controller.h"
#include "core/model/problem.h"
#include "core/store/store.h"
#include "widgets/iteration_selection.h"
#include "widgets/kernel_editor.h"
#include "widgets/occupancy_chart.h"
#include "widgets/phase_strip.h"
#include "widgets/session_browser.h"
#include "widgets/session_list_model.h"

#include <QChart>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QValueAxis>

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
};

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
    qputenv("KL_MODEL_RUNNER_DELAY_MS", "150");
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
    qunsetenv("KL_MODEL_RUNNER_DELAY_MS");
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

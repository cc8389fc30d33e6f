// The live session in the window, offscreen, with real parts: the runner double at the process
// boundary (tests/loop/model_runner.cpp), the LLM replay server over loopback (tests/llm), real
// NVRTC for the review's offline compile and a real SQLite store. Review mode is driven through
// the review panel's buttons; decisions are read back from the store, where the loop writes them
// as for the CLI's review prompt, and the edited candidate is checked against the cubin the runner
// double received. The double replays the H200's recorded tuner session (KL_MODEL_RUNNER_RECORDED), so
// the window shows what the H200 measured. With KL_LIVE_SCREENSHOTS=DIR the states are saved as PNGs.
#include "app/api_keys.h"
#include "app/live_session.h"
#include "app/main_window.h"
#include "app/review_workspace.h"
#include "app/session_controller.h"
#include "core/compile/static_report.h"
#include "core/model/error.h"
#include "core/model/hash.h"
#include "core/model/problem.h"
#include "core/store/store.h"
#include "live_window.h"
#include "tests/llm/replay_bodies.h"
#include "tests/llm/replay_server.h"
#include "tests/scoped_env.h"
#include "widgets/history_panel.h"
#include "widgets/iteration_selection.h"
#include "widgets/iteration_table_model.h"
#include "widgets/kernel_editor.h"
#include "widgets/live_transcript_panel.h"
#include "widgets/phase_strip.h"
#include "widgets/review_panel.h"
#include "widgets/run_dialog.h"
#include "widgets/static_report_view.h"

#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStyle>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <mutex>
#include <sys/stat.h>

using namespace kl;
using namespace kl::gui;

namespace {

const std::string kPlantedKey = "sk-kl-gui-planted-9876543210zyxwvu";

std::string problemPath() { return std::string(KL_SOURCE_DIR) + "/resources/examples/layernorm_gelu/problem.json"; }

// Each request gets the recorded kernel as a distinct variant (so the cache never answers), streamed.
class VariantModel {
public:
    explicit VariantModel(test::ReplayServer& server)
    {
        server.route("/v1/chat/completions", [this](const test::SeenRequest& r, int n) {
            auto text = test::fixture("replies/ok_vectorised.md");
            text.insert(text.find("```cuda\n") + 8, "// variant " + std::to_string(n) + "\n");
            const auto body = nlohmann::json::parse(r.body);
            test::Reply out;
            const test::ReplyUsage usage { std::int64_t(r.body.size() / 4), 700 };
            if (body.value("stream", false)) {
                out.contentType = "text/event-stream";
                out.body = test::openAiStream({ test::tokenPieces(text) }, "replay", usage);
                out.chunked = true;
                out.chunkSize = 256;
            } else {
                out.body = test::openAiCompletion({ text }, "replay", usage);
            }
            return out;
        });
    }
};

std::string fileText(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll().toStdString();
}

void screenshot(QWidget* widget, const QString& name)
{
    const QString dir = qEnvironmentVariable("KL_LIVE_SCREENSHOTS");
    if (dir.isEmpty())
        return;
    QDir().mkpath(dir);
    QTest::qWait(150); // the charts lay out on the event loop: a grab right after a change shows the old layout
    QVERIFY(widget->grab().save(dir + QStringLiteral("/live-") + name + QStringLiteral(".png")));
}

// The candidate cubins' hashes the runner double logged (KL_MODEL_RUNNER_LOG), one per job, in order.
std::vector<std::string> runnerJobs(const QString& log)
{
    std::vector<std::string> hashes;
    for (const QString& logged : test::runnerLogLines(log)) {
        const std::string line = logged.toStdString();
        if (const auto at = line.find(" candidate="); at != std::string::npos)
            hashes.push_back(line.substr(at + 11, line.find(' ', at + 11) - at - 11));
    }
    return hashes;
}

// contentHash of the cubin `source` compiles to for the example, as the loop compiles it.
std::string cubinHash(const std::string& source, const std::string& fileName, const TunableValues& tunables)
{
    const Problem problem = loadProblem(problemPath());
    CompileOptions options;
    options.arch = problem.arch;
    options.includeDir = problem.dir;
    const auto report = analyseCandidate(
        problem, parseCandidate(source, fileName), tunables, options, DeviceLimits::forArch(problem.arch));
    return report.compile.ok ? contentHash(report.compile.cubin) : "compile failed: " + report.compile.summary;
}

session::SessionRecipe baseRecipe(const QString& db)
{
    session::SessionRecipe r;
    r.problem = problemPath();
    r.db = db.toStdString();
    r.runner = KL_MODEL_RUNNER;
    r.metrics = "none";
    r.patience = 0;
    r.trials = 1;
    return r;
}

} // namespace

class TestLiveSession : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelLoopTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_gui_live_session"));
        qputenv("KERNELLOOP_NO_KEYCHAIN", "1");
        qputenv("KERNELLOOP_RUNNER", KL_MODEL_RUNNER);
        qunsetenv("KL_MODEL_RUNNER_NO_DEVICE");
        qunsetenv("KL_MODEL_RUNNER_DELAY_MS");
    }

    void reviewModeThroughThePanel();
    void stopMidCandidateKeepsIterations();
    void runDialogCommandLineRoundTrips();
    void keysFallBackWithoutKeychain();
    void noGpuBannerRefusesRun();
};

void TestLiveSession::reviewModeThroughThePanel()
{
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("live.db"));
    test::ReplayServer server;
    VariantModel model(server);
    qputenv("KL_TEST_LLM_KEY", QByteArray::fromStdString(kPlantedKey));
    const QString runnerLog = dir.filePath(QStringLiteral("runner.log")); // what the runner double received
    const test::ScopedEnv env { { "KL_MODEL_RUNNER_LOG", runnerLog.toStdString() },
        { "KL_MODEL_RUNNER_RECORDED", test::recordedSession() } };

    MainWindow window;
    QVERIFY(test::openWithRunner(
        window, QString::fromStdString(problemPath()), QStringLiteral(KL_MODEL_RUNNER), QSize(1500, 950)));
    SessionController* controller = window.sessionController();
    QVERIFY(!controller->noDevice());

    auto recipe = baseRecipe(db);
    recipe.proposer = session::ProposerChoice::Llm;
    recipe.mode = LoopMode::Review;
    recipe.budget = 4;
    recipe.llm.baseUrl = server.url("/v1");
    recipe.llm.model = "replay";
    recipe.llm.roles = "single";
    recipe.llm.keyEnv = "KL_TEST_LLM_KEY";
    QCOMPARE(controller->startSession(recipe), QString());
    LiveSession* live = controller->live();
    ReviewPanel* panel = controller->reviewPanel();

    // 1. The baseline appears in the history while the session runs; the proposal streams in and waits.
    QTRY_VERIFY_WITH_TIMEOUT(panel->hasRequest(), 30000);
    QVERIFY(live->running());
    QCOMPARE(live->iterations().size(), std::size_t(1));
    QTRY_VERIFY_WITH_TIMEOUT(
        window.review()->selection()->session() && window.review()->selection()->session()->rows.size() == 1, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(controller->transcript()->text().contains(QStringLiteral("variant 1")), 5000);
    QVERIFY(panel->diffText().contains(QStringLiteral("+// variant 1")));
    QVERIFY(panel->planText().startsWith(QStringLiteral("Plan:")));
    QTRY_VERIFY_WITH_TIMEOUT(!panel->staticText().startsWith(QStringLiteral("Compiling")), 20000);
    QVERIFY(controller->phaseStrip()->text().contains(QStringLiteral("review")));
    QCOMPARE(controller->phaseStrip()->phase(), LoopPhase::Review);
    screenshot(&window, QStringLiteral("review-panel"));

    // 2. Reject needs a reason; the reason is in the next request the model receives.
    panel->rejectButton()->click();
    QVERIFY(panel->hasRequest()); // no text: nothing sent
    panel->reasonEdit()->setText(QStringLiteral("REASON-XYZ: keep the scalar tail"));
    panel->rejectButton()->click();
    QVERIFY(!panel->hasRequest());
    QVERIFY(server.waitForRequests("/v1/chat/completions", 2, std::chrono::seconds(20)));
    QVERIFY(server.requests().back().body.find("REASON-XYZ") != std::string::npos);

    // 3. Steer: the text is in the next request.
    QTRY_VERIFY_WITH_TIMEOUT(panel->hasRequest(), 20000);
    panel->reasonEdit()->setText(QStringLiteral("STEER-ABC: try half2 loads"));
    panel->steerButton()->click();
    QVERIFY(server.waitForRequests("/v1/chat/completions", 3, std::chrono::seconds(20)));
    QVERIFY(server.requests().back().body.find("STEER-ABC") != std::string::npos);

    // 4. Accept: the proposal runs and its iteration appears.
    QTRY_VERIFY_WITH_TIMEOUT(panel->hasRequest(), 20000);
    panel->acceptButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(live->iterations().size() == 4, 30000);
    QCOMPARE(QString::fromStdString(live->iterations().back().proposer), QStringLiteral("llm"));
    QCOMPARE(QString::fromStdString(live->iterations().back().category), QStringLiteral("passed"));
    QTRY_VERIFY_WITH_TIMEOUT(panel->hasRequest(), 20000);
    QVERIFY(panel->planText().startsWith(QStringLiteral("Plan:")));
    QTRY_VERIFY_WITH_TIMEOUT(!panel->staticText().startsWith(QStringLiteral("Compiling")), 20000);
    QTRY_COMPARE_WITH_TIMEOUT(window.review()->selection()->session()->rows.size(), std::size_t(4), 5000);
    screenshot(&window, QStringLiteral("running"));

    // 5. Edit: the candidate opens in the editor; Run Edited evaluates the edited text instead.
    QTRY_VERIFY_WITH_TIMEOUT(panel->hasRequest(), 20000);
    panel->editButton()->click();
    QVERIFY(window.editor()->source().contains(QStringLiteral("// variant 4")));
    QVERIFY(panel->runEditedButton()->isVisibleTo(panel));
    const std::string proposed = window.editor()->source().toStdString();
    // A kernel more: the edit changes the cubin, not only the source.
    window.editor()->setSource(window.editor()->source()
        + QStringLiteral("\n// edited-by-test\nextern \"C\" __global__ void kl_edited_by_test() {}\n"));
    panel->runEditedButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!live->running(), 30000);
    QVERIFY2(live->finalStatus() == QStringLiteral("finished"), qPrintable(live->lastError()));
    QVERIFY(controller->transcript()->text().contains(QStringLiteral("iteration 5 (human)")));
    // The ended panel says so and shows no empty static-report table (its row labels with no values).
    QVERIFY(!panel->hasRequest());
    QVERIFY(!panel->findChild<StaticReportView*>()->isVisibleTo(panel));

    // The store holds what the CLI's review mode stores: refusals with their decisions, the edit as human.
    const auto store = store::Store::open(db.toStdString(), store::Store::Options { .readOnly = true });
    const auto id = live->sessionId();
    const auto rejected = store.iteration(id, 2);
    QVERIFY(rejected);
    QCOMPARE(QString::fromStdString(live->iterations()[1].category), QStringLiteral("rejected"));
    QCOMPARE(rejected->decisions.size(), std::size_t(1));
    QVERIFY(rejected->decisions.front().kind == store::DecisionRecord::Kind::Reject);
    QCOMPARE(
        QString::fromStdString(rejected->decisions.front().reason), QStringLiteral("REASON-XYZ: keep the scalar tail"));
    const auto steered = store.iteration(id, 3);
    QVERIFY(steered && !steered->decisions.empty());
    QCOMPARE(QString::fromStdString(live->iterations()[2].category), QStringLiteral("steered"));
    QVERIFY(steered->decisions.front().kind == store::DecisionRecord::Kind::Steer);
    QCOMPARE(QString::fromStdString(steered->decisions.front().steering), QStringLiteral("STEER-ABC: try half2 loads"));
    const auto edited = store.iteration(id, 5);
    QVERIFY(edited && edited->candidate);
    QVERIFY(edited->candidate->source.find("// edited-by-test") != std::string::npos);
    QVERIFY(edited->candidate->proposer == store::CandidateRecord::Proposer::Human);
    // The runner received the edited version: the last job's cubin is the one the edited source (with
    // its stored tunables) compiles to, through the compile the loop uses, and not the proposal's.
    const auto jobs = runnerJobs(runnerLog);
    QCOMPARE(int(jobs.size()), 3); // the baseline, the accepted proposal, the edit: refusals never run
    const auto& file = edited->candidate->fileName;
    QCOMPARE(jobs.back(), cubinHash(edited->candidate->source, file, edited->candidate->tunables));
    QVERIFY(jobs.back() != cubinHash(proposed, file, edited->candidate->tunables));
    QVERIFY(jobs.back() != jobs[1]);
    // The history panel followed to the end.
    QTRY_COMPARE_WITH_TIMEOUT(window.review()->selection()->session()->rows.size(), std::size_t(5), 5000);

    // The window shows what the H200 measured: the baseline got the recording's iteration 1, the
    // accepted proposal its next passed iteration (2), the edit the one after (3), on an NVIDIA H200.
    const auto recording = store::Store::open(test::recordedSession(), store::Store::Options { .readOnly = true });
    const auto recordedId = recording.listSessions().back().session.id; // the oldest, as the double replays
    const IterationTableModel* table = window.review()->history()->tableModel();
    const auto cell = [&](int iteration, int column) {
        return table->data(table->index(table->rowOf(iteration), column)).toString();
    };
    for (const auto& [shown, measured] : { std::pair { 1, 1 }, { 4, 2 }, { 5, 3 } }) {
        const auto expected = recording.iteration(recordedId, measured)->row.medianUs;
        QVERIFY(expected);
        QCOMPARE(store.iteration(id, shown)->row.medianUs, expected); // the recorded figure, stored as it came
        QTRY_COMPARE_WITH_TIMEOUT(
            cell(shown, IterationTableModel::MedianColumn), QString::number(*expected, 'f', 2), 5000);
        QTRY_VERIFY_WITH_TIMEOUT(
            cell(shown, IterationTableModel::GpuColumn).contains(QStringLiteral("NVIDIA H200")), 5000);
    }
    QCOMPARE(cell(4, IterationTableModel::MedianColumn), QStringLiteral("60.54")); // as the H200's iteration 2

    // The key reached the server, and nothing else.
    QVERIFY(server.requests().front().header("authorization").find(kPlantedKey) != std::string::npos);
    const QString exported = dir.filePath(QStringLiteral("s.klsession"));
    store.exportSession(id, exported.toStdString());
    const QStringList written { db, db + QStringLiteral("-wal"), exported };
    for (const QString& f : written)
        QVERIFY2(fileText(f).find(kPlantedKey) == std::string::npos, qPrintable(f));
    QSettings settings;
    settings.sync();
    QVERIFY(fileText(settings.fileName()).find(kPlantedKey) == std::string::npos);
    QVERIFY(controller->transcript()->text().toStdString().find(kPlantedKey) == std::string::npos);
}

void TestLiveSession::stopMidCandidateKeepsIterations()
{
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("stop.db"));
    const test::ScopedEnv slow { { "KL_MODEL_RUNNER_DELAY_MS", "1500" } };
    MainWindow window;
    SessionController* controller = window.sessionController();
    QSignalSpy probed(controller, &SessionController::probed);
    controller->probeRunner(QStringLiteral(KL_MODEL_RUNNER));
    QVERIFY(probed.wait(10000));
    auto recipe = baseRecipe(db);
    recipe.budget = 10;
    QCOMPARE(controller->startSession(recipe), QString());
    LiveSession* live = controller->live();
    QTRY_VERIFY2_WITH_TIMEOUT(live->iterations().size() == 1,
        qPrintable(live->lastError() + controller->phaseStrip()->text()), 30000); // the baseline is committed
    // The next candidate is in the runner (the double sleeps in its job).
    QTRY_VERIFY_WITH_TIMEOUT(controller->phaseStrip()->phase() == LoopPhase::Verify
            || controller->phaseStrip()->phase() == LoopPhase::Benchmark,
        20000);
    QTest::qWait(300);
    const QString stopped = test::stopNow(controller);
    QVERIFY2(stopped.isEmpty(), qPrintable(stopped));
    const auto store = store::Store::open(db.toStdString(), store::Store::Options { .readOnly = true });
    const auto session = store.session(live->sessionId());
    QVERIFY(session);
    QCOMPARE(QString::fromStdString(session->status), QStringLiteral("cancelled"));
    const auto baseline = store.iteration(live->sessionId(), 1);
    QVERIFY(baseline && baseline->row.category == "passed");
}

void TestLiveSession::runDialogCommandLineRoundTrips()
{
    {
        // At its default size every hint reads whole: the Store hint has the height and width its
        // lines need and no placeholder runs past its field's edge.
        RunDialog fresh;
        fresh.show();
        QVERIFY(QTest::qWaitForWindowExposed(&fresh));
        auto* hint = fresh.findChild<QLabel*>(QStringLiteral("storeHint"));
        QVERIFY(hint && hint->isVisible());
        const QSize needed = hint->wordWrap() ? QSize(0, hint->heightForWidth(hint->width())) : hint->sizeHint();
        QVERIFY2(hint->height() >= needed.height() && hint->width() >= needed.width(),
            qPrintable(QStringLiteral("%1x%2 px for %3x%4")
                           .arg(hint->width())
                           .arg(hint->height())
                           .arg(needed.width())
                           .arg(needed.height())));
        for (const QLineEdit* edit : fresh.findChildren<QLineEdit*>()) {
            if (edit->placeholderText().isEmpty() || !edit->isVisible())
                continue;
            const int room = edit->width() - 2 * edit->style()->pixelMetric(QStyle::PM_DefaultFrameWidth) - 4;
            QVERIFY2(edit->fontMetrics().horizontalAdvance(edit->placeholderText()) <= room,
                qPrintable(edit->placeholderText() + QStringLiteral(": %1 px").arg(room)));
        }
    }
    RunDialog dialog;
    session::SessionRecipe r;
    r.problem = problemPath();
    r.proposer = session::ProposerChoice::LlmAndTuner;
    r.strategy = "evolutionary";
    r.budget = 7;
    r.wallSeconds = 600;
    r.targetSpeedup = 1.5;
    r.patience = 3;
    r.candidatesPerRound = 4;
    r.metrics = "stalls";
    r.mode = LoopMode::Review;
    r.label = "night run";
    r.db = "/tmp/x y.db";
    r.device = 2;
    r.llm.baseUrl = "http://localhost:8000/v1";
    r.llm.model = "qwen";
    r.llm.roles = "single";
    r.llm.temperature = 0.5;
    r.llm.tokenBudget = 100000;
    r.llm.keyEnv = "MY_KEY";
    dialog.setRecipe(r);
    QVERIFY(dialog.recipe() == r);
    const QString line = dialog.commandLine();
    QVERIFY(line.startsWith(QStringLiteral("kernelloop-cli tune ")));
    QVERIFY(line.contains(QStringLiteral("--mode review")));
    QVERIFY(session::parseCommandLine(line.toStdString()) == r);
    RunDialog other;
    QCOMPARE(other.useCommandLine(line), QString());
    QVERIFY(other.recipe() == r);
    QCOMPARE(other.commandLine(), line);
    QVERIFY(other.useCommandLine(QStringLiteral("kernelloop-cli tune p.json --budget"))
                .startsWith(QStringLiteral("[session.bad-command-line]")));
    QVERIFY(other.recipe() == r); // a bad line leaves the form as it was
    dialog.resize(1100, dialog.sizeHint().height());
    screenshot(&dialog, QStringLiteral("run-dialog"));
}

void TestLiveSession::keysFallBackWithoutKeychain()
{
    QVERIFY(!ApiKeys::keychainUsable()); // KERNELLOOP_NO_KEYCHAIN=1, as in CI
    session::LlmSettings llm;
    llm.baseUrl = "http://127.0.0.1:1/v1";
    QVERIFY(!ApiKeys::save(llm, QString::fromStdString(kPlantedKey)).isEmpty());
    QCOMPARE(QString::fromStdString(ApiKeys::load(llm).key), QString());
    QCOMPARE(ApiKeys::load(llm).from, QStringLiteral("none"));

    qputenv("KL_TEST_FALLBACK_KEY", QByteArray::fromStdString(kPlantedKey));
    llm.keyEnv = "KL_TEST_FALLBACK_KEY";
    const auto fromEnv = ApiKeys::load(llm);
    QCOMPARE(fromEnv.key, kPlantedKey);
    QCOMPARE(fromEnv.from, QStringLiteral("$KL_TEST_FALLBACK_KEY"));

    QTemporaryDir dir;
    const std::string file = dir.filePath(QStringLiteral("key")).toStdString();
    std::ofstream(file) << kPlantedKey << "\n";
    ::chmod(file.c_str(), 0600);
    llm.keyEnv.clear();
    llm.keyFile = file;
    QCOMPARE(ApiKeys::load(llm).key, kPlantedKey);
    ::chmod(file.c_str(), 0644);
    try {
        ApiKeys::load(llm);
        QFAIL("a key file others can read was accepted");
    } catch (const Error& e) {
        QCOMPARE(QString::fromStdString(e.category()), QStringLiteral("llm.key-file-permissions"));
        QVERIFY(std::string(e.what()).find(kPlantedKey) == std::string::npos);
    }
    QSettings settings;
    settings.sync();
    QVERIFY(fileText(settings.fileName()).find(kPlantedKey) == std::string::npos);
    llm.model = "m";
    const auto endpoint = endpointFor(llm, kPlantedKey);
    QCOMPARE(endpoint.apiKey, kPlantedKey);
    QVERIFY(session::commandLine(session::SessionRecipe {}).find(kPlantedKey) == std::string::npos);
}

void TestLiveSession::noGpuBannerRefusesRun()
{
    // Set before the window, whose controller probes the runner as it is made.
    const test::ScopedEnv noDevice { { "KL_MODEL_RUNNER_NO_DEVICE", "cuInit failed: CUDA_ERROR_NO_DEVICE (test)" } };
    QTemporaryDir dir;
    MainWindow window;
    QVERIFY(test::openWithRunner(
        window, QString::fromStdString(problemPath()), QStringLiteral(KL_MODEL_RUNNER), QSize(1400, 900)));
    SessionController* controller = window.sessionController();
    QVERIFY(controller->noDevice());
    QVERIFY(controller->banner()->isVisibleTo(&window));
    QVERIFY(controller->banner()->text().contains(QStringLiteral("CUDA_ERROR_NO_DEVICE (test)")));
    const QString refused = controller->startSession(baseRecipe(dir.filePath(QStringLiteral("n.db"))));
    QVERIFY(refused.startsWith(QStringLiteral("[runner.no-device]")));
    QVERIFY(refused.contains(QStringLiteral("CUDA_ERROR_NO_DEVICE (test)")));
    QVERIFY(!controller->live()->running());
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("n.db")))); // nothing stored
    QTRY_VERIFY_WITH_TIMEOUT(!window.isAnalysing(), 20000); // editing and static analysis still work
    QVERIFY(window.lastOutcome() && window.lastOutcome()->report);
    screenshot(&window, QStringLiteral("no-gpu"));
}

QTEST_MAIN(TestLiveSession)
#include "test_live_session.moc"

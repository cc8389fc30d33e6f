// One scripted review-mode session of the bundled example through the window, offscreen, against a
// real runner: the LLM proposer talks to the loopback replay server (the GPU machine has no
// internet), and the script accepts one proposal, rejects one with a reason, steers one, edits one,
// accepts the last and lets the session finish. scripts/gpu-gui.sh runs it on the H200 with
//   KL_H200_RUNNER=<kernelloop-runner>   the real runner (default: the runner double, so CI runs the
//                                        same script against results recorded on the H200)
//   KL_H200_SCREENSHOTS=DIR              h200-*.png of the live charts, the review panel and the
//                                        transcript, and h200-session.txt (what each iteration measured)
//   KL_H200_METRICS=SET                  the metric set (default stalls: the stall chart fills too)
//   KL_SOURCE_DIR=DIR                    the checkout (the device's copy is not where this was built)
#include "app/live_session.h"
#include "app/main_window.h"
#include "app/review_workspace.h"
#include "app/session_controller.h"
#include "core/store/store.h"
#include "live_window.h"
#include "tests/llm/replay_bodies.h"
#include "tests/llm/replay_server.h"
#include "widgets/charts_panel.h"
#include "widgets/iteration_selection.h"
#include "widgets/kernel_editor.h"
#include "widgets/live_transcript_panel.h"
#include "widgets/phase_strip.h"
#include "widgets/review_panel.h"

#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextCursor>
#include <QTextDocument>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

using namespace kl;
using namespace kl::gui;

namespace {

// A real runner verifies over every fuzz size and times in the same job: give each step time.
constexpr int kStepMs = 120000;

std::string sourceDir()
{
    const QString dir = qEnvironmentVariable("KL_SOURCE_DIR");
    return dir.isEmpty() ? std::string(KL_SOURCE_DIR) : dir.toStdString();
}

std::string problemPath() { return sourceDir() + "/resources/examples/layernorm_gelu/problem.json"; }

QString runnerPath()
{
    const QString real = qEnvironmentVariable("KL_H200_RUNNER");
    return real.isEmpty() ? QStringLiteral(KL_MODEL_RUNNER) : real;
}

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// The recorded vectorised kernel as a distinct variant per request (the result cache never answers),
// streamed, so the transcript fills while the reply is being written.
class VariantModel {
public:
    explicit VariantModel(test::ReplayServer& server)
        : m_reply(readFile(sourceDir() + "/tests/fixtures/llm/replies/ok_vectorised.md"))
    {
        server.route("/v1/chat/completions", [this](const test::SeenRequest& r, int n) {
            auto text = m_reply;
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
    bool loaded() const { return m_reply.find("```cuda\n") != std::string::npos; }

private:
    std::string m_reply;
};

QString screenshotDir() { return qEnvironmentVariable("KL_H200_SCREENSHOTS"); }

void screenshot(QWidget* widget, const QString& name)
{
    const QString dir = screenshotDir();
    if (dir.isEmpty())
        return;
    QDir().mkpath(dir);
    QVERIFY(widget->grab().save(dir + QStringLiteral("/h200-") + name + QStringLiteral(".png")));
}

QString figure(const std::optional<double>& v, int decimals)
{
    return v ? QString::number(*v, 'f', decimals) : QStringLiteral("-");
}

// What each iteration measured, for the README caption and the measurements.
void writeSummary(const std::vector<IterationOutcome>& iterations, const QString& runner)
{
    const QString dir = screenshotDir();
    if (dir.isEmpty())
        return;
    QFile f(dir + QStringLiteral("/h200-session.txt"));
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(QStringLiteral("runner %1\n").arg(runner).toUtf8());
    for (const auto& it : iterations)
        f.write(QStringLiteral("iteration %1 round %2 %3 %4 median %5 us, %6 GB/s, speedup %7x, device %8\n")
                    .arg(it.index)
                    .arg(it.round)
                    .arg(QString::fromStdString(it.proposer), QString::fromStdString(it.category),
                        figure(it.medianUs, 2), figure(it.gbps, 0), figure(it.speedup, 2),
                        QString::fromStdString(it.device.empty() ? std::string("-") : it.device))
                    .toUtf8());
}

} // namespace

class TestGuiH200Session : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelLoopTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_gui_h200_session"));
        qputenv("KERNELLOOP_NO_KEYCHAIN", "1");
        qputenv("KERNELLOOP_RUNNER", runnerPath().toUtf8());
        qunsetenv("KL_MODEL_RUNNER_NO_DEVICE");
        qunsetenv("KL_MODEL_RUNNER_DELAY_MS");
    }

    void scriptedReviewSession();
};

void TestGuiH200Session::scriptedReviewSession()
{
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("h200.db"));
    test::ReplayServer server;
    VariantModel model(server);
    QVERIFY(model.loaded());
    qputenv("KL_H200_LLM_KEY", "sk-kl-h200-replay");

    MainWindow window;
    QVERIFY(
        test::openWithRunner(window, QString::fromStdString(problemPath()), runnerPath(), QSize(1600, 1000), 60000));
    SessionController* controller = window.sessionController();
    QVERIFY2(!controller->noDevice(), qPrintable(controller->banner()->text()));

    session::SessionRecipe recipe;
    recipe.problem = problemPath();
    recipe.db = db.toStdString();
    recipe.runner = runnerPath().toStdString();
    const QString metrics = qEnvironmentVariable("KL_H200_METRICS");
    recipe.metrics = metrics.isEmpty() ? "stalls" : metrics.toStdString();
    recipe.patience = 0;
    recipe.proposer = session::ProposerChoice::Llm;
    recipe.mode = LoopMode::Review;
    recipe.budget = 5; // one round each: accept, reject, steer, edit, accept
    recipe.label = "H200 GUI review session (scripted)";
    recipe.llm.baseUrl = server.url("/v1");
    recipe.llm.model = "replay";
    recipe.llm.roles = "single";
    recipe.llm.keyEnv = "KL_H200_LLM_KEY";
    QCOMPARE(controller->startSession(recipe), QString());
    LiveSession* live = controller->live();
    ReviewPanel* panel = controller->reviewPanel();
    const auto waitForProposal = [&] {
        QTRY_VERIFY2_WITH_TIMEOUT(panel->hasRequest() || !live->running(), qPrintable(live->lastError()), kStepMs);
        QVERIFY2(panel->hasRequest(), qPrintable(QStringLiteral("ended: ") + live->finalStatus()));
        QTRY_VERIFY_WITH_TIMEOUT(!panel->staticText().startsWith(QStringLiteral("Compiling")), kStepMs);
    };

    // 1. The baseline is measured first; the first proposal waits in the panel with its static report.
    waitForProposal();
    QCOMPARE(live->iterations().size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(live->iterations().front().category), QStringLiteral("passed"));
    QVERIFY(live->iterations().front().medianUs.has_value());
    QVERIFY(panel->diffText().contains(QStringLiteral("+// variant 1")));
    QCOMPARE(controller->phaseStrip()->phase(), LoopPhase::Review);
    QTRY_VERIFY_WITH_TIMEOUT(controller->transcript()->text().contains(QStringLiteral("variant 1")), 5000);
    screenshot(&window, QStringLiteral("review-panel"));

    // 2. Accept: the proposal is compiled, verified and timed by the runner.
    panel->acceptButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(live->iterations().size() == 2, kStepMs);
    QCOMPARE(QString::fromStdString(live->iterations().back().category), QStringLiteral("passed"));
    QVERIFY(live->iterations().back().speedup.has_value());

    // 3. Reject with a reason: the reason is in the next request the model receives.
    waitForProposal();
    panel->reasonEdit()->setText(QStringLiteral("REASON-H200: keep the scalar tail"));
    panel->rejectButton()->click();
    QVERIFY(server.waitForRequests("/v1/chat/completions", 3, std::chrono::seconds(60)));
    QVERIFY(server.requests().back().body.find("REASON-H200") != std::string::npos);

    // 4. Steer: the text is in the next request.
    waitForProposal();
    panel->reasonEdit()->setText(QStringLiteral("STEER-H200: try half2 loads"));
    panel->steerButton()->click();
    QVERIFY(server.waitForRequests("/v1/chat/completions", 4, std::chrono::seconds(60)));
    QVERIFY(server.requests().back().body.find("STEER-H200") != std::string::npos);

    // 5. Edit: the candidate opens in the editor and the edited text is what runs.
    waitForProposal();
    panel->editButton()->click();
    QVERIFY(window.editor()->source().contains(QStringLiteral("// variant 4")));
    window.editor()->setSource(window.editor()->source() + QStringLiteral("\n// edited-on-the-h200\n"));
    panel->runEditedButton()->click();

    // 6. The last proposal is accepted; the session runs to its budget and finishes.
    waitForProposal();
    QTRY_COMPARE_WITH_TIMEOUT(window.review()->selection()->session()->rows.size(), std::size_t(5), 10000);
    window.review()->charts()->tabs()->setCurrentIndex(0);
    screenshot(&window, QStringLiteral("live-charts"));
    panel->acceptButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!live->running(), kStepMs);
    QVERIFY2(live->finalStatus() == QStringLiteral("finished"), qPrintable(live->lastError()));
    QTRY_COMPARE_WITH_TIMEOUT(window.review()->selection()->session()->rows.size(), live->iterations().size(), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(test::listedStatuses(window).contains(QStringLiteral("finished")), 10000);
    QVERIFY(controller->transcript()->text().contains(QStringLiteral("(human)")));
    writeSummary(live->iterations(), runnerPath());
    for (const auto& it : live->iterations())
        std::printf("iteration %d %s %s median %.2f us device %s\n", it.index, it.proposer.c_str(), it.category.c_str(),
            it.medianUs.value_or(0.0), it.device.c_str());
    screenshot(&window, QStringLiteral("finished"));
    // The transcript on its own, wide enough to read, from the note of the edited iteration on: the
    // loop's notes and the streamed reply of the last round under its heading.
    LiveTranscriptPanel* transcript = controller->transcript();
    auto* dock = qobject_cast<QDockWidget*>(transcript->parentWidget());
    auto* text = transcript->findChild<QPlainTextEdit*>();
    QVERIFY(dock && text);
    transcript->setParent(nullptr);
    transcript->resize(1000, 760);
    transcript->show();
    QCoreApplication::processEvents();
    QTextCursor end(text->document());
    end.movePosition(QTextCursor::End);
    text->setTextCursor(end);
    text->ensureCursorVisible();
    QTextCursor note = text->document()->find(QStringLiteral("(human)"));
    QVERIFY(!note.isNull());
    note.movePosition(QTextCursor::StartOfBlock);
    text->setTextCursor(note); // scrolling up to it puts its line at the top
    text->ensureCursorVisible();
    screenshot(transcript, QStringLiteral("transcript"));
    dock->setWidget(transcript); // back in the window, which owns it

    // The store holds the decisions as the CLI's review mode stores them, and the edit as human.
    const auto store = store::Store::open(db.toStdString(), store::Store::Options { .readOnly = true });
    const auto id = live->sessionId();
    int rejected = 0, steered = 0, human = 0, accepted = 0;
    for (const auto& it : live->iterations()) {
        const auto stored = store.iteration(id, it.index);
        QVERIFY(stored);
        for (const auto& d : stored->decisions) {
            if (d.kind == store::DecisionRecord::Kind::Reject) {
                ++rejected;
                QCOMPARE(QString::fromStdString(d.reason), QStringLiteral("REASON-H200: keep the scalar tail"));
            } else if (d.kind == store::DecisionRecord::Kind::Steer) {
                ++steered;
                QCOMPARE(QString::fromStdString(d.steering), QStringLiteral("STEER-H200: try half2 loads"));
            }
        }
        if (it.proposer == "human") {
            ++human;
            QVERIFY(stored->candidate && stored->candidate->source.find("// edited-on-the-h200") != std::string::npos);
            QCOMPARE(QString::fromStdString(it.category), QStringLiteral("passed"));
        }
        if (it.proposer == "llm" && it.category == "passed")
            ++accepted;
        if (it.category == "passed")
            QVERIFY2(!it.device.empty() && it.medianUs, qPrintable(QString::number(it.index)));
    }
    QCOMPARE(rejected, 1);
    QCOMPARE(steered, 1);
    QCOMPARE(human, 1);
    QCOMPARE(accepted, 2);
}

QTEST_MAIN(TestGuiH200Session)
#include "test_gui_h200_session.moc"

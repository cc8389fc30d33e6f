// The LLM's reply as the window shows it while it is written: the loopback replay server streams each
// reply slowly (paced pieces over ~1 s), and the test watches the transcript, the phase strip and the
// coalescing in LiveSession: text reaches the transcript in several pieces before the reply is
// complete, the strip's token count moves while it streams (an estimate, labelled so) and settles on
// the server's usage, the strip shows the phase's elapsed time, text and phase updates reach the GUI
// at most ~ten times a second, and no finished iteration is dropped on the way (the window's count
// equals the store's). A key the server echoes, cut across stream pieces, never shows in the transcript
// (issue 23). The runner double at the process boundary, a real SQLite store, real NVRTC.
#include "app/live_session.h"
#include "app/main_window.h"
#include "app/review_workspace.h"
#include "app/session_controller.h"
#include "core/store/store.h"
#include "live_window.h"
#include "tests/llm/replay_bodies.h"
#include "tests/llm/replay_server.h"
#include "widgets/iteration_selection.h"
#include "widgets/live_transcript_panel.h"
#include "widgets/phase_strip.h"

#include <QElapsedTimer>
#include <QLocale>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <thread>

using namespace kl;
using namespace kl::gui;

namespace {

std::string problemPath() { return std::string(KL_SOURCE_DIR) + "/resources/examples/layernorm_gelu/problem.json"; }

constexpr int kPieces = 30; // paced writes of each reply
constexpr int kPaceMs = 35; // between them: a reply takes ~1 s to arrive

// Each request gets the recorded kernel as a distinct variant, streamed slowly, with usage at its end.
class SlowModel {
public:
    explicit SlowModel(test::ReplayServer& server)
    {
        server.route("/v1/chat/completions", [this](const test::SeenRequest&, int n) {
            auto text = test::fixture("replies/ok_vectorised.md");
            text.insert(text.find("```cuda\n") + 8, "// variant " + std::to_string(n) + "\n");
            const auto pieces = test::tokenPieces(text);
            deltas = int(pieces.size());
            test::Reply out;
            out.contentType = "text/event-stream";
            out.body = test::openAiStream({ pieces }, "replay", test::ReplyUsage { 1200, 700 });
            out.chunked = true;
            out.firstPieces.assign(kPieces, out.body.size() / kPieces + 1);
            out.pace = [] { std::this_thread::sleep_for(std::chrono::milliseconds(kPaceMs)); };
            return out;
        });
    }
    std::atomic<int> deltas { 0 }; // the text deltas of one reply, as the server sends them
};

// A line near the end of the reply that occurs in it once: once the transcript holds it, the reply
// is (all but) complete. The last line itself is a bare ``` that the opening fence matches too.
QString lastReplyLine()
{
    const QString text = QString::fromStdString(test::fixture("replies/ok_vectorised.md"));
    const auto lines = text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (auto line = lines.crbegin(); line != lines.crend(); ++line)
        if (line->trimmed().size() > 20 && text.count(line->trimmed()) == 1)
            return line->trimmed();
    return text.trimmed();
}

// The seconds the strip shows for the current phase ("propose 1.3 s"), -1 when it shows none.
double elapsedShown(const QString& strip)
{
    static const QRegularExpression elapsed(
        QStringLiteral("(propose|review|compile|verify|benchmark|profile|decide) (\\d+\\.\\d) s"));
    const auto m = elapsed.match(strip);
    return m.hasMatch() ? m.captured(2).toDouble() : -1.0;
}

// A session of `budget` rounds with the replay model at `baseUrl`, its key in the variable `keyEnv`.
session::SessionRecipe llmRecipe(const QString& db, const std::string& baseUrl, const char* keyEnv, int budget)
{
    session::SessionRecipe recipe;
    recipe.problem = problemPath();
    recipe.db = db.toStdString();
    recipe.runner = KL_MODEL_RUNNER;
    recipe.metrics = "none";
    recipe.patience = 0;
    recipe.trials = 1;
    recipe.budget = budget;
    recipe.proposer = session::ProposerChoice::Llm;
    recipe.llm.baseUrl = baseUrl;
    recipe.llm.model = "replay";
    recipe.llm.roles = "single";
    recipe.llm.keyEnv = keyEnv;
    return recipe;
}

} // namespace

class TestLiveSessionStreaming : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelLoopTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_gui_live_session_streaming"));
        qputenv("KERNELLOOP_NO_KEYCHAIN", "1");
        qputenv("KERNELLOOP_RUNNER", KL_MODEL_RUNNER);
        qputenv("KL_TEST_LLM_KEY", "sk-streaming-test");
        qunsetenv("KL_MODEL_RUNNER_NO_DEVICE");
        qunsetenv("KL_MODEL_RUNNER_DELAY_MS");
    }

    void replyStreamsIntoTheWindow();
    void anEchoedKeyNeverReachesTheTranscript();
};

void TestLiveSessionStreaming::replyStreamsIntoTheWindow()
{
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("stream.db"));
    test::ReplayServer server;
    SlowModel model(server);
    MainWindow window;
    QVERIFY(test::openWithRunner(
        window, QString::fromStdString(problemPath()), QStringLiteral(KL_MODEL_RUNNER), QSize(1500, 950)));
    SessionController* controller = window.sessionController();
    LiveSession* live = controller->live();
    PhaseStrip* strip = controller->phaseStrip();

    const auto recipe = llmRecipe(db, server.url("/v1"), "KL_TEST_LLM_KEY", 3);

    // What the window showed at each update: when, and whether the first reply was complete by then.
    const QString lastLine = lastReplyLine();
    QElapsedTimer clock;
    std::vector<qint64> flushes; // when each coalesced flush reached the GUI (ms)
    int lastFlush = -1;
    const auto noteFlush = [&] {
        if (live->textUpdates() != lastFlush) { // a flush emits text and phase together: count it once
            lastFlush = live->textUpdates();
            flushes.push_back(clock.elapsed());
        }
    };
    int textSignals = 0;
    int piecesBeforeComplete = 0; // text updates of the first reply before its last line arrived
    bool firstComplete = false;
    std::vector<qint64> estimates; // the strip's streaming estimates during the first reply
    double longestElapsed = -1.0;
    QString unlabelled; // the strip as it was when it showed no labelled estimate while the reply streamed
    connect(live, &LiveSession::phaseChanged, this, noteFlush);
    connect(live, &LiveSession::textArrived, this, [&] {
        noteFlush();
        ++textSignals;
        if (firstComplete)
            return;
        const QString shown = controller->transcript()->text();
        firstComplete = shown.contains(lastLine);
        if (!firstComplete) {
            ++piecesBeforeComplete;
            estimates.push_back(live->streamingTokenEstimate());
            if (!strip->tokensText().contains(QStringLiteral("streaming (estimate)")))
                unlabelled = strip->text();
            longestElapsed = std::max(longestElapsed, elapsedShown(strip->text()));
        }
    });
    int finished = 0;
    qint64 tokensAfterFirst = -1;
    QString tokensShownAfterFirst;
    connect(live, &LiveSession::iterationFinished, this, [&](const IterationOutcome& o) {
        ++finished;
        if (o.proposer == "llm" && tokensAfterFirst < 0) {
            tokensAfterFirst = live->tokens();
            tokensShownAfterFirst = strip->tokensText();
        }
    });

    clock.start();
    QCOMPARE(controller->startSession(recipe), QString());
    QTRY_VERIFY_WITH_TIMEOUT(!live->running(), 60000);
    QVERIFY2(live->finalStatus() == QStringLiteral("finished"), qPrintable(live->lastError()));

    qInfo("%d text updates before the first reply was complete, %zu flushes, %d text signals for %d deltas, "
          "phase elapsed shown up to %.1f s, estimates %lld..%lld",
        piecesBeforeComplete, flushes.size(), textSignals, 3 * model.deltas.load(), longestElapsed,
        static_cast<long long>(estimates.empty() ? 0 : estimates.front()),
        static_cast<long long>(estimates.empty() ? 0 : estimates.back()));
    // Streaming: the first reply reached the transcript in several pieces before it was complete, and
    // the strip's estimate grew with it.
    QVERIFY(firstComplete);
    QVERIFY2(piecesBeforeComplete >= 3, qPrintable(QString::number(piecesBeforeComplete)));
    QVERIFY2(unlabelled.isEmpty(), qPrintable(unlabelled));
    QVERIFY(std::is_sorted(estimates.begin(), estimates.end()));
    QVERIFY(estimates.size() >= 3 && estimates.front() < estimates.back() && estimates.front() > 0);
    // The strip showed the phase's elapsed time, counting up while the reply was written (~1 s).
    QVERIFY2(longestElapsed >= 0.3, qPrintable(QString::number(longestElapsed)));
    // Once a proposal finished, the strip shows the server's count instead of the estimate.
    QVERIFY(tokensAfterFirst > 0);
    QVERIFY2(tokensShownAfterFirst.startsWith(QLocale().toString(tokensAfterFirst) + QStringLiteral(" tokens")),
        qPrintable(tokensShownAfterFirst));
    QCOMPARE(live->streamingTokenEstimate(), 0);
    QCOMPARE(strip->tokensText(), QStringLiteral("%1 tokens").arg(QLocale().toString(live->tokens())));

    // Coalescing: never more than ~ten updates a second (the end flushes what is left at once).
    QVERIFY(flushes.size() >= 6);
    int tooClose = 0;
    for (std::size_t i = 1; i < flushes.size(); ++i)
        if (flushes[i] - flushes[i - 1] < 80)
            ++tooClose;
    QVERIFY2(tooClose <= 1, qPrintable(QString::number(tooClose)));
    for (std::size_t i = 0; i < flushes.size(); ++i) { // any second holds at most 10 (+1 for the end's)
        const auto inSecond
            = std::count_if(flushes.begin() + long(i), flushes.end(), [&](qint64 t) { return t < flushes[i] + 1000; });
        QVERIFY2(inSecond <= 11, qPrintable(QString::number(inSecond)));
    }
    // ... while the server sent far more pieces: 3 replies of `deltas` text deltas each.
    QVERIFY2(textSignals * 4 < 3 * model.deltas.load(),
        qPrintable(QStringLiteral("%1 text signals for %2 deltas").arg(textSignals).arg(3 * model.deltas.load())));

    // No finished iteration dropped: every one was signalled, kept, shown and stored.
    const auto store = store::Store::open(db.toStdString(), store::Store::Options { .readOnly = true });
    const auto stored = store.listIterations(live->sessionId());
    QCOMPARE(stored.size(), std::size_t(4)); // the baseline and 3 rounds
    QCOMPARE(std::size_t(finished), stored.size());
    QCOMPARE(live->iterations().size(), stored.size());
    QTRY_VERIFY_WITH_TIMEOUT(window.review()->selection()->session()
            && window.review()->selection()->session()->rows.size() == stored.size(),
        5000);
}

// The server echoes the key (and its percent-encoded form) in its streamed reply, cut into 5-byte
// pieces: the transcript shows the reply redacted at every update, never a half of the key.
void TestLiveSessionStreaming::anEchoedKeyNeverReachesTheTranscript()
{
    const std::string key = "sk-echo/KEY+transcript=0123456789abcdef";
    qputenv("KL_TEST_ECHO_KEY", QByteArray::fromStdString(key));
    const QByteArray percent = QByteArray::fromStdString(key).toPercentEncoding();
    QTemporaryDir dir;
    test::ReplayServer server;
    server.route("/v1/chat/completions", [&](const test::SeenRequest& request, int) {
        const std::string text = "No kernel today. You sent " + request.header("authorization") + ", also known as "
            + percent.toStdString() + ".\n";
        test::Reply out;
        out.contentType = "text/event-stream";
        out.body = test::openAiStream({ test::fixedPieces(text, 5) }, "replay", test::ReplyUsage { 10, 10 });
        out.chunked = true;
        out.chunkSize = 61;
        return out;
    });
    MainWindow window;
    QVERIFY(test::openWithRunner(
        window, QString::fromStdString(problemPath()), QStringLiteral(KL_MODEL_RUNNER), QSize(1200, 800)));
    SessionController* controller = window.sessionController();
    LiveSession* live = controller->live();
    const auto recipe = llmRecipe(dir.filePath(QStringLiteral("echo.db")), server.url("/v1"), "KL_TEST_ECHO_KEY", 1);
    QStringList leaks;
    const auto look = [&] {
        const QString shown = controller->transcript()->text();
        for (const auto& form :
            { QString::fromStdString(key), QString::fromLatin1(percent), QString::fromStdString(key.substr(0, 12)) })
            if (shown.contains(form))
                leaks << form;
    };
    connect(live, &LiveSession::textArrived, this, look);
    QCOMPARE(controller->startSession(recipe), QString());
    QTRY_VERIFY_WITH_TIMEOUT(!live->running(), 60000);
    look();
    QVERIFY2(server.requestCount("/v1/chat/completions") > 0, "the model was asked");
    QVERIFY2(controller->transcript()->text().contains(QStringLiteral("[redacted]")),
        qPrintable(controller->transcript()->text().right(400)));
    QVERIFY2(leaks.isEmpty(), qPrintable(leaks.join(u',')));
}

QTEST_MAIN(TestLiveSessionStreaming)
#include "test_live_session_streaming.moc"

// The GUI thread's longest stall while a live session streams into the window: the whole main
// window (history, charts, inspector, transcript, phase strip) follows a session of 50 iterations
// whose LLM text streams from the loopback replay server, against the runner double. A 1 ms precise
// QTimer on the GUI thread measures the event loop's lateness: each tick's gap beyond 1 ms is a
// stall. Prints the worst gap, the 99th and 99.9th percentiles, and what was streamed.
// QT_QPA_PLATFORM=offscreen build/ci/bench/gui/bench_live_stall [iterations] [runner delay ms]
#include "app/live_session.h"
#include "app/main_window.h"
#include "app/session_controller.h"
#include "tests/llm/replay_bodies.h"
#include "tests/llm/replay_server.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QPaintEvent>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace kl;
using namespace kl::gui;

namespace {

// Each request gets the recorded kernel as a distinct variant (the cache never answers), streamed in
// small chunks so that the transcript receives many pieces.
void serveVariants(test::ReplayServer& server)
{
    server.route("/v1/chat/completions", [](const test::SeenRequest& r, int n) {
        auto text = test::fixture("replies/ok_vectorised.md");
        text.insert(text.find("```cuda\n") + 8, "// variant " + std::to_string(n) + "\n");
        test::Reply out;
        const test::ReplyUsage usage { std::int64_t(r.body.size() / 4), 700 };
        if (nlohmann::json::parse(r.body).value("stream", false)) {
            out.contentType = "text/event-stream";
            out.body = test::openAiStream({ test::tokenPieces(text) }, "replay", usage);
            out.chunked = true;
            out.chunkSize = 64;
        } else {
            out.body = test::openAiCompletion({ text }, "replay", usage);
        }
        return out;
    });
}

// With KL_STALL_TRACE set, every outermost event over 5 ms is printed with its receiver and type:
// what a gap is made of (a paint of the window, a queued refresh, a timer).
class TracingApplication : public QApplication {
public:
    using QApplication::QApplication;
    bool notify(QObject* receiver, QEvent* event) override
    {
        if (m_trace && event->type() == QEvent::Paint) { // what is painted, how often, how much of it
            const auto* paint = static_cast<QPaintEvent*>(event);
            auto& [count, area]
                = m_painted[QByteArray(receiver->metaObject()->className()) + ' ' + receiver->objectName().toLatin1()];
            ++count;
            for (const QRect& r : paint->region())
                area += double(r.width()) * r.height();
        }
        if (!m_trace || m_depth > 0) {
            ++m_depth;
            const bool done = QApplication::notify(receiver, event);
            --m_depth;
            return done;
        }
        QElapsedTimer clock;
        clock.start();
        const int type = event->type();
        const QByteArray what = receiver->metaObject()->className();
        ++m_depth;
        const bool done = QApplication::notify(receiver, event);
        --m_depth;
        if (const qint64 ns = clock.nsecsElapsed(); ns > 5'000'000)
            std::fprintf(stderr, "EVENT %s type %d %.1f ms\n", what.constData(), type, double(ns) / 1e6);
        return done;
    }

    void printPainted() const
    {
        std::vector<std::pair<double, std::string>> rows;
        for (const auto& [what, counted] : m_painted)
            rows.emplace_back(counted.second, what.toStdString() + " x" + std::to_string(counted.first));
        std::sort(rows.rbegin(), rows.rend());
        for (std::size_t i = 0; i < std::min<std::size_t>(rows.size(), 25); ++i)
            std::fprintf(stderr, "PAINTED %.1f Mpx %s\n", rows[i].first / 1e6, rows[i].second.c_str());
    }

private:
    std::map<QByteArray, std::pair<int, double>> m_painted;
    const bool m_trace = qEnvironmentVariableIsSet("KL_STALL_TRACE");
    int m_depth = 0;
};

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0.0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, std::size_t(p * double(v.size())))];
}

} // namespace

int main(int argc, char* argv[])
{
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 50;
    const QByteArray delay = argc > 2 ? QByteArray(argv[2]) : QByteArray("20");
    qputenv("KL_MODEL_RUNNER_DELAY_MS", delay);
    qputenv("KERNELLOOP_NO_KEYCHAIN", "1");
    qputenv("KL_BENCH_LLM_KEY", "sk-bench-not-a-real-key");
    TracingApplication app(argc, argv);
    QTemporaryDir dir;

    test::ReplayServer server;
    serveVariants(server);
    MainWindow window;
    window.resize(1500, 950);
    window.show();
    const QString problem = QStringLiteral(KL_SOURCE_DIR "/resources/examples/layernorm_gelu/problem.json");
    if (!window.openProblem(problem)) {
        std::fprintf(stderr, "the example problem did not open\n");
        return 1;
    }
    SessionController* controller = window.sessionController();
    QSignalSpy probed(controller, &SessionController::probed);
    controller->probeRunner(QStringLiteral(KL_MODEL_RUNNER));
    probed.wait(10000);

    session::SessionRecipe recipe;
    recipe.problem = problem.toStdString();
    recipe.db = dir.filePath(QStringLiteral("live.db")).toStdString();
    recipe.runner = KL_MODEL_RUNNER;
    recipe.metrics = "none";
    recipe.patience = 0;
    recipe.trials = 1;
    recipe.budget = iterations - 1; // the baseline, then one candidate a round
    recipe.maxFailedRounds = 0;
    recipe.proposer = session::ProposerChoice::Llm;
    recipe.llm.baseUrl = server.url("/v1");
    recipe.llm.model = "replay";
    recipe.llm.roles = "single";
    recipe.llm.keyEnv = "KL_BENCH_LLM_KEY";

    std::vector<double> gaps; // ms beyond the 1 ms period
    QElapsedTimer clock;
    QTimer ticker;
    ticker.setTimerType(Qt::PreciseTimer);
    ticker.setInterval(1);
    qint64 last = 0;
    QObject::connect(&ticker, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        gaps.push_back(std::max(0.0, double(now - last) / 1e6 - 1.0));
        if (gaps.back() > 15.0 && qEnvironmentVariableIsSet("KL_STALL_TRACE")) // where the stalls fall, with traces
            std::fprintf(stderr, "GAP %.1f ms at tick %zu\n", gaps.back(), gaps.size());
        last = now;
    });
    std::size_t firstShown = 0; // ticks before the baseline's iteration reached the window
    QObject::connect(controller->live(), &LiveSession::iterationFinished, [&] {
        if (!firstShown)
            firstShown = gaps.size();
    });
    int textPieces = 0;
    QObject::connect(controller->live(), &LiveSession::textArrived, [&] { ++textPieces; });

    const QString refused = controller->startSession(recipe);
    if (!refused.isEmpty()) {
        std::fprintf(stderr, "the session did not start: %s\n", qPrintable(refused));
        return 1;
    }
    clock.start();
    ticker.start();
    QElapsedTimer wall;
    wall.start();
    LiveSession* live = controller->live();
    QEventLoop loop;
    QObject::connect(live, &LiveSession::sessionEnded, &loop, &QEventLoop::quit);
    QTimer::singleShot(600000, &loop, &QEventLoop::quit);
    loop.exec();
    ticker.stop();
    if (qEnvironmentVariableIsSet("KL_STALL_TRACE"))
        app.printPainted();
    const double seconds = double(wall.elapsed()) / 1000.0;

    const double worst = gaps.empty() ? 0.0 : *std::max_element(gaps.begin(), gaps.end());
    std::printf("live session: %zu iterations (%s: %s), %d coalesced text flushes, %d text signals, %lld tokens, "
                "%.1f s\n",
        live->iterations().size(), qPrintable(live->finalStatus()), qPrintable(live->lastError()), live->textUpdates(),
        textPieces, static_cast<long long>(live->tokens()), seconds);
    std::printf("GUI thread stall (1 ms timer lateness, %zu ticks): max %.1f ms, p99 %.2f ms, p99.9 %.2f ms\n",
        gaps.size(), worst, percentile(gaps, 0.99), percentile(gaps, 0.999));
    // Apart: from the start to the baseline's iteration (the window switches to the review workspace
    // and lays it out once), and the streaming that follows.
    const std::vector<double> streaming(gaps.begin() + std::ptrdiff_t(std::min(firstShown, gaps.size())), gaps.end());
    const double startWorst
        = firstShown ? *std::max_element(gaps.begin(), gaps.begin() + std::ptrdiff_t(firstShown)) : 0.0;
    const double streamWorst = streaming.empty() ? 0.0 : *std::max_element(streaming.begin(), streaming.end());
    std::printf("  until the first iteration is shown (workspace switch): max %.1f ms; while streaming: max %.1f ms, "
                "p99 %.2f ms\n",
        startWorst, streamWorst, percentile(streaming, 0.99));
    std::printf("target: max < 50 ms: %s\n", worst < 50.0 ? "met" : "NOT met");
    return 0;
}

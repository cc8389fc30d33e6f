#pragma once
// How every live-session test starts: the window at a size its panels are read at, the bundled
// example open, and the runner probed, as the engineer's first minute in the window does.
#include "app/live_session.h"
#include "app/main_window.h"
#include "app/review_workspace.h"
#include "app/session_controller.h"
#include "tests/test_files.h"
#include "widgets/session_browser.h"
#include "widgets/session_list_model.h"

#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QSize>
#include <QString>
#include <QStringList>
#include <QTest>

#include <csignal>
#include <string>

namespace kl::test {

// False when the example does not open or the runner does not answer the probe within `waitMs`;
// whether the runner has a device is the caller's to check (some tests want it, some want none).
inline bool openWithRunner(
    gui::MainWindow& window, const QString& problem, const QString& runner, QSize size, int waitMs = 10000)
{
    window.resize(size);
    window.show();
    if (!window.openProblem(problem))
        return false;
    gui::SessionController* controller = window.sessionController();
    QSignalSpy probed(controller, &gui::SessionController::probed);
    controller->probeRunner(runner);
    return probed.wait(waitMs);
}

// A tuner session recorded on the H200, which the runner double replays with KL_MODEL_RUNNER_RECORDED
// (tests/loop/recorded_results.h).
inline std::string recordedSession() { return sourceDir() + "/resources/sessions/layernorm_gelu-h200.klsession"; }

// The lines the runner double logged with KL_MODEL_RUNNER_LOG=path, one per job it received, in order
// ("evaluate id=ID device=N candidate=HASH baseline=HASH|-"); none while there is no log.
inline QStringList runnerLogLines(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()).split(u'\n', Qt::SkipEmptyParts)
                                       : QStringList();
}

// Stop Now while the session's runner is in a job, as the engineer presses it: the runner process is
// killed and reaped within 2 s of the press (Stop itself included) and the session ends "cancelled".
// Returns what went wrong; empty when all of it held.
inline QString stopNow(gui::SessionController* controller)
{
    gui::LiveSession* live = controller->live();
    const pid_t runner = live->runnerPid();
    if (runner <= 0 || ::kill(runner, 0) != 0)
        return QStringLiteral("no runner process in a job (pid %1)").arg(runner);
    QElapsedTimer clock;
    clock.start();
    controller->stop();
    if (!QTest::qWaitFor([&] { return ::kill(runner, 0) != 0; }, 10000))
        return QStringLiteral("the runner (pid %1) was still there 10 s after Stop").arg(runner);
    if (const qint64 ms = clock.elapsed(); ms >= 2000)
        return QStringLiteral("the runner took %1 ms to go after Stop (2 s allowed)").arg(ms);
    if (!QTest::qWaitFor([&] { return !live->running(); }, 5000))
        return QStringLiteral("the session still ran 5 s after Stop");
    if (live->finalStatus() != QStringLiteral("cancelled"))
        return QStringLiteral("the session ended %1, not cancelled: %2").arg(live->finalStatus(), live->lastError());
    return {};
}

// The Status column of the window's session list, row by row: once a session has ended its row must
// say how, not "running" (the whole read after the end lists the sessions off the GUI thread).
inline QStringList listedStatuses(gui::MainWindow& window)
{
    QStringList statuses;
    const auto* model = window.review()->sessionBrowser()->model();
    for (int row = 0; row < model->rowCount(); ++row)
        statuses << model->index(row, gui::SessionListModel::StatusColumn).data().toString();
    return statuses;
}

} // namespace kl::test

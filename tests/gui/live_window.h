#pragma once
// How every live-session test starts: the window at a size its panels are read at, the bundled
// example open, and the runner probed, as the engineer's first minute in the window does.
#include "app/main_window.h"
#include "app/session_controller.h"
#include "tests/test_files.h"

#include <QFile>
#include <QSignalSpy>
#include <QSize>
#include <QString>
#include <QStringList>

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

} // namespace kl::test

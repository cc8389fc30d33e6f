#pragma once
// How every live-session test starts: the window at a size its panels are read at, the bundled
// example open, and the runner probed, as the engineer's first minute in the window does.
#include "app/main_window.h"
#include "app/session_controller.h"

#include <QSignalSpy>
#include <QSize>
#include <QString>

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

} // namespace kl::test

#pragma once
// The window's runner: where it is, and whether it has a GPU (its hello, asked once at the start so
// that a machine without one says so before a session is tried).
#include <QString>

#include <string>

namespace kl::gui {

// $KERNELLOOP_RUNNER, else the runner beside this program (or in the build tree's runner/).
QString windowRunnerPath();

inline const std::string kNoDevicePrefix = "no-device:";

// Starts the runner at `path`, reads its hello and shuts it down: empty when it has a GPU,
// kNoDevicePrefix + the runner's own message when it has none, "lost:" + why when it could not start.
// Takes a second or more: call it off the GUI thread.
QString probeRunnerAt(const std::string& path);

} // namespace kl::gui

#pragma once
// The GUI's opt-in for model-written Python without a sandbox (core/compile/confinement.h): a checkable
// Session menu action, kept in QSettings, that asks with the warning before it turns on. The same as
// kernelloop-cli's --allow-unconfined-python.
class QAction;
class QWidget;

namespace kl::gui {

// The action, checked as the settings say; the process-wide opt-in is set from them at once.
QAction* unconfinedPythonAction(QWidget* parent);

} // namespace kl::gui

#pragma once
// The session's toolbar: the actions a session needs at hand, short-named and with icons, the menu's
// keys in their tooltips (start one, pause and resume it, stop it, answer the proposal waiting for
// review), in the menu bar's free right side.
class QAction;
class QMainWindow;
class QToolBar;

namespace kl::gui {

struct SessionToolBarActions {
    QAction* newSession;
    QAction* pause;
    QAction* resume;
    QAction* stop;
    QAction* accept; // the review panel's; any may be null
    QAction* reject;
    QAction* steer;
};

// Sets the actions' short texts, icons and tooltips and puts the toolbar in `window`'s menu bar corner.
QToolBar* sessionToolBar(QMainWindow* window, const SessionToolBarActions& actions);

} // namespace kl::gui

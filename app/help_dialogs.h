#pragma once
// Help ▸ Keyboard Shortcuts and Help ▸ Documentation: the keys read from the window's menus as they
// are when asked (the Session menu's review keys included), and where the documentation lives.
class QMainWindow;
class QMenu;

namespace kl::gui {

// Adds Keyboard Shortcuts (F1) and Documentation to `help`, about `window`'s menus.
void addHelpActions(QMainWindow* window, QMenu* help);

} // namespace kl::gui

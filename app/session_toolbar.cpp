#include "app/session_toolbar.h"

#include <QAction>
#include <QCoreApplication>
#include <QMainWindow>
#include <QMenuBar>
#include <QStyle>
#include <QToolBar>

#include <utility>

namespace kl::gui {

namespace {
// The Session menu's context, where these texts were first written (translations keep them).
QString tr(const char* text) { return QCoreApplication::translate("kl::gui::SessionController", text); }
} // namespace

QToolBar* sessionToolBar(QMainWindow* window, const SessionToolBarActions& a)
{
    //: toolbar title (Session and View menus): the actions a running session needs
    auto* toolBar = new QToolBar(tr("Session Toolbar"), window);
    toolBar->setObjectName(QStringLiteral("sessionToolBar"));
    toolBar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolBar->setIconSize(QSize(16, 16));
    const QStyle* style = window->style();
    //: toolbar button texts, short forms of the Session menu's actions
    const std::pair<QAction*, std::pair<QString, QStyle::StandardPixmap>> shown[] = {
        { a.newSession, { tr("New Session"), QStyle::SP_FileIcon } },
        { a.pause, { tr("Pause"), QStyle::SP_MediaPause } },
        { a.resume, { tr("Resume"), QStyle::SP_MediaPlay } },
        { a.stop, { tr("Stop"), QStyle::SP_MediaStop } },
        { a.accept, { tr("Accept"), QStyle::SP_DialogApplyButton } },
        { a.reject, { tr("Reject"), QStyle::SP_DialogCancelButton } },
        { a.steer, { tr("Steer"), QStyle::SP_ArrowRight } },
    };
    for (const auto& [action, look] : shown) {
        if (!action)
            continue;
        action->setIconText(look.first);
        action->setIcon(style->standardIcon(look.second));
        const QString keys = action->shortcut().toString(QKeySequence::NativeText);
        action->setToolTip(keys.isEmpty()
                ? action->text().remove(QLatin1Char('&'))
                : QStringLiteral("%1 (%2)").arg(action->text().remove(QLatin1Char('&')), keys));
        if (action == a.stop || action == a.accept)
            toolBar->addSeparator();
        toolBar->addAction(action);
    }
    // In the menu bar's free right side: a row of its own took 31 px of a 768-px laptop's height (the
    // window no longer fitted with the review dock open), and beside the phase strip the strip lost
    // its last phases.
    toolBar->setMovable(false);
    window->menuBar()->setCornerWidget(toolBar, Qt::TopRightCorner);
    return toolBar;
}

} // namespace kl::gui

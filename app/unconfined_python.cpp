#include "app/unconfined_python.h"

#include "core/compile/confinement.h"

#include <QAction>
#include <QCoreApplication>
#include <QMessageBox>
#include <QSettings>
#include <QWidget>

namespace kl::gui {

namespace {
const QString kKey = QStringLiteral("security/unconfinedPython");
QString tr(const char* text) { return QCoreApplication::translate("kl::gui::SessionController", text); }
} // namespace

QAction* unconfinedPythonAction(QWidget* parent)
{
    //: Session menu, checkable: Triton candidates' Python runs without bubblewrap where none is installed
    auto* action = new QAction(tr("Run Model-Written Python &Unconfined…"), parent);
    action->setCheckable(true);
    const bool on = QSettings().value(kKey, false).toBool();
    action->setChecked(on);
    setUnconfinedPythonAllowed(on);
    QObject::connect(action, &QAction::toggled, parent, [action, parent](bool checked) {
        if (checked) {
            const ConfinementPolicy policy = modelCodePolicy();
            const QString state = policy.mode == ConfinementMode::Sandboxed
                ? tr("bubblewrap works on this machine, so candidates stay in the sandbox whatever this says.")
                : tr("bubblewrap is not available here: %1").arg(QString::fromStdString(policy.detail));
            const auto answer = QMessageBox::warning(parent, tr("Run Model-Written Python Unconfined"),
                tr("<p>A Triton candidate is a Python file, and its module runs to compile it. Written by a "
                   "model, it is untrusted: without the sandbox it runs as you, with your files and your "
                   "network (only the variables KernelLoop passes, never an API key).</p><p>%1</p><p>Allow it "
                   "where no sandbox is available?</p>")
                    .arg(state.toHtmlEscaped()),
                QMessageBox::Yes | QMessageBox::No, QMessageBox::No);
            if (answer != QMessageBox::Yes) {
                const QSignalBlocker quiet(action);
                action->setChecked(false);
                return;
            }
        }
        QSettings().setValue(kKey, checked);
        setUnconfinedPythonAllowed(checked);
    });
    return action;
}

} // namespace kl::gui

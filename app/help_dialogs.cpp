#include "app/help_dialogs.h"

#include <QAction>
#include <QApplication>
#include <QDesktopServices>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QTableWidget>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

namespace kl::gui {

namespace {

QString plain(QString text) { return text.remove(QLatin1Char('&')).remove(QStringLiteral("…")); }

// Every menu action with a key, as "Menu ▸ Action", in menu order; submenus followed.
void collect(QMenu* menu, const QString& path, QList<QPair<QString, QString>>& rows)
{
    for (QAction* action : menu->actions()) {
        if (action->menu())
            collect(action->menu(), path + QStringLiteral(" ▸ ") + plain(action->text()), rows);
        else if (!action->shortcut().isEmpty())
            rows.append({ path + QStringLiteral(" ▸ ") + plain(action->text()),
                action->shortcut().toString(QKeySequence::NativeText) });
    }
}

void showShortcuts(QMainWindow* window)
{
    QList<QPair<QString, QString>> rows;
    for (QAction* top : window->menuBar()->actions())
        if (top->menu())
            collect(top->menu(), plain(top->text()), rows);
    QDialog dialog(window);
    //: window title of the list of keyboard shortcuts
    dialog.setWindowTitle(QApplication::translate("Help", "Keyboard Shortcuts"));
    auto* table = new QTableWidget(int(rows.size()), 2, &dialog);
    table->setHorizontalHeaderLabels(
        { QApplication::translate("Help", "Action"), QApplication::translate("Help", "Keys") });
    for (int row = 0; row < rows.size(); ++row) {
        table->setItem(row, 0, new QTableWidgetItem(rows[row].first));
        table->setItem(row, 1, new QTableWidgetItem(rows[row].second));
    }
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    table->setObjectName(QStringLiteral("shortcutTable"));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(&dialog);
    layout->addWidget(table);
    layout->addWidget(buttons);
    dialog.resize(560, std::min(640, window->height()));
    dialog.exec();
}

// The README beside an installed or a built program (share/doc, or the source tree of a build).
QString findReadme()
{
    const QDir bin(QCoreApplication::applicationDirPath());
    for (const QString& relative : { QStringLiteral("../share/doc/kernelloop/README.md"),
             QStringLiteral("../../README.md"), QStringLiteral("../../../README.md") })
        if (QFileInfo file(bin.filePath(relative)); file.isFile())
            return file.canonicalFilePath();
    return {};
}

void showDocumentation(QMainWindow* window)
{
    const QString readme = findReadme();
    QDialog dialog(window);
    //: window title of the documentation overview
    dialog.setWindowTitle(QApplication::translate("Help", "Documentation"));
    auto* text = new QTextBrowser(&dialog);
    text->setOpenExternalLinks(true);
    const QString docs = readme.isEmpty() ? QString() : QFileInfo(readme).absolutePath() + QStringLiteral("/docs");
    auto link = [&](const QString& file, const QString& what) {
        const QString path = docs + QLatin1Char('/') + file;
        return QStringLiteral("<li><a href=\"%1\">%2</a>: %3</li>")
            .arg(QUrl::fromLocalFile(path).toString(), file.toHtmlEscaped(), what);
    };
    QString html = QApplication::translate("Help",
        "<p><b>A first session.</b> File ▸ Open a problem (resources/examples/…/problem.json) or a recorded "
        "session (.klsession) to review. Session ▸ New Session starts the loop: the built-in tuner needs no "
        "LLM; Mode review makes every proposal wait in the Proposal Review dock (Accept, Reject, Steer, Edit "
        "in the Session menu). Without a GPU here, name a runner elsewhere in the dialog (Runner: "
        "<tt>ssh host kernelloop-runner</tt>, or Runner endpoints <tt>ssh:host</tt>, <tt>slurm:…</tt>).</p>");
    if (!readme.isEmpty()) {
        html += QStringLiteral("<ul>")
            + QStringLiteral("<li><a href=\"%1\">README.md</a>: %2</li>")
                  .arg(QUrl::fromLocalFile(readme).toString(),
                      QApplication::translate("Help", "install, first session, the workbench's panels"))
            + link(QStringLiteral("formats.md"), QApplication::translate("Help", "problem and candidate files"))
            + link(QStringLiteral("llm.md"), QApplication::translate("Help", "LLM providers and keys"))
            + link(QStringLiteral("runner-pool.md"), QApplication::translate("Help", "runners over ssh and Slurm"))
            + QStringLiteral("</ul>");
    } else {
        html += QApplication::translate(
            "Help", "<p>The README and docs/ (formats.md, llm.md, runner-pool.md) come with the sources.</p>");
    }
    text->setHtml(html);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, &dialog);
    QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(&dialog);
    layout->addWidget(text);
    layout->addWidget(buttons);
    dialog.resize(620, 360);
    dialog.exec();
}

} // namespace

void addHelpActions(QMainWindow* window, QMenu* help)
{
    //: Help menu action: every key of the window's menus
    QAction* keys = help->addAction(
        QApplication::translate("Help", "&Keyboard Shortcuts"), window, [window] { showShortcuts(window); });
    keys->setShortcut(QKeySequence(Qt::Key_F1));
    keys->setObjectName(QStringLiteral("helpShortcuts"));
    //: Help menu action: where to start and where the documentation is
    help->addAction(QApplication::translate("Help", "&Documentation"), window, [window] { showDocumentation(window); });
    help->addSeparator();
}

} // namespace kl::gui

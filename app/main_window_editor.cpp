// The window's editor side as a document: where the candidate in the editor is saved (Save, Save
// As; over the problem's baseline only when the engineer says so), the modified marker in the title,
// the question before an edit would be lost (Open, Reload, Open Iteration in Editor, Quit), and the
// Edit menu (Find/Replace, Go to Line).
#include "app/main_window.h"

#include "widgets/find_bar.h"
#include "widgets/kernel_editor.h"
#include "widgets/string_conversion.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>

namespace kl::gui {

namespace {

MainWindow::UnsavedEdits askWithMessageBox(QWidget* parent, const QString& file, const QString& action)
{
    QMessageBox box(QMessageBox::Warning, MainWindow::tr("Unsaved Changes"),
        //: %1 the candidate's file name, or "the new candidate"
        MainWindow::tr("The editor has unsaved changes to %1.").arg(file),
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, parent);
    //: %1 what is about to happen: "Reloading the problem", "Quitting", ...
    box.setInformativeText(MainWindow::tr("%1 discards them. Save them first?").arg(action));
    box.setDefaultButton(QMessageBox::Save);
    switch (box.exec()) {
    case QMessageBox::Save:
        return MainWindow::UnsavedEdits::Save;
    case QMessageBox::Discard:
        return MainWindow::UnsavedEdits::Discard;
    default:
        return MainWindow::UnsavedEdits::Cancel;
    }
}

// Save on the problem's baseline: its own file, against which every session of the problem is timed.
MainWindow::BaselineSave askBeforeOverwritingTheBaseline(QWidget* parent, const QString& file)
{
    QMessageBox box(QMessageBox::Warning, MainWindow::tr("Save the Baseline Kernel?"),
        //: %1 the baseline kernel's file name
        MainWindow::tr("%1 is the problem's baseline kernel.").arg(QFileInfo(file).fileName()), QMessageBox::NoButton,
        parent);
    box.setInformativeText(MainWindow::tr("Every session of this problem is timed against it: overwritten, the "
                                          "problem changes. Save your edit as a new file instead?"));
    //: button of the question before Save overwrites the problem's baseline kernel
    QPushButton* asNew = box.addButton(MainWindow::tr("Save as a New File…"), QMessageBox::AcceptRole);
    //: button: write the edit over the problem's baseline kernel
    QPushButton* overwrite = box.addButton(MainWindow::tr("Overwrite the Baseline"), QMessageBox::DestructiveRole);
    box.addButton(QMessageBox::Cancel);
    box.setDefaultButton(asNew);
    box.exec();
    if (box.clickedButton() == asNew)
        return MainWindow::BaselineSave::SaveAsNewFile;
    if (box.clickedButton() == overwrite)
        return MainWindow::BaselineSave::Overwrite;
    return MainWindow::BaselineSave::Cancel;
}

} // namespace

void MainWindow::buildEditMenu()
{
    QMenu* edit = new QMenu(tr("&Edit"), this);
    // After File, before Analysis.
    const QList<QAction*> menus = menuBar()->actions();
    menuBar()->insertMenu(menus.size() > 1 ? menus[1] : nullptr, edit);
    auto add = [edit, this](const QString& text, const QKeySequence& keys, auto&& action) {
        QAction* item = edit->addAction(text, this, std::forward<decltype(action)>(action));
        item->setShortcut(keys);
        return item;
    };
    //: menu action: the find bar under the editor
    add(tr("&Find…"), QKeySequence::Find, [this] {
        showWorkspace(Workspace::Editor);
        m_findBar->open(false);
    });
    add(tr("Find &Next"), QKeySequence::FindNext, [this] { m_findBar->findNext(true); });
    add(tr("Find Pre&vious"), QKeySequence::FindPrevious, [this] { m_findBar->findNext(false); });
    //: menu action: the find bar with its replace row
    add(tr("&Replace…"), QKeySequence(Qt::CTRL | Qt::Key_H), [this] {
        showWorkspace(Workspace::Editor);
        m_findBar->open(true);
    });
    edit->addSeparator();
    add(tr("&Go to Line…"), QKeySequence(Qt::CTRL | Qt::Key_G), [this] { askForLine(); });
}

void MainWindow::addSaveActions(QMenu* file)
{
    file->addAction(tr("&Save Candidate"), this, [this] { saveCandidate(); })->setShortcut(QKeySequence::Save);
    file->addAction(tr("Save Candidate &As…"), this, [this] { saveCandidateAs(); })->setShortcut(QKeySequence::SaveAs);
}

void MainWindow::setUnsavedEditsPrompt(UnsavedEditsPrompt prompt) { m_unsavedPrompt = std::move(prompt); }

void MainWindow::setBaselineSavePrompt(BaselineSavePrompt prompt) { m_baselinePrompt = std::move(prompt); }

bool MainWindow::isProblemBaseline(const QString& path) const
{
    return m_problem && !m_problem->baselinePath.empty() && !path.isEmpty()
        && QFileInfo(path) == QFileInfo(toQString(m_problem->baselinePath.string()));
}

QString MainWindow::candidateFileName() const
{
    //: how the unsaved-changes question names a candidate that has no file yet
    return m_candidatePath.isEmpty() ? tr("the new candidate") : QFileInfo(m_candidatePath).fileName();
}

bool MainWindow::settleUnsavedEdits(const QString& action)
{
    if (!m_editor->isModified())
        return true;
    const UnsavedEdits answer
        = m_unsavedPrompt ? m_unsavedPrompt(action) : askWithMessageBox(this, candidateFileName(), action);
    switch (answer) {
    case UnsavedEdits::Save:
        return saveCandidate();
    case UnsavedEdits::Discard:
        return true;
    case UnsavedEdits::Cancel:
        break;
    }
    //: status bar; %1 what was not done
    setStatus(tr("%1 cancelled: the editor keeps its changes.").arg(action), false);
    return false;
}

bool MainWindow::saveCandidate()
{
    if (m_candidatePath.isEmpty())
        return saveCandidateAs();
    if (isProblemBaseline(m_candidatePath) && !m_baselineOverwriteAllowed) {
        const BaselineSave answer = m_baselinePrompt ? m_baselinePrompt(m_candidatePath)
                                                     : askBeforeOverwritingTheBaseline(this, m_candidatePath);
        switch (answer) {
        case BaselineSave::SaveAsNewFile:
            return saveCandidateAs();
        case BaselineSave::Cancel:
            //: status bar; %1 the baseline kernel's file
            setStatus(tr("Not saved: the baseline kernel %1 is unchanged").arg(m_candidatePath), false);
            return false;
        case BaselineSave::Overwrite:
            m_baselineOverwriteAllowed = true;
            break;
        }
    }
    return writeCandidate();
}

bool MainWindow::writeCandidate()
{
    QSaveFile file(m_candidatePath);
    const QByteArray bytes = m_editor->source().toUtf8();
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
        //: status bar; %1 the file, %2 the system's reason
        setStatus(tr("Cannot save %1: %2").arg(m_candidatePath, file.errorString()), true);
        return false;
    }
    m_editor->setModified(false);
    setStatus(tr("Saved %1").arg(m_candidatePath), false);
    return true;
}

bool MainWindow::saveCandidateAs(const QString& path)
{
    QString target = path;
    if (target.isEmpty()) {
        // Beside the baseline, never on it: a new file is what was asked for.
        QString start = QStringLiteral("candidate.cu");
        if (!m_candidatePath.isEmpty() && !isProblemBaseline(m_candidatePath))
            start = m_candidatePath;
        else if (m_problem) // a Triton problem's candidate is a .py file
            start = toQString((m_problem->dir / "candidate").string())
                + (m_problem->baselinePath.extension() == ".py" ? QStringLiteral(".py") : QStringLiteral(".cu"));
        target = QFileDialog::getSaveFileName(this, tr("Save Candidate As"), start,
            //: file dialog filter
            tr("Kernel sources (*.cu *.cuh *.py);;All files (*)"));
        if (target.isEmpty())
            return false;
    }
    const QString previous = m_candidatePath;
    m_candidatePath = target;
    // Chosen by name here (the file dialog asked before replacing it): no second question.
    if (!writeCandidate()) {
        m_candidatePath = previous;
        return false;
    }
    if (isProblemBaseline(target))
        m_baselineOverwriteAllowed = true;
    return true;
}

void MainWindow::askForLine()
{
    showWorkspace(Workspace::Editor);
    int line = 0, index = 0;
    m_editor->getCursorPosition(&line, &index);
    bool ok = false;
    const int chosen = QInputDialog::getInt(this, tr("Go to Line"),
        //: %1 the number of lines in the editor
        tr("Line (1–%1):").arg(m_editor->lines()), line + 1, 1, std::max(1, m_editor->lines()), 1, &ok);
    if (ok)
        m_editor->goToLine(chosen);
}

void MainWindow::setDocumentTitle(const QString& name)
{
    //: window title; %1 the problem or store shown; [*] is where Qt puts the unsaved-changes marker
    setWindowTitle(tr("%1[*] — KernelLoop").arg(name));
}

} // namespace kl::gui

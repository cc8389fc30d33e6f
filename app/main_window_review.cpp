// The window's review side: opening stores and sessions (menu, command line, drops), the Review
// menu's actions, and handing an iteration's source to the editor.
#include "app/main_window.h"

#include "app/campaign_report_window.h"
#include "app/review_workspace.h"
#include "app/store_document.h"
#include "core/model/error.h"
#include "widgets/charts_panel.h"
#include "widgets/iteration_chart.h"
#include "widgets/iteration_selection.h"
#include "widgets/kernel_editor.h"
#include "widgets/string_conversion.h"
#include "widgets/tunables_panel.h"

#include <QAction>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenuBar>
#include <QMimeData>
#include <QStatusBar>
#include <QTabWidget>

namespace kl::gui {

void MainWindow::buildReviewMenu()
{
    auto* review = new QMenu(tr("&Review"), menuBar());
    QAction* help = nullptr; // before Help, where the other menus are
    for (QAction* a : menuBar()->actions())
        if (a->menu() && a->text() == tr("&Help"))
            help = a;
    menuBar()->insertMenu(help, review);
    QAction* best = review->addAction(tr("Select &Best Iteration"), this, [this] {
        if (m_review->hasSession())
            m_review->openSession(m_review->selection()->session()->session.id);
    });
    m_sessionActions.append(best);
    review->addSeparator();
    QAction* kernel = review->addAction(tr("Export &Kernel…"), this, [this] {
        const QString file = QFileDialog::getSaveFileName(
            this, tr("Export Kernel"), m_review->exportKernelName(), tr("Kernel sources (*.cu *.py)"));
        if (!file.isEmpty()) {
            const QString error = m_review->exportKernel(file);
            setStatus(error.isEmpty() ? tr("Wrote %1").arg(file) : error, !error.isEmpty());
        }
    });
    m_iterationActions.append(kernel);
    auto exportHistory = [this](bool json) {
        const QString file = QFileDialog::getSaveFileName(this, tr("Export History"),
            json ? QStringLiteral("history.json") : QStringLiteral("history.csv"),
            json ? tr("JSON files (*.json)") : tr("CSV files (*.csv)"));
        if (!file.isEmpty()) {
            const QString error = m_review->exportHistory(file, json);
            setStatus(error.isEmpty() ? tr("Wrote %1").arg(file) : error, !error.isEmpty());
        }
    };
    m_sessionActions.append(
        review->addAction(tr("Export History as &CSV…"), this, [exportHistory] { exportHistory(false); }));
    m_sessionActions.append(
        review->addAction(tr("Export History as &JSON…"), this, [exportHistory] { exportHistory(true); }));
    QAction* copy
        = review->addAction(tr("&Copy Chart with Evidence"), this, [this] { m_review->charts()->copyFigure(); });
    m_sessionActions.append(copy);
    QAction* candidate = review->addAction(tr("&Open Iteration in Editor"), this, [this] {
        const auto focus = m_review->selection()->focus();
        if (focus && focus->detail && focus->detail->candidate)
            openCandidate(toQString(focus->detail->candidate->source), focus->detail->candidate->tunables);
    });
    m_iterationActions.append(candidate);
    // Compiler Explorer's diff of two compiles: the selected iteration's SASS/PTX against another's.
    QAction* code = review->addAction(tr("Compare &Code With…"), this, [this] {
        const auto session = m_review->selection()->session();
        const int current = m_review->selection()->current();
        if (!session || current == 0)
            return;
        bool ok = false;
        //: asks which iteration the selected one's compiled code is compared with; 0 is its parent
        const int other = QInputDialog::getInt(this, tr("Compare Code"),
            tr("Compare the SASS/PTX of iteration %1 with iteration (0: its parent):").arg(current),
            m_review->selection()->comparedWith(), 0, static_cast<int>(session->rows.size()), 1, &ok);
        if (ok)
            m_review->compareCode(other);
    });
    m_iterationActions.append(code);
    review->addSeparator();
    // Nsight Compute's baselines: the Metrics page compares every iteration with a pinned one.
    QAction* pin = review->addAction(tr("&Pin Iteration as Metrics Baseline"), this, [this] {
        const int index = m_review->selection()->current();
        if (m_review->selection()->pinBaseline(index))
            setStatus(tr("Metrics baseline: iteration %1").arg(index), false);
    });
    m_iterationActions.append(pin);
    review->addAction(tr("Pin Baseline from &Another Session…"), this, [this] {
        const QString file = QFileDialog::getOpenFileName(this, tr("Baseline from Another Session"), QString(),
            tr("KernelLoop sessions (*.klsession *.db);;All files (*)"));
        if (file.isEmpty())
            return;
        bool ok = false;
        //: asks which iteration of the other session becomes the metrics baseline
        const int index = QInputDialog::getInt(
            this, tr("Baseline from Another Session"), tr("Iteration of %1:").arg(file), 1, 1, 100000, 1, &ok);
        if (!ok)
            return;
        const QString error = m_review->pinBaselineFrom(file, 0, index);
        setStatus(error.isEmpty() ? tr("Metrics baseline: %1").arg(toQString(m_review->selection()->pinnedBaseline()))
                                  : error,
            !error.isEmpty());
    });
    review->addAction(tr("&Unpin Metrics Baseline"), this, [this] {
        m_review->selection()->unpinBaseline();
        setStatus(tr("Metrics baseline: the problem's baseline"), false);
    });
    review->addSeparator();
    m_sessionActions.append(review->addAction(tr("Campaign &Report…"), this, [this] {
        if (!m_review->hasStore())
            return;
        QString error;
        const auto open = [this](qint64 session) {
            m_review->openSession(session);
            showWorkspace(Workspace::Review);
        };
        if (!showCampaignReport(m_review->document()->path(), this, open, &error))
            setStatus(error, true);
    }));

    QMenu* view = nullptr;
    for (QAction* action : menuBar()->actions())
        if (action->menu() && action->text() == tr("&View"))
            view = action->menu();
    if (view) {
        view->addSeparator();
        view->addAction(tr("&Review Workspace"), this, [this] { showWorkspace(Workspace::Review); })
            ->setShortcut(QKeySequence(Qt::ALT | Qt::Key_1));
        view->addAction(tr("&Editor Workspace"), this, [this] { showWorkspace(Workspace::Editor); })
            ->setShortcut(QKeySequence(Qt::ALT | Qt::Key_2));
    }
    connect(m_workspaces, &QTabWidget::currentChanged, this, &MainWindow::workspaceShown);
    connect(m_review->selection(), &IterationSelection::iterationChanged, this, &MainWindow::updateReviewActions);
    connect(m_review->selection(), &IterationSelection::sessionChanged, this, &MainWindow::updateReviewActions);
    connect(m_review, &ReviewWorkspace::statusMessage, this, &MainWindow::setStatus);
    connect(m_review, &ReviewWorkspace::openAsCandidate, this,
        [this](
            const QString& source, const TunableValues& tunables, const QString&) { openCandidate(source, tunables); });
    updateReviewActions();
}

void MainWindow::updateReviewActions()
{
    for (QAction* action : m_sessionActions)
        action->setEnabled(m_review->hasSession());
    for (QAction* action : m_iterationActions)
        action->setEnabled(m_review->selection()->current() > 0);
}

bool MainWindow::openPath(const QString& path)
{
    if (isStoreFile(path))
        return openStore(path);
    return openProblem(path);
}

bool MainWindow::openStore(const QString& path)
{
    try {
        m_review->openStore(path);
    } catch (const Error& error) {
        showInputError(error, tr("The store cannot be opened"));
        return false;
    }
    m_recent.add(path);
    showWorkspace(Workspace::Review);
    setDocumentTitle(QFileInfo(path).fileName());
    if (!m_review->hasSession())
        setStatus(tr("%1 holds no session yet.").arg(path), false);
    return true;
}

void MainWindow::openCandidate(const QString& source, const TunableValues& tunables)
{
    //: what discards the editor's edits
    if (!settleUnsavedEdits(tr("Opening the iteration in the editor")))
        return;
    m_editor->setSource(source);
    m_candidatePath.clear(); // a new candidate: Save asks where
    if (m_problem) {
        TunableValues values = m_problem->baseline.defaults();
        for (const auto& [name, value] : tunables)
            values[name] = value;
        m_tunables->setTunables(m_problem->baseline.tunables, values);
    }
    showWorkspace(Workspace::Editor);
    if (m_problem)
        analyseNow();
    else
        setStatus(tr("The source is in the editor; open its problem file to analyse it."), false);
}

void MainWindow::showWorkspace(Workspace workspace)
{
    m_workspaces->setCurrentIndex(workspace == Workspace::Review ? 0 : 1);
}

void MainWindow::workspaceShown(int index)
{
    // The compiler's dock speaks about the editor's text only.
    if (QDockWidget* compiler = findChild<QDockWidget*>(QStringLiteral("CompilerDock")))
        compiler->setVisible(index == 1);
}

MainWindow::Workspace MainWindow::currentWorkspace() const
{
    return m_workspaces->currentIndex() == 0 ? Workspace::Review : Workspace::Editor;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls() && event->mimeData()->urls().first().isLocalFile())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QList<QUrl> urls = event->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile())
        return;
    event->acceptProposedAction();
    openPath(urls.first().toLocalFile());
}

} // namespace kl::gui

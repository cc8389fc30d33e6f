#pragma once
// The workbench window, a shell of menus, docks and two workspaces: Review (a stored session,
// every panel following one selection: review_workspace.h) and Editor (the candidate in the
// editor, its static report, its tunables, an occupancy chart, the compiler's word in a dock).
// All work goes through the core; compiles run off the GUI thread through AnalysisScheduler.
#include "app/analysis.h"
#include "app/recent_files.h"

#include <QMainWindow>

#include <functional>
#include <memory>

class QAction;
class QDragEnterEvent;
class QDropEvent;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QSplitter;
class QTabWidget;
class QTableView;
class QTimer;

namespace kl::gui {

class AnalysisScheduler;
class ReviewWorkspace;
class SessionController;
class DiagnosticsModel;
class FindBar;
class KernelEditor;
class OccupancyPanel;
class StaticReportModel;
class StaticReportView;
class TunablesPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Loads a problem and analyses its baseline. On a malformed file the error is shown in the
    // status bar and the diagnostics dock, the previous problem stays open, and false is returned.
    bool openProblem(const QString& path);
    // Opens anything a user has: a problem file, a store or a recorded .klsession (read-only).
    bool openPath(const QString& path);
    // Opens a store or .klsession for viewing; on failure the error is in the status bar.
    bool openStore(const QString& path);
    // Shows `source` in the editor as a new candidate of the open problem.
    void openCandidate(const QString& source, const TunableValues& tunables);
    enum class Workspace { Review, Editor };
    void showWorkspace(Workspace workspace);
    Workspace currentWorkspace() const;
    // Starts an analysis of the editor's text with the tunables shown.
    void analyseNow();

    // The candidate in the editor as a document (main_window_editor.cpp). Save writes it to its
    // file (the problem's baseline file once a problem is open; none for an iteration opened as a
    // new candidate, where Save asks for one); Save As to another file, which it then is.
    // Save on the problem's own baseline never overwrites it unasked: every session of the problem
    // is timed against that file. The question (once per opened problem): save the edit as a new
    // file, overwrite the baseline, or cancel; tests answer through setBaselineSavePrompt.
    bool saveCandidate();
    bool saveCandidateAs(const QString& path = {}); // empty: ask with a file dialog
    QString candidatePath() const { return m_candidatePath; }
    // What to do with unsaved edits before `action` ("Reloading the problem", "Quitting") loses
    // them. The default asks with a message box; tests answer through setUnsavedEditsPrompt.
    enum class UnsavedEdits { Save, Discard, Cancel };
    using UnsavedEditsPrompt = std::function<UnsavedEdits(const QString& action)>;
    void setUnsavedEditsPrompt(UnsavedEditsPrompt prompt);
    enum class BaselineSave { SaveAsNewFile, Overwrite, Cancel };
    using BaselineSavePrompt = std::function<BaselineSave(const QString& baselineFile)>;
    void setBaselineSavePrompt(BaselineSavePrompt prompt);
    // True when the edits are saved or may be dropped; false: the engineer cancelled.
    bool settleUnsavedEdits(const QString& action);
    FindBar* findBar() const { return m_findBar; }
    void askForLine(); // Go to Line (Ctrl+G)

    std::shared_ptr<const Problem> problem() const { return m_problem; }
    std::shared_ptr<const AnalysisOutcome> lastOutcome() const { return m_lastOutcome; }
    bool isAnalysing() const;
    QString statusText() const;

    // The parts, for tests and for the glue in main.cpp.
    KernelEditor* editor() const { return m_editor; }
    StaticReportModel* reportModel() const { return m_reportModel; }
    TunablesPanel* tunablesPanel() const { return m_tunables; }
    DiagnosticsModel* diagnosticsModel() const { return m_diagnosticsModel; }
    OccupancyPanel* occupancyPanel() const { return m_occupancy; }
    ReviewWorkspace* review() const { return m_review; }
    SessionController* sessionController() const { return m_session; } // the Session menu and live docks

signals:
    // An analysis result (a report or a categorised error) is on screen.
    void analysisShown();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildMenus();
    void buildReviewMenu(); // main_window_review.cpp
    void buildEditMenu(); // main_window_editor.cpp
    void addSaveActions(QMenu* file);
    bool writeCandidate(); // to m_candidatePath, no question
    bool isProblemBaseline(const QString& path) const;
    QString candidateFileName() const;
    void setDocumentTitle(const QString& name);
    void updateReviewActions();
    void workspaceShown(int index);
    void buildDocks();
    void openWithDialog();
    void fillRecentMenu();
    void showOutcome(const std::shared_ptr<const AnalysisOutcome>& outcome);
    void showInputError(const Error& error, const QString& what);
    void setStatus(const QString& text, bool isError);
    void updateProblemHeader();
    void jumpToDiagnostic(const QModelIndex& index);
    void fitRightPane();

    std::shared_ptr<const Problem> m_problem;
    std::shared_ptr<const AnalysisOutcome> m_lastOutcome;
    RecentFiles m_recent;

    AnalysisScheduler* m_scheduler;
    ReviewWorkspace* m_review;
    SessionController* m_session = nullptr;
    QTabWidget* m_workspaces;
    QList<QAction*> m_sessionActions; // need an open session
    QList<QAction*> m_iterationActions; // need a selected iteration
    KernelEditor* m_editor;
    FindBar* m_findBar;
    QString m_candidatePath; // where Save writes the editor's text; empty: not saved yet
    UnsavedEditsPrompt m_unsavedPrompt;
    BaselineSavePrompt m_baselinePrompt;
    bool m_baselineOverwriteAllowed = false; // asked and answered Overwrite for the problem open now
    QLabel* m_problemHeader;
    StaticReportModel* m_reportModel;
    StaticReportView* m_reportView;
    TunablesPanel* m_tunables;
    QWidget* m_tunablesPane = nullptr;
    OccupancyPanel* m_occupancy;
    DiagnosticsModel* m_diagnosticsModel;
    QTableView* m_diagnosticsView;
    QPlainTextEdit* m_compilerLog;
    QPlainTextEdit* m_ptx;
    QTabWidget* m_dockTabs;
    QSplitter* m_mainSplitter;
    QSplitter* m_rightSplitter;
    QLabel* m_status;
    QLabel* m_busy;
    QLabel* m_timing;
    QMenu* m_recentMenu = nullptr;
    QTimer* m_editDebounce;
    bool m_fitRightPane = false;
};

} // namespace kl::gui

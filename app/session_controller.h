#pragma once
// The live session in the window: the Session menu (New Session, From a Command Line, Pause after
// the Current Candidate, Resume, Stop Now, Extend Budget, Evaluate the Editor's Kernel, Continue
// from Here, Export), the docks of the review panel, the live transcript and the phase strip, and the
// no-GPU banner. The review workspace follows the running session through LiveHistory (rows from the
// loop's outcomes). The main window only creates it; the loop itself is LiveSession's.
#include "app/live_session.h"
#include "core/compile/static_report.h"
#include "core/model/problem.h"
#include "core/store/records.h"

#include <QFutureWatcher>
#include <QObject>

#include <map>
#include <memory>
#include <utility>

class QAction;
class QDockWidget;
class QLabel;
class QMainWindow;
class QTimer;
class QToolBar;

namespace kl::gui {

class LiveHistory;
class LiveTranscriptPanel;
class MainWindow;
class PhaseStrip;
class PoolStatusPanel;
class ReviewPanel;
class SessionExport;
struct AnalysisOutcome;
struct SessionView;

class SessionController : public QObject {
    Q_OBJECT
public:
    explicit SessionController(MainWindow* window);
    ~SessionController() override;

    // Starts a session from a recipe (the dialog's, or a parsed command line). Refused, with the
    // reason in the status bar and returned, when one runs or the runner has no GPU.
    QString startSession(const session::SessionRecipe& recipe);
    // Checks the runner's hello off the GUI thread; a no-device hello shows the banner.
    void probeRunner(const QString& runnerPath = {});
    // Where the window's runner is: $KERNELLOOP_RUNNER, else beside this program.
    static QString defaultRunnerPath();

    LiveSession* live() const { return m_live; }
    ReviewPanel* reviewPanel() const { return m_reviewPanel; }
    LiveTranscriptPanel* transcript() const { return m_transcript; }
    PhaseStrip* phaseStrip() const { return m_phases; }
    QLabel* banner() const { return m_banner; }
    PoolStatusPanel* poolPanel() const { return m_poolPanel; }
    QDockWidget* poolDock() const { return m_poolDock; }
    bool noDevice() const { return !m_noDevice.isEmpty(); }
    SessionExport* sessionExport() const { return m_export; } // Session ▸ Export

    void showRunDialog();
    void evaluateEditorKernel();
    void continueFromSelected();
    void stop();

signals:
    void probed(); // the runner's hello is in (or it could not start)

private:
    void buildMenu();
    void buildToolBar();
    void updateActions();
    void onStarted(const SessionStarted& started);
    void onIteration(const IterationOutcome& outcome);
    void onReview(const ReviewRequested& request);
    void onEnded(const QString& status, const QString& reason);
    void showStarting(const QString& state);
    void showRunState();
    void pollPool();
    // The session shown in the review workspace when it is of `problem` and its store can be written
    // (its id and the store's path); {0, {}} otherwise.
    std::pair<std::int64_t, QString> openSessionFor(const Problem& problem) const;
    void answer(ReviewDecision decision);
    void status(const QString& text, bool isError);

    MainWindow* m_window;
    LiveSession* m_live;
    ReviewPanel* m_reviewPanel;
    LiveTranscriptPanel* m_transcript;
    PhaseStrip* m_phases;
    QDockWidget* m_reviewDock;
    QDockWidget* m_transcriptDock;
    PoolStatusPanel* m_poolPanel;
    QDockWidget* m_poolDock;
    QTimer* m_poolPoll; // every 500 ms while a session runs
    QToolBar* m_toolBar = nullptr; // the session's actions
    QToolBar* m_strip;
    QToolBar* m_bannerBar;
    QLabel* m_banner;
    QString m_noDevice; // the runner's own no-device message
    QString m_runnerPath;
    std::shared_ptr<const Problem> m_problem; // the running session's, for the review's offline compile
    QFutureWatcher<std::shared_ptr<const AnalysisOutcome>>* m_reviewCompile;
    QFutureWatcher<QString>* m_probe;
    LiveHistory* m_history; // the running session's rows, figures and followed iteration in the workspace
    QAction* m_newSession;
    QAction* m_fromLine;
    QAction* m_pause;
    QAction* m_resume;
    QAction* m_stop;
    QAction* m_extend;
    QAction* m_evaluate;
    QAction* m_continue;
    SessionExport* m_export = nullptr;
    bool m_editing = false;
    bool m_reviewMode = false; // the running session's
    bool m_stopping = false; // Stop Now asked; the strip says so until the end
};

} // namespace kl::gui

#pragma once
// The review workspace: a stored session inspected panel by panel. Sessions and history on the
// left; the selected iteration's source, diff, verification, metrics, findings, evidence and LLM
// exchanges on the right above the charts. Every panel follows one IterationSelection; this
// class only composes them and connects the store to the selection.
#include "app/store_document.h"
#include "core/model/candidate.h"

#include <QFutureWatcher>
#include <QWidget>

#include <memory>

class QSplitter;
class QTabWidget;
class QTableView;

namespace kl::gui {

class ChartsPanel;
class CodeDiffPanel;
class DiffPanel;
class HistoryPanel;
class IterationSelection;
class MetricsModel;
class MetricsView;
class ReportView;
class SessionBrowser;
class SourcePanel;
class TranscriptPanel;

class ReviewWorkspace : public QWidget {
    Q_OBJECT
public:
    explicit ReviewWorkspace(QWidget* parent = nullptr);
    ~ReviewWorkspace() override;

    // Opens a store or .klsession read-only and shows its newest session. Throws kl::Error.
    void openStore(const QString& path);
    // Shows one session of the open store and selects its best iteration.
    void openSession(std::int64_t sessionId);
    // Lists the open store's sessions again (a live session's iteration count and status), keeping
    // the shown one selected.
    void refreshSessionList();
    // The same with a list read elsewhere (off the GUI thread) from the open store.
    void showSessionList(const std::vector<store::SessionRow>& sessions);
    bool hasStore() const { return m_document != nullptr; }
    bool hasSession() const;
    bool figuresPending() const { return m_figures->isRunning(); }
    std::shared_ptr<StoreDocument> document() const { return m_document; }

    // Actions (the window's menus call them; each returns a user-facing error or empty).
    QString exportSession(std::int64_t sessionId, const QString& file) const;
    QString exportKernel(const QString& file) const; // the selected iteration
    // "layernorm_gelu-session1-iteration6.cu" (.py for Triton): what Export Kernel offers to write.
    QString exportKernelName() const;
    // The Metrics page's baseline from iteration `index` of another store or .klsession (its first
    // session when `sessionId` is 0); empty on success, else why not.
    QString pinBaselineFrom(const QString& path, qint64 sessionId, int index);
    QString exportHistory(const QString& file, bool json) const;
    // Review ▸ Compare Code: the selected iteration's SASS/PTX against iteration `other` (0: its parent)
    // and the instruction mix of both, in the Code Diff tab.
    void compareCode(int other);
    // Deletes a session from the open store through a short-lived writable connection (the
    // browsing one stays read-only), then lists the store again. Session browser ▸ Delete asks first.
    QString deleteSession(std::int64_t sessionId);

    IterationSelection* selection() const { return m_selection; }
    SessionBrowser* sessionBrowser() const { return m_browser; }
    HistoryPanel* history() const { return m_history; }
    SourcePanel* sourcePanel() const { return m_source; }
    DiffPanel* diffPanel() const { return m_diff; }
    CodeDiffPanel* codeDiffPanel() const { return m_codeDiff; }
    // The panels behind other tabs catch up with the selection when read (see follow()).
    ReportView* verificationView() const;
    ReportView* findingsView() const;
    ReportView* evidenceView() const;
    MetricsModel* metricsModel() const;
    TranscriptPanel* transcript() const;
    MetricsView* metricsView() const { return m_metricsView; }
    ChartsPanel* charts() const { return m_charts; }
    QTabWidget* inspector() const { return m_inspector; }

signals:
    void openAsCandidate(const QString& source, const kl::TunableValues& tunables, const QString& fileName);
    void statusMessage(const QString& text, bool isError);
    // The open session's chart figures are in (or the session has none to read).
    void figuresShown();
    void sessionShown();

private:
    void askToExport(std::int64_t sessionId);
    void askToDelete(std::int64_t sessionId);
    void figuresRead();

    std::shared_ptr<StoreDocument> m_document;
    IterationSelection* m_selection;
    SessionBrowser* m_browser;
    HistoryPanel* m_history;
    QTabWidget* m_inspector;
    SourcePanel* m_source;
    DiffPanel* m_diff;
    CodeDiffPanel* m_codeDiff;
    ReportView* m_verification;
    MetricsModel* m_metrics;
    MetricsView* m_metricsView;
    ReportView* m_findings;
    ReportView* m_evidence;
    TranscriptPanel* m_transcript;
    ChartsPanel* m_charts;
    QFutureWatcher<std::vector<figures::IterationFigures>>* m_figures;
    std::int64_t m_figuresFor = 0;
    QSplitter* m_columns = nullptr; // history | inspector and charts
};

} // namespace kl::gui

#pragma once
// One proposal waiting for the engineer (review mode): what it changes against the incumbent (a
// diff with the launch-rule and tunable changes as header), its plan and predicted effect, its
// static report (compiled offline at once: registers, spills, occupancy and its limiter) or its
// compile error. Accept, Reject (with a reason the proposer sees next), Steer (free text for the
// next proposal) and Edit (the candidate opens in the editor; Run Edited evaluates the edited
// version instead) answer it. The panel only shows values and emits the engineer's answer.
#include "core/compile/static_report.h"
#include "core/loop/loop_events.h"

#include <QWidget>

#include <memory>

class QAction;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTextBrowser;

namespace kl::gui {

class StaticReportModel;
class StaticReportView;

class ReviewPanel : public QWidget {
    Q_OBJECT
public:
    explicit ReviewPanel(QWidget* parent = nullptr);

    void showRequest(const ReviewRequested& request);
    // The offline compile of the shown proposal: a report, or the compiler's categorised error.
    void setStaticReport(std::shared_ptr<const StaticReport> report);
    void setCompileError(const QString& error);
    // Nothing waits (after an answer, or when the session ends).
    void clearRequest(const QString& why = {});
    bool hasRequest() const { return m_hasRequest; }
    // After Edit: Run Edited is offered until the proposal is answered.
    void setEditing(bool editing);

    // For tests and the window's shortcuts.
    QString diffText() const;
    QString planText() const;
    QString staticText() const;
    QLineEdit* reasonEdit() const { return m_reason; }
    QPushButton* acceptButton() const { return m_accept; }
    QPushButton* rejectButton() const { return m_reject; }
    QPushButton* steerButton() const { return m_steer; }
    QPushButton* editButton() const { return m_edit; }
    QPushButton* runEditedButton() const { return m_runEdited; }
    // Accept, Reject, Steer and Edit as actions with their shortcuts (Ctrl+Return, Ctrl+Shift+R,
    // Ctrl+Shift+T, Ctrl+Shift+E), for the window's menu: the buttons hold none, so that a key is
    // never claimed twice. Enabled while a proposal waits.
    QList<QAction*> reviewActions() const;

signals:
    void accepted();
    void rejected(const QString& reason);
    void steered(const QString& text);
    void editRequested(const QString& source, const kl::TunableValues& tunables, const QString& fileName);
    void runEditedRequested();

private:
    void answer(int kind);
    void setButtonsEnabled(bool enabled);
    void showReportTable(std::shared_ptr<const StaticReport> report);

    bool m_hasRequest = false;
    std::shared_ptr<const ReviewRequested> m_request;
    QLabel* m_title;
    QPlainTextEdit* m_plan;
    QTextBrowser* m_diff;
    QLabel* m_severity;
    QPlainTextEdit* m_compileError;
    StaticReportModel* m_reportModel;
    StaticReportView* m_reportView;
    QLineEdit* m_reason;
    QLabel* m_hint;
    QPushButton* m_accept;
    QPushButton* m_reject;
    QPushButton* m_steer;
    QPushButton* m_edit;
    QPushButton* m_runEdited;
    QAction* m_acceptAction;
    QAction* m_rejectAction;
    QAction* m_steerAction;
    QAction* m_editAction;
};

} // namespace kl::gui

#pragma once
// The selected iteration's source against its parent (or any iteration the engineer picks, also
// of another session of the same problem, as Nsight Compute compares against a baseline report),
// inline or side by side, with the tunable and launch-rule changes as a header. The diff itself
// is core's (report::diffSources); this only draws it.
#include "core/report/candidate_changes.h"
#include "core/report/source_diff.h"
#include "widgets/iteration_selection.h"

#include <QWidget>

#include <functional>

class QComboBox;
class QLabel;
class QSpinBox;
class QTextBrowser;

namespace kl::gui {

class DiffPanel : public QWidget, public IterationViewer {
    Q_OBJECT
public:
    enum class Layout { Inline, SideBySide };

    // Reads one iteration of any session of the shown store (for the other sessions' iterations).
    using IterationLoader
        = std::function<std::shared_ptr<const store::IterationDetail>(std::int64_t sessionId, int index)>;

    explicit DiffPanel(IterationSelection* selection, QWidget* parent = nullptr);

    // Without a loader the session chooser offers only the shown session.
    void setIterationLoader(IterationLoader loader);
    // Compares with iteration `index` of session `sessionId` (the shown session's id or 0: back to
    // comparing within it, as the selection says). What the chooser and the iteration box do.
    void compareWithSession(std::int64_t sessionId, int index);
    std::int64_t comparedSession() const { return m_otherSessionId; }

    void showSession(const std::shared_ptr<const SessionView>& session) override;
    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

    void setLayout(Layout layout);
    const report::SourceDiff& shownDiff() const { return m_diff; }
    const report::CandidateChanges& shownChanges() const { return m_changes; }
    QString headerText() const;
    QTextBrowser* body() const; // with the shown diff's text (laid out when the panel is hidden)
    // Side by side: the old and the new side, each its own pane with a title; rows scroll together.
    QTextBrowser* beforePane() const
    {
        flushBody();
        return m_before;
    }
    QTextBrowser* afterPane() const
    {
        flushBody();
        return m_after;
    }
    QString beforeTitle() const;
    QString afterTitle() const;
    QSpinBox* compareBox() const { return m_compare; }
    QComboBox* sessionBox() const { return m_sessionBox; }

protected:
    void showEvent(QShowEvent* event) override;

private:
    void setBody(QString html);
    void setSides(const QString& beforeTitle, const QString& afterTitle);
    void flushBody() const;
    void render();
    void rediff();
    void loadOther();
    void offerSessions();

    IterationSelection* m_selection;
    QComboBox* m_layoutBox;
    QComboBox* m_sessionBox;
    QSpinBox* m_compare;
    QLabel* m_header;
    QTextBrowser* m_body;
    QWidget* m_sides;
    QLabel* m_beforeTitle;
    QLabel* m_afterTitle;
    QTextBrowser* m_before;
    QTextBrowser* m_after;
    bool m_sidesShowDiff = false; // the side panes show m_diff (else the body's message, on the left)
    mutable QString m_pendingBody; // what m_body shows next: laid out once the panel is visible or read
    mutable bool m_bodyPending = false;
    Layout m_layout = Layout::Inline;
    std::shared_ptr<const IterationFocus> m_focus;
    std::shared_ptr<const SessionView> m_session;
    IterationLoader m_loader;
    std::int64_t m_otherSessionId = 0; // 0: compare within the shown session
    std::shared_ptr<const store::IterationDetail> m_other; // the other session's chosen iteration
    report::SourceDiff m_diff;
    report::CandidateChanges m_changes;
};

} // namespace kl::gui

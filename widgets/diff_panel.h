#pragma once
// The selected iteration's source against its parent (or any iteration the engineer picks),
// inline or side by side, with the tunable and launch-rule changes as a header. The diff itself
// is core's (review::diffSources); this only draws it.
#include "core/review/candidate_changes.h"
#include "core/review/source_diff.h"
#include "widgets/iteration_selection.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QSpinBox;
class QTextBrowser;

namespace kl::gui {

class DiffPanel : public QWidget, public IterationViewer {
    Q_OBJECT
public:
    enum class Layout { Inline, SideBySide };

    explicit DiffPanel(IterationSelection* selection, QWidget* parent = nullptr);

    void showSession(const std::shared_ptr<const SessionView>& session) override;
    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

    void setLayout(Layout layout);
    const review::SourceDiff& shownDiff() const { return m_diff; }
    const review::CandidateChanges& shownChanges() const { return m_changes; }
    QString headerText() const;
    QTextBrowser* body() const { return m_body; }
    QSpinBox* compareBox() const { return m_compare; }

private:
    void render();

    IterationSelection* m_selection;
    QComboBox* m_layoutBox;
    QSpinBox* m_compare;
    QLabel* m_header;
    QTextBrowser* m_body;
    Layout m_layout = Layout::Inline;
    std::shared_ptr<const IterationFocus> m_focus;
    review::SourceDiff m_diff;
    review::CandidateChanges m_changes;
};

} // namespace kl::gui

#pragma once
// The selected iteration's compiled code against the iteration it is compared with (its parent, or the
// one the engineer picks): SASS where both have it, else PTX saying why, side by side with the changed
// rows marked, and above it the instruction mix of both and the change per class (core's
// review::compareCode draws nothing; this only shows it). Compiler Explorer's diff view, per iteration.
#include "core/review/code_comparison.h"
#include "widgets/iteration_selection.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QSpinBox;
class QTableWidget;

namespace kl::gui {

class CodeDiffPanel : public QWidget, public IterationViewer {
    Q_OBJECT
public:
    enum class Code { SassWhereStored, Ptx };

    explicit CodeDiffPanel(IterationSelection* selection, QWidget* parent = nullptr);

    void showSession(const std::shared_ptr<const SessionView>& session) override;
    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

    void setCode(Code code);
    const review::CodeComparison& shownComparison() const { return m_comparison; }
    QString headerText() const;
    QTableWidget* mixTable() const { return m_mix; }
    QPlainTextEdit* beforePane() const { return m_before; }
    QPlainTextEdit* afterPane() const { return m_after; }
    QString beforeTitle() const;
    QString afterTitle() const;
    QSpinBox* compareBox() const { return m_compare; }

private:
    void compare();
    void fillMix();
    void fillPanes();

    IterationSelection* m_selection;
    QComboBox* m_codeBox;
    QSpinBox* m_compare;
    QLabel* m_header;
    QTableWidget* m_mix;
    QLabel* m_beforeTitle;
    QLabel* m_afterTitle;
    QPlainTextEdit* m_before;
    QPlainTextEdit* m_after;
    std::shared_ptr<const IterationFocus> m_focus;
    review::CodeComparison m_comparison;
    Code m_code = Code::SassWhereStored;
};

} // namespace kl::gui

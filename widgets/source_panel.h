#pragma once
// The selected iteration's source, read-only, with who proposed it and its tunables above it.
// "Open in Editor" hands the source to the editor as a new candidate.
#include "widgets/iteration_selection.h"

#include <QWidget>

class QLabel;
class QPushButton;

namespace kl::gui {

class KernelEditor;

class SourcePanel : public QWidget, public IterationViewer {
    Q_OBJECT
public:
    explicit SourcePanel(IterationSelection* selection, QWidget* parent = nullptr);

    void showSession(const std::shared_ptr<const SessionView>& session) override;
    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

    KernelEditor* editor() const { return m_editor; }
    QString headerText() const;

signals:
    void openAsCandidate(const QString& source, const kl::TunableValues& tunables, const QString& fileName);

private:
    KernelEditor* m_editor;
    QLabel* m_header;
    QPushButton* m_openInEditor;
    std::shared_ptr<const IterationFocus> m_focus;
};

} // namespace kl::gui

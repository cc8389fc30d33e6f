#pragma once
// The LLM exchanges of the selected iteration: each request's prompt and the model's reply, as
// `show --prompts` prints them. Other proposers say that they send no prompt.
#include "widgets/iteration_selection.h"

#include <QWidget>

class QListWidget;
class QPlainTextEdit;

namespace kl::gui {

class TranscriptPanel : public QWidget, public IterationViewer {
    Q_OBJECT
public:
    explicit TranscriptPanel(IterationSelection* selection, QWidget* parent = nullptr);

    void showSession(const std::shared_ptr<const SessionView>& session) override;
    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

    QListWidget* exchanges() const { return m_list; }
    QString shownText() const;

private:
    void showExchange(int row);

    QListWidget* m_list;
    QPlainTextEdit* m_text;
    std::shared_ptr<const IterationFocus> m_focus;
};

} // namespace kl::gui

#pragma once
// The LLM's text of the running session as it is written: each role's reply under its own
// heading, appended in coalesced pieces (the stored exchanges of a finished iteration are in the
// review workspace's LLM tab).
#include <QWidget>

class QPlainTextEdit;

namespace kl::gui {

class LiveTranscriptPanel : public QWidget {
    Q_OBJECT
public:
    explicit LiveTranscriptPanel(QWidget* parent = nullptr);

    void appendText(const QString& role, int alternative, const QString& text);
    void appendNote(const QString& note); // e.g. "iteration 3: passed, 1.21x"
    void clear();
    QString text() const;

private:
    QPlainTextEdit* m_text;
    QString m_lastRole;
    int m_lastAlternative = -1;
};

} // namespace kl::gui

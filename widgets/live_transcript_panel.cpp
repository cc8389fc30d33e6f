#include "widgets/live_transcript_panel.h"

#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTextCursor>
#include <QVBoxLayout>

namespace kl::gui {

LiveTranscriptPanel::LiveTranscriptPanel(QWidget* parent)
    : QWidget(parent)
    , m_text(new QPlainTextEdit(this))
{
    m_text->setReadOnly(true);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    //: placeholder of the live transcript
    m_text->setPlaceholderText(tr("The LLM's reply appears here while it is being written."));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_text);
}

void LiveTranscriptPanel::appendText(const QString& role, int alternative, const QString& text)
{
    QScrollBar* bar = m_text->verticalScrollBar();
    const bool atEnd = bar->value() == bar->maximum();
    QTextCursor cursor(m_text->document());
    cursor.movePosition(QTextCursor::End);
    if (role != m_lastRole || alternative != m_lastAlternative) {
        //: live transcript heading: the LLM role writing (planner, coder, ...) and which of k alternatives
        const QString heading = alternative > 0 ? tr("── %1 (alternative %2) ──").arg(role).arg(alternative + 1)
                                                : tr("── %1 ──").arg(role);
        cursor.insertText(
            (m_text->document()->isEmpty() ? QString() : QStringLiteral("\n\n")) + heading + QLatin1Char('\n'));
        m_lastRole = role;
        m_lastAlternative = alternative;
    }
    cursor.insertText(text);
    if (atEnd) // follow the text unless the engineer scrolled up to read
        bar->setValue(bar->maximum());
}

void LiveTranscriptPanel::appendNote(const QString& note)
{
    QTextCursor cursor(m_text->document());
    cursor.movePosition(QTextCursor::End);
    cursor.insertText((m_text->document()->isEmpty() ? QString() : QStringLiteral("\n")) + QStringLiteral("• ") + note
        + QLatin1Char('\n'));
    m_lastRole.clear();
    m_lastAlternative = -1;
    m_text->verticalScrollBar()->setValue(m_text->verticalScrollBar()->maximum());
}

void LiveTranscriptPanel::clear()
{
    m_text->clear();
    m_lastRole.clear();
    m_lastAlternative = -1;
}

QString LiveTranscriptPanel::text() const { return m_text->toPlainText(); }

} // namespace kl::gui

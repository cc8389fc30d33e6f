#include "widgets/code_listing_view.h"

#include <QTextBlock>
#include <QTextCursor>

namespace kl::gui {

namespace {

// The rows of the editor's line: a light blue that reads over the heat backgrounds.
const QColor kHighlight(0xc8, 0xdc, 0xff);

} // namespace

CodeListingView::CodeListingView(QWidget* parent)
    : QPlainTextEdit(parent)
{
    setReadOnly(true);
    // Read-only still shows where the user stands: the row a click or the arrow keys moved to.
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    QFont mono(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::TypeWriter);
    setFont(mono);
    connect(this, &QPlainTextEdit::cursorPositionChanged, this, &CodeListingView::cursorMoved);
}

void CodeListingView::setRows(QVector<CodeRow> rows)
{
    m_rows = std::move(rows);
    m_highlighted.clear();
    QStringList lines;
    lines.reserve(m_rows.size());
    for (const CodeRow& row : m_rows)
        lines.append(row.text);
    m_moving = true;
    setExtraSelections({});
    setPlainText(lines.join(QLatin1Char('\n')));
    QTextCursor cursor(document());
    for (int i = 0; i < m_rows.size(); ++i) {
        if (!m_rows[i].background.isValid())
            continue;
        cursor.setPosition(document()->findBlockByNumber(i).position());
        QTextBlockFormat format;
        format.setBackground(m_rows[i].background);
        cursor.mergeBlockFormat(format);
    }
    m_moving = false;
}

void CodeListingView::setMessage(const QString& text)
{
    m_rows.clear();
    m_highlighted.clear();
    m_moving = true;
    setExtraSelections({});
    setPlainText(text);
    m_moving = false;
}

int CodeListingView::highlightSourceLine(int line)
{
    m_highlighted.clear();
    QList<QTextEdit::ExtraSelection> selections;
    for (int i = 0; i < m_rows.size(); ++i) {
        if (line <= 0 || m_rows[i].sourceLine != line)
            continue;
        m_highlighted.append(i);
        QTextEdit::ExtraSelection selection;
        selection.cursor = QTextCursor(document()->findBlockByNumber(i));
        // Over a sampled row the highlight mixes with its heat, so that the hot instructions still show.
        const QColor heat = m_rows[i].background;
        selection.format.setBackground(heat.isValid()
                ? QColor((heat.red() + kHighlight.red()) / 2, (heat.green() + kHighlight.green()) / 2,
                    (heat.blue() + kHighlight.blue()) / 2)
                : kHighlight);
        selection.format.setProperty(QTextFormat::FullWidthSelection, true);
        selections.append(selection);
    }
    setExtraSelections(selections);
    const int current = currentRow();
    const bool standsOnLine = current >= 0 && current < m_rows.size() && m_rows[current].sourceLine == line;
    if (!m_highlighted.isEmpty() && !standsOnLine)
        moveCursorTo(m_highlighted.front());
    return static_cast<int>(m_highlighted.size());
}

int CodeListingView::currentRow() const { return m_rows.isEmpty() ? -1 : textCursor().blockNumber(); }

QRect CodeListingView::rowRect(int row) const
{
    const QTextBlock block = document()->findBlockByNumber(row);
    if (!block.isValid())
        return {};
    return cursorRect(QTextCursor(block)).adjusted(0, 0, viewport()->width(), 0);
}

void CodeListingView::moveCursorTo(int row)
{
    m_moving = true;
    setTextCursor(QTextCursor(document()->findBlockByNumber(row)));
    centerCursor();
    m_moving = false;
}

void CodeListingView::cursorMoved()
{
    if (m_moving)
        return;
    const int row = currentRow();
    if (row >= 0 && row < m_rows.size() && m_rows[row].sourceLine > 0)
        emit sourceLineChosen(m_rows[row].sourceLine);
}

} // namespace kl::gui

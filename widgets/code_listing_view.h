#pragma once
// The machine-code pane of the line profile: a whole kernel's SASS (or PTX), one instruction a row,
// each row knowing the source line it was generated for. The rows of a source line are highlighted
// on request; moving to a row (a click or the keys) asks for its source line with sourceLineChosen.
// The pane knows nothing of the editor or the loop: LineProfilePanel wires the two directions.
#include <QColor>
#include <QPlainTextEdit>
#include <QVector>

namespace kl::gui {

struct CodeRow {
    QString text;
    int sourceLine = 0; // 0: a row of no source line (a function's name, a label, a directive)
    qint64 samples = 0; // PC samples of a SASS instruction
    QColor background; // the row's heat (its share of the samples); invalid: none
};

class CodeListingView : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit CodeListingView(QWidget* parent = nullptr);

    void setRows(QVector<CodeRow> rows);
    void setMessage(const QString& text); // no rows: a sentence saying why
    const QVector<CodeRow>& rows() const { return m_rows; }

    // Highlights the rows of a 1-based source line and brings the first into view, unless the
    // cursor already stands on one of them (the user moved there); returns how many it highlighted.
    int highlightSourceLine(int line);
    QVector<int> highlightedRows() const { return m_highlighted; }
    int currentRow() const; // the cursor's row, -1 without rows
    QRect rowRect(int row) const; // in viewport coordinates

signals:
    // The user moved to a row generated for `line` (1-based).
    void sourceLineChosen(int line);

private:
    void cursorMoved();
    void moveCursorTo(int row);

    QVector<CodeRow> m_rows;
    QVector<int> m_highlighted;
    bool m_moving = false; // the pane moves its own cursor: not the user's choice
};

} // namespace kl::gui

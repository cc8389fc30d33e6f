#pragma once
// The editor's find and replace bar (shown under the editor by Ctrl+F / Ctrl+H, hidden by Esc):
// plain-text search that wraps around, optionally case-sensitive, replace one or all in one undo
// step. It drives QScintilla's own search (findFirst/findNext/replace).
#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QsciScintilla;

namespace kl::gui {

class FindBar : public QWidget {
    Q_OBJECT
public:
    explicit FindBar(QsciScintilla* editor, QWidget* parent = nullptr);

    // Shows the bar with the find field focused (and the replace row when `replace`), seeded with
    // the editor's selection when it is one line.
    void open(bool replace);

    // Selects the next (or previous) match after the cursor, wrapping at the end; false when the
    // text has none. The bar says so.
    bool findNext(bool forward = true);
    // Replaces the selected match (if the selection is one) and selects the next one.
    bool replaceCurrent();
    // Replaces every match in the text as one undo step; returns how many.
    int replaceAll();

    QLineEdit* findEdit() const { return m_find; }
    QLineEdit* replaceEdit() const { return m_replace; }
    QCheckBox* caseBox() const { return m_case; }
    QString message() const;

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    void setReplaceShown(bool shown);
    bool selectionIsMatch() const;

    QsciScintilla* m_editor;
    QLineEdit* m_find;
    QLineEdit* m_replace;
    QCheckBox* m_case;
    QLabel* m_message;
    QList<QWidget*> m_replaceRow;
};

} // namespace kl::gui

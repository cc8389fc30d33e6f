#include "widgets/find_bar.h"

#include <QCheckBox>
#include <QGridLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QToolButton>
#include <Qsci/qsciscintilla.h>

namespace kl::gui {

FindBar::FindBar(QsciScintilla* editor, QWidget* parent)
    : QWidget(parent)
    , m_editor(editor)
    , m_find(new QLineEdit(this))
    , m_replace(new QLineEdit(this))
    , m_case(new QCheckBox(tr("Match &case"), this))
    , m_message(new QLabel(this))
{
    //: find bar placeholder
    m_find->setPlaceholderText(tr("Find"));
    //: find bar placeholder
    m_replace->setPlaceholderText(tr("Replace with"));
    auto* previous = new QPushButton(tr("&Previous"), this);
    auto* next = new QPushButton(tr("&Next"), this);
    auto* replaceOne = new QPushButton(tr("&Replace"), this);
    auto* replaceEvery = new QPushButton(tr("Replace &All"), this);
    auto* close = new QToolButton(this);
    close->setText(QStringLiteral("×"));
    close->setToolTip(tr("Close (Esc)"));
    close->setAutoRaise(true);

    auto* layout = new QGridLayout(this);
    layout->setContentsMargins(4, 2, 4, 2);
    layout->setHorizontalSpacing(4);
    layout->setVerticalSpacing(2);
    layout->addWidget(m_find, 0, 0);
    layout->addWidget(previous, 0, 1);
    layout->addWidget(next, 0, 2);
    layout->addWidget(m_case, 0, 3);
    layout->addWidget(m_message, 0, 4);
    layout->addWidget(close, 0, 5);
    layout->addWidget(m_replace, 1, 0);
    layout->addWidget(replaceOne, 1, 1);
    layout->addWidget(replaceEvery, 1, 2);
    layout->setColumnStretch(0, 2);
    layout->setColumnStretch(4, 1);
    m_replaceRow = { m_replace, replaceOne, replaceEvery };

    connect(m_find, &QLineEdit::returnPressed, this, [this] { findNext(true); });
    connect(m_replace, &QLineEdit::returnPressed, this, &FindBar::replaceCurrent);
    connect(next, &QPushButton::clicked, this, [this] { findNext(true); });
    connect(previous, &QPushButton::clicked, this, [this] { findNext(false); });
    connect(replaceOne, &QPushButton::clicked, this, &FindBar::replaceCurrent);
    connect(replaceEvery, &QPushButton::clicked, this, &FindBar::replaceAll);
    connect(close, &QToolButton::clicked, this, [this] {
        hide();
        m_editor->setFocus();
    });
    connect(m_find, &QLineEdit::textChanged, m_message, &QLabel::clear);
    hide();
}

void FindBar::open(bool replace)
{
    if (m_editor->hasSelectedText() && !m_editor->selectedText().contains(QLatin1Char('\n')))
        m_find->setText(m_editor->selectedText());
    setReplaceShown(replace);
    show();
    m_find->setFocus();
    m_find->selectAll();
}

void FindBar::setReplaceShown(bool shown)
{
    for (QWidget* widget : m_replaceRow)
        widget->setVisible(shown);
}

QString FindBar::message() const { return m_message->text(); }

bool FindBar::findNext(bool forward)
{
    const QString text = m_find->text();
    if (text.isEmpty())
        return false;
    // Search from the far side of the selection, so that a selected match is stepped over.
    int lineFrom = 0, indexFrom = 0, lineTo = 0, indexTo = 0;
    if (m_editor->hasSelectedText()) {
        m_editor->getSelection(&lineFrom, &indexFrom, &lineTo, &indexTo);
    } else {
        m_editor->getCursorPosition(&lineFrom, &indexFrom);
        lineTo = lineFrom;
        indexTo = indexFrom;
    }
    const bool found = forward
        ? m_editor->findFirst(text, false, m_case->isChecked(), false, true, true, lineTo, indexTo)
        : m_editor->findFirst(text, false, m_case->isChecked(), false, true, false, lineFrom, indexFrom);
    //: find bar, when the text does not occur
    m_message->setText(found ? QString() : tr("Not found"));
    return found;
}

bool FindBar::selectionIsMatch() const
{
    return m_editor->hasSelectedText()
        && m_editor->selectedText().compare(
               m_find->text(), m_case->isChecked() ? Qt::CaseSensitive : Qt::CaseInsensitive)
        == 0;
}

bool FindBar::replaceCurrent()
{
    if (m_find->text().isEmpty())
        return false;
    if (selectionIsMatch()) {
        m_editor->replaceSelectedText(m_replace->text());
    }
    return findNext(true);
}

int FindBar::replaceAll()
{
    const QString text = m_find->text();
    if (text.isEmpty())
        return 0;
    int count = 0;
    m_editor->beginUndoAction();
    // No wrap: QScintilla continues after each replacement, so a replacement that contains the
    // searched text is not found again.
    bool found = m_editor->findFirst(text, false, m_case->isChecked(), false, false, true, 0, 0, false);
    while (found) {
        m_editor->replace(m_replace->text());
        ++count;
        found = m_editor->findNext();
    }
    m_editor->endUndoAction();
    //: find bar after Replace All; %n replacements
    m_message->setText(tr("%n replaced", nullptr, count));
    return count;
}

void FindBar::keyPressEvent(QKeyEvent* event)
{
    if (event->key() == Qt::Key_Escape) {
        hide();
        m_editor->setFocus();
        event->accept();
        return;
    }
    QWidget::keyPressEvent(event);
}

} // namespace kl::gui

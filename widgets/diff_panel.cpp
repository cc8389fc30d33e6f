#include "widgets/diff_panel.h"

#include "widgets/html_text.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace kl::gui {

namespace {

const QString kAdded = QStringLiteral("#e3f6e3");
const QString kRemoved = QStringLiteral("#fbe4e4");
const QString kHunk = QStringLiteral("#e8eef8");

QString cell(const QString& text, const QString& background, const QString& style = {})
{
    return QStringLiteral("<td style=\"white-space:pre; background:") + background + QStringLiteral(";") + style
        + QStringLiteral("\">") + text + QStringLiteral("</td>");
}

QString lineNumber(int line) { return line > 0 ? QString::number(line) : QString(); }

QString inlineHtml(const review::SourceDiff& diff)
{
    QString out = QStringLiteral("<table cellspacing=0 cellpadding=1 width=\"100%\">");
    for (const review::DiffHunk& hunk : diff.hunks) {
        out += QStringLiteral("<tr>") + cell(QString(), kHunk) + cell(QString(), kHunk)
            + cell(QStringLiteral("@@ -%1,%2 +%3,%4 @@")
                       .arg(hunk.beforeStart)
                       .arg(hunk.beforeCount)
                       .arg(hunk.afterStart)
                       .arg(hunk.afterCount),
                kHunk, QStringLiteral("color:#335;"))
            + QStringLiteral("</tr>");
        for (const review::DiffLine& line : hunk.lines) {
            const QString background = line.kind == review::DiffLine::Kind::Added ? kAdded
                : line.kind == review::DiffLine::Kind::Removed                    ? kRemoved
                                                                                  : QStringLiteral("white");
            const QString marker = line.kind == review::DiffLine::Kind::Added ? QStringLiteral("+")
                : line.kind == review::DiffLine::Kind::Removed                ? QStringLiteral("-")
                                                                              : QStringLiteral(" ");
            out += QStringLiteral("<tr>") + cell(lineNumber(line.beforeLine), background, QStringLiteral("color:#888;"))
                + cell(lineNumber(line.afterLine), background, QStringLiteral("color:#888;"))
                + cell(marker + html(line.text), background) + QStringLiteral("</tr>");
        }
    }
    return out + QStringLiteral("</table>");
}

QString sideBySideHtml(const review::SourceDiff& diff)
{
    using Kind = review::SideBySideRow::Kind;
    QString out = QStringLiteral("<table cellspacing=0 cellpadding=1 width=\"100%\">");
    for (const review::SideBySideRow& row : review::sideBySide(diff)) {
        if (row.kind == Kind::HunkBreak) {
            out += QStringLiteral("<tr>") + cell(QStringLiteral("⋯"), kHunk) + cell(QString(), kHunk)
                + cell(QStringLiteral("⋯"), kHunk) + cell(QString(), kHunk) + QStringLiteral("</tr>");
            continue;
        }
        const bool left = row.kind == Kind::Changed || row.kind == Kind::Removed;
        const bool right = row.kind == Kind::Changed || row.kind == Kind::Added;
        const QString before = left ? kRemoved : QStringLiteral("white");
        const QString after = right ? kAdded : QStringLiteral("white");
        out += QStringLiteral("<tr>")
            + cell(lineNumber(row.beforeLine.value_or(0)), before, QStringLiteral("color:#888;"))
            + cell(html(row.beforeText), before, QStringLiteral("width:50%;"))
            + cell(lineNumber(row.afterLine.value_or(0)), after, QStringLiteral("color:#888;"))
            + cell(html(row.afterText), after, QStringLiteral("width:50%;")) + QStringLiteral("</tr>");
    }
    return out + QStringLiteral("</table>");
}

} // namespace

DiffPanel::DiffPanel(IterationSelection* selection, QWidget* parent)
    : QWidget(parent)
    , m_selection(selection)
    , m_layoutBox(new QComboBox(this))
    , m_compare(new QSpinBox(this))
    , m_header(new QLabel(this))
    , m_body(new QTextBrowser(this))
{
    //: diff layout choice: one column with + and - lines
    m_layoutBox->addItem(tr("Inline"));
    //: diff layout choice: before and after in two columns
    m_layoutBox->addItem(tr("Side by side"));
    m_compare->setMinimum(0);
    //: the compare-with box's value 0: diff against the candidate's parent
    m_compare->setSpecialValueText(tr("its parent"));
    m_compare->setPrefix(tr("iteration "));
    m_header->setWordWrap(true);
    m_header->setTextFormat(Qt::RichText);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_body->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_body->setLineWrapMode(QTextEdit::NoWrap);

    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Compare with"), this));
    bar->addWidget(m_compare);
    bar->addStretch(1);
    bar->addWidget(m_layoutBox);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->addLayout(bar);
    layout->addWidget(m_header);
    layout->addWidget(m_body, 1);

    connect(m_layoutBox, &QComboBox::currentIndexChanged, this,
        [this](int index) { setLayout(index == 1 ? Layout::SideBySide : Layout::Inline); });
    connect(m_compare, &QSpinBox::valueChanged, this, [this](int value) { m_selection->compareWith(value); });
    follow(selection, this, this);
}

void DiffPanel::setLayout(Layout layout)
{
    m_layout = layout;
    m_layoutBox->setCurrentIndex(layout == Layout::SideBySide ? 1 : 0);
    render();
}

void DiffPanel::showSession(const std::shared_ptr<const SessionView>& session)
{
    const QSignalBlocker block(m_compare);
    m_compare->setMaximum(session ? static_cast<int>(session->rows.size()) : 0);
    m_compare->setValue(m_selection->comparedWith());
    m_compare->setEnabled(session != nullptr);
}

void DiffPanel::showIteration(const std::shared_ptr<const IterationFocus>& focus)
{
    m_focus = focus;
    m_diff = {};
    m_changes = {};
    const store::CandidateRecord* after
        = focus && focus->detail && focus->detail->candidate ? &*focus->detail->candidate : nullptr;
    const store::CandidateRecord* before
        = focus && focus->compared && focus->compared->candidate ? &*focus->compared->candidate : nullptr;
    if (after && before) {
        m_diff = review::diffSources(before->source, after->source);
        m_changes = review::candidateChanges(before->source, before->tunables, after->source, after->tunables);
    }
    render();
}

void DiffPanel::render()
{
    const store::CandidateRecord* after
        = m_focus && m_focus->detail && m_focus->detail->candidate ? &*m_focus->detail->candidate : nullptr;
    if (!m_focus || !after) {
        m_header->setText(m_focus ? tr("<i>No candidate at this iteration.</i>")
                                  : tr("<i>Select an iteration to see what changed.</i>"));
        m_body->clear();
        return;
    }
    if (!m_focus->compared) {
        m_header->setText(tr("<i>Iteration %1 is the baseline: it has no parent. Choose an iteration to compare "
                             "with above.</i>")
                              .arg(m_focus->index()));
        m_body->clear();
        return;
    }
    const int other = m_focus->compared->row.index;
    QString header = m_focus->comparedIsParent
        //: diff header; %1 this iteration, %2 its parent's iteration, %3 added lines, %4 removed lines
        ? tr("<b>Iteration %1</b> against its parent, iteration %2: +%3 −%4 lines")
        : tr("<b>Iteration %1</b> against iteration %2: +%3 −%4 lines");
    header = header.arg(m_focus->index()).arg(other).arg(m_diff.added).arg(m_diff.removed);
    const std::string changes = review::changesHeaderText(m_changes);
    if (!changes.empty())
        header += QStringLiteral("<br><tt>") + html(changes).replace(QLatin1Char('\n'), QStringLiteral("<br>"))
            + QStringLiteral("</tt>");
    m_header->setText(header);
    if (m_diff.same()) {
        m_body->setHtml(tr("<p><i>The source is the same; only what the header lists differs.</i></p>"));
        return;
    }
    m_body->setHtml(m_layout == Layout::SideBySide ? sideBySideHtml(m_diff) : inlineHtml(m_diff));
}

QString DiffPanel::headerText() const { return m_header->text(); }

} // namespace kl::gui

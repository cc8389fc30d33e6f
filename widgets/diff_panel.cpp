#include "widgets/diff_panel.h"

#include "core/report/same_problem.h"
#include "widgets/html_text.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QVariant>

#include <algorithm>

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

QString inlineHtml(const report::SourceDiff& diff)
{
    QString out = QStringLiteral("<table cellspacing=0 cellpadding=1 width=\"100%\">");
    for (const report::DiffHunk& hunk : diff.hunks) {
        out += QStringLiteral("<tr>") + cell(QString(), kHunk) + cell(QString(), kHunk)
            + cell(QStringLiteral("@@ -%1,%2 +%3,%4 @@")
                       .arg(hunk.beforeStart)
                       .arg(hunk.beforeCount)
                       .arg(hunk.afterStart)
                       .arg(hunk.afterCount),
                kHunk, QStringLiteral("color:#335;"))
            + QStringLiteral("</tr>");
        for (const report::DiffLine& line : hunk.lines) {
            const QString background = line.kind == report::DiffLine::Kind::Added ? kAdded
                : line.kind == report::DiffLine::Kind::Removed                    ? kRemoved
                                                                                  : QStringLiteral("white");
            const QString marker = line.kind == report::DiffLine::Kind::Added ? QStringLiteral("+")
                : line.kind == report::DiffLine::Kind::Removed                ? QStringLiteral("-")
                                                                              : QStringLiteral(" ");
            out += QStringLiteral("<tr>") + cell(lineNumber(line.beforeLine), background, QStringLiteral("color:#888;"))
                + cell(lineNumber(line.afterLine), background, QStringLiteral("color:#888;"))
                + cell(marker + html(line.text), background) + QStringLiteral("</tr>");
        }
    }
    return out + QStringLiteral("</table>");
}

// One side of the side-by-side diff: its line numbers and text, a row per aligned row, so that the
// two panes' rows line up when they scroll together (the same font, one line a row).
QString sideHtml(const report::SourceDiff& diff, bool before)
{
    using Kind = report::SideBySideRow::Kind;
    QString out = QStringLiteral("<table cellspacing=0 cellpadding=1>");
    for (const report::SideBySideRow& row : report::sideBySide(diff)) {
        if (row.kind == Kind::HunkBreak) {
            out += QStringLiteral("<tr>") + cell(QStringLiteral("⋯"), kHunk) + cell(QString(), kHunk)
                + QStringLiteral("</tr>");
            continue;
        }
        const bool marked = row.kind == Kind::Changed || (before ? row.kind == Kind::Removed : row.kind == Kind::Added);
        const QString background = marked ? (before ? kRemoved : kAdded) : QStringLiteral("white");
        const auto line = before ? row.beforeLine : row.afterLine;
        const QString text = before ? html(row.beforeText) : html(row.afterText);
        out += QStringLiteral("<tr>") + cell(lineNumber(line.value_or(0)), background, QStringLiteral("color:#888;"))
            + cell(text.isEmpty() ? QStringLiteral(" ") : text, background) + QStringLiteral("</tr>");
    }
    return out + QStringLiteral("</table>");
}

} // namespace

DiffPanel::DiffPanel(IterationSelection* selection, QWidget* parent)
    : QWidget(parent)
    , m_selection(selection)
    , m_layoutBox(new QComboBox(this))
    , m_sessionBox(new QComboBox(this))
    , m_compare(new QSpinBox(this))
    , m_header(new QLabel(this))
    , m_body(new QTextBrowser(this))
    , m_sides(new QWidget(this))
    , m_beforeTitle(new QLabel(this))
    , m_afterTitle(new QLabel(this))
    , m_before(new QTextBrowser(this))
    , m_after(new QTextBrowser(this))
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

    // Side by side: each side in its own pane with its own horizontal scroll and a title saying which
    // iteration it is; the rows scroll together. (One table in one view gave the old side the pane and
    // left ~12 characters of the new side, under one shared scroll bar.)
    auto* sides = new QSplitter(Qt::Horizontal, m_sides);
    for (auto [title, pane] : { std::pair { m_beforeTitle, m_before }, std::pair { m_afterTitle, m_after } }) {
        pane->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
        pane->setLineWrapMode(QTextEdit::NoWrap);
        title->setStyleSheet(QStringLiteral("font-weight: bold; padding: 2px;"));
        auto* column = new QWidget(sides);
        auto* columnLayout = new QVBoxLayout(column);
        columnLayout->setContentsMargins(0, 0, 0, 0);
        columnLayout->setSpacing(0);
        columnLayout->addWidget(title);
        columnLayout->addWidget(pane, 1);
        sides->addWidget(column);
    }
    m_before->setObjectName(QStringLiteral("diffBefore"));
    m_after->setObjectName(QStringLiteral("diffAfter"));
    connect(
        m_before->verticalScrollBar(), &QScrollBar::valueChanged, m_after->verticalScrollBar(), &QScrollBar::setValue);
    connect(
        m_after->verticalScrollBar(), &QScrollBar::valueChanged, m_before->verticalScrollBar(), &QScrollBar::setValue);
    auto* sidesLayout = new QVBoxLayout(m_sides);
    sidesLayout->setContentsMargins(0, 0, 0, 0);
    sidesLayout->addWidget(sides);
    m_sides->hide();

    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Compare with"), this));
    bar->addWidget(m_sessionBox);
    bar->addWidget(m_compare);
    bar->addStretch(1);
    bar->addWidget(m_layoutBox);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->addLayout(bar);
    layout->addWidget(m_header);
    layout->addWidget(m_body, 1);
    layout->addWidget(m_sides, 1);

    connect(m_layoutBox, &QComboBox::currentIndexChanged, this,
        [this](int index) { setLayout(index == 1 ? Layout::SideBySide : Layout::Inline); });
    connect(m_compare, &QSpinBox::valueChanged, this, [this](int value) {
        if (m_otherSessionId == 0) {
            m_selection->compareWith(value);
            return;
        }
        loadOther();
        rediff();
    });
    connect(m_sessionBox, &QComboBox::activated, this,
        [this](int index) { compareWithSession(m_sessionBox->itemData(index).toLongLong(), 1); });
    m_sessionBox->setToolTip(tr("Compare with an iteration of this session or of another session of the same problem"));
    follow(selection, this, this, Deferral::Never); // the table waits by itself (showEvent); the header keeps up
}

void DiffPanel::setLayout(Layout layout)
{
    m_layout = layout;
    m_layoutBox->setCurrentIndex(layout == Layout::SideBySide ? 1 : 0);
    m_body->setVisible(layout == Layout::Inline);
    m_sides->setVisible(layout == Layout::SideBySide);
    render();
}

void DiffPanel::setIterationLoader(IterationLoader loader)
{
    m_loader = std::move(loader);
    offerSessions();
}

void DiffPanel::showSession(const std::shared_ptr<const SessionView>& session)
{
    m_session = session;
    m_otherSessionId = 0;
    m_other.reset();
    offerSessions();
    const QSignalBlocker block(m_compare);
    m_compare->setMinimum(0);
    m_compare->setSpecialValueText(tr("its parent"));
    m_compare->setMaximum(session ? static_cast<int>(session->rows.size()) : 0);
    m_compare->setValue(m_selection->comparedWith());
    m_compare->setEnabled(session != nullptr);
}

void DiffPanel::offerSessions()
{
    const QSignalBlocker block(m_sessionBox);
    m_sessionBox->clear();
    //: the session chooser's first entry: compare within the shown session
    m_sessionBox->addItem(tr("this session"), QVariant::fromValue<qlonglong>(0));
    if (m_session && m_loader)
        for (const store::SessionRow& row : m_session->sameProblem)
            //: session chooser entry; %1 how the session is named, %2 its iteration count
            m_sessionBox->addItem(tr("%1, %2 iterations")
                                      .arg(QString::fromStdString(report::sessionTitle(row.session)))
                                      .arg(row.iterations),
                QVariant::fromValue<qlonglong>(row.session.id));
    m_sessionBox->setCurrentIndex(
        std::max(0, m_sessionBox->findData(QVariant::fromValue<qlonglong>(m_otherSessionId))));
    m_sessionBox->setEnabled(m_sessionBox->count() > 1);
}

void DiffPanel::compareWithSession(std::int64_t sessionId, int index)
{
    if (m_session && sessionId == m_session->session.id)
        sessionId = 0;
    const store::SessionRow* row = nullptr;
    if (m_session && sessionId != 0)
        for (const store::SessionRow& r : m_session->sameProblem)
            if (r.session.id == sessionId)
                row = &r;
    if (sessionId != 0 && (!row || !m_loader))
        return; // not a session of this problem in this store
    m_otherSessionId = sessionId;
    {
        const QSignalBlocker blockSessions(m_sessionBox);
        m_sessionBox->setCurrentIndex(std::max(0, m_sessionBox->findData(QVariant::fromValue<qlonglong>(sessionId))));
        const QSignalBlocker blockIterations(m_compare);
        if (row) {
            // Another session's iterations: no "its parent" there.
            m_compare->setSpecialValueText(QString());
            m_compare->setMinimum(1);
            m_compare->setMaximum(std::max(1, row->iterations));
            m_compare->setValue(std::clamp(index, 1, std::max(1, row->iterations)));
        } else {
            m_compare->setMinimum(0);
            m_compare->setSpecialValueText(tr("its parent"));
            m_compare->setMaximum(m_session ? static_cast<int>(m_session->rows.size()) : 0);
            m_compare->setValue(m_selection->comparedWith());
        }
    }
    if (!row) {
        m_other.reset();
        m_selection->compareWith(m_compare->value()); // a no-op when unchanged: redraw below
        showIteration(m_focus);
        return;
    }
    loadOther();
    rediff();
}

void DiffPanel::loadOther()
{
    m_other = m_otherSessionId != 0 && m_loader ? m_loader(m_otherSessionId, m_compare->value()) : nullptr;
}

void DiffPanel::showIteration(const std::shared_ptr<const IterationFocus>& focus)
{
    m_focus = focus;
    rediff();
}

void DiffPanel::rediff()
{
    m_diff = {};
    m_changes = {};
    const auto& focus = m_focus;
    const auto& compared = m_otherSessionId != 0 ? m_other : (focus ? focus->compared : nullptr);
    const store::CandidateRecord* after
        = focus && focus->detail && focus->detail->candidate ? &*focus->detail->candidate : nullptr;
    const store::CandidateRecord* before = compared && compared->candidate ? &*compared->candidate : nullptr;
    if (after && before) {
        m_diff = report::diffSources(before->source, after->source);
        m_changes = report::candidateChanges(before->source, before->tunables, after->source, after->tunables);
    }
    render();
}

void DiffPanel::render()
{
    m_sidesShowDiff = false; // until setSides() says the panes show this diff
    const store::CandidateRecord* after
        = m_focus && m_focus->detail && m_focus->detail->candidate ? &*m_focus->detail->candidate : nullptr;
    if (!m_focus || !after) {
        m_header->setText(m_focus ? tr("<i>No candidate at this iteration.</i>")
                                  : tr("<i>Select an iteration to see what changed.</i>"));
        setBody({});
        return;
    }
    if (m_otherSessionId != 0 && m_session) {
        const store::SessionRow* row = nullptr;
        for (const store::SessionRow& r : m_session->sameProblem)
            if (r.session.id == m_otherSessionId)
                row = &r;
        const QString mine = html(report::sessionTitle(m_session->session));
        const QString theirs = row ? html(report::sessionTitle(row->session)) : QString::number(m_otherSessionId);
        if (!m_other || !m_other->candidate) {
            m_header->setText(
                tr("<i>Iteration %1 of %2 has no candidate to compare with.</i>").arg(m_compare->value()).arg(theirs));
            setBody({});
            return;
        }
        //: diff header across sessions; %1 this iteration, %2 its session, %3 the other iteration, %4 its
        //: session, %5 added lines, %6 removed lines
        QString header = tr("<b>Iteration %1</b> of %2 against iteration %3 of %4: +%5 −%6 lines")
                             .arg(m_focus->index())
                             .arg(mine)
                             .arg(m_other->row.index)
                             .arg(theirs)
                             .arg(m_diff.added)
                             .arg(m_diff.removed);
        const std::string changes = report::changesHeaderText(m_changes);
        if (!changes.empty())
            header += QStringLiteral("<br><tt>") + html(changes).replace(QLatin1Char('\n'), QStringLiteral("<br>"))
                + QStringLiteral("</tt>");
        m_header->setText(header);
        setSides(tr("Iteration %1 of %2").arg(m_other->row.index).arg(theirs),
            tr("Iteration %1 of %2").arg(m_focus->index()).arg(mine));
        setBody(m_diff.same() ? tr("<p><i>The source is the same; only what the header lists differs.</i></p>")
                              : inlineHtml(m_diff));
        return;
    }
    if (!m_focus->compared) {
        m_header->setText(tr("<i>Iteration %1 is the baseline: it has no parent. Choose an iteration to compare "
                             "with above.</i>")
                              .arg(m_focus->index()));
        setBody({});
        return;
    }
    const int other = m_focus->compared->row.index;
    QString header = m_focus->comparedIsParent
        //: diff header; %1 this iteration, %2 its parent's iteration, %3 added lines, %4 removed lines
        ? tr("<b>Iteration %1</b> against its parent, iteration %2: +%3 −%4 lines")
        : tr("<b>Iteration %1</b> against iteration %2: +%3 −%4 lines");
    header = header.arg(m_focus->index()).arg(other).arg(m_diff.added).arg(m_diff.removed);
    const std::string changes = report::changesHeaderText(m_changes);
    if (!changes.empty())
        header += QStringLiteral("<br><tt>") + html(changes).replace(QLatin1Char('\n'), QStringLiteral("<br>"))
            + QStringLiteral("</tt>");
    m_header->setText(header);
    if (m_diff.same()) {
        setBody(tr("<p><i>The source is the same; only what the header lists differs.</i></p>"));
        return;
    }
    setSides(m_focus->comparedIsParent ? tr("Iteration %1 (its parent)").arg(other) : tr("Iteration %1").arg(other),
        tr("Iteration %1").arg(m_focus->index()));
    setBody(inlineHtml(m_diff));
}

void DiffPanel::setSides(const QString& beforeTitle, const QString& afterTitle)
{
    //: side-by-side diff: the title over the old side; %1 which iteration it is
    m_beforeTitle->setText(tr("− %1").arg(beforeTitle));
    //: side-by-side diff: the title over the new side; %1 which iteration it is
    m_afterTitle->setText(tr("+ %1").arg(afterTitle));
    m_sidesShowDiff = !m_diff.same();
}

// Laying out a rewrite's diff table takes QTextDocument ~40 ms: while the panel is hidden (another
// inspector tab, or a live session's refresh) the HTML waits until it is shown or read.
void DiffPanel::setBody(QString html)
{
    if (!m_sidesShowDiff) {
        m_beforeTitle->clear();
        m_afterTitle->clear();
    }
    m_pendingBody = std::move(html);
    m_bodyPending = true;
    if (isVisible())
        flushBody();
}

void DiffPanel::flushBody() const
{
    if (!m_bodyPending)
        return;
    m_bodyPending = false;
    // Only the layout shown is laid out (a rewrite's table costs ~40 ms); a change of layout renders again.
    if (m_layout == Layout::Inline) {
        if (m_pendingBody.isEmpty())
            m_body->clear();
        else
            m_body->setHtml(m_pendingBody);
    } else if (m_sidesShowDiff) {
        m_before->setHtml(sideHtml(m_diff, true));
        m_after->setHtml(sideHtml(m_diff, false));
    } else {
        m_before->setHtml(m_pendingBody);
        m_after->clear();
    }
    m_pendingBody.clear();
}

QTextBrowser* DiffPanel::body() const
{
    flushBody();
    return m_body;
}

void DiffPanel::showEvent(QShowEvent* event)
{
    flushBody();
    QWidget::showEvent(event);
}

QString DiffPanel::headerText() const { return m_header->text(); }

QString DiffPanel::beforeTitle() const { return m_beforeTitle->text(); }

QString DiffPanel::afterTitle() const { return m_afterTitle->text(); }

} // namespace kl::gui

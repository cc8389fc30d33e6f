#include "widgets/review_panel.h"

#include "core/report/candidate_changes.h"
#include "core/report/source_diff.h"
#include "core/report/static_severity.h"
#include "widgets/static_report_model.h"
#include "widgets/static_report_view.h"
#include "widgets/string_conversion.h"

#include <QAction>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <filesystem>

namespace kl::gui {

namespace {

enum Answer { AcceptAnswer, RejectAnswer, SteerAnswer };

QString diffHtml(const std::string& header, const std::string& unified)
{
    QString html = QStringLiteral("<pre style=\"margin:0\">");
    auto line = [&html](const QString& text, const char* colour) {
        const QString escaped = text.toHtmlEscaped();
        html += colour ? QStringLiteral("<span style=\"background:%1\">%2</span>\n")
                             .arg(QLatin1String(colour), escaped.isEmpty() ? QStringLiteral(" ") : escaped)
                       : escaped + QLatin1Char('\n');
    };
    for (const QString& l : toQString(header).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        line(l, "#eef");
    for (const QString& l : toQString(unified).split(QLatin1Char('\n'))) {
        if (l.startsWith(QLatin1String("+++")) || l.startsWith(QLatin1String("---")))
            line(l, nullptr);
        else if (l.startsWith(QLatin1Char('+')))
            line(l, "#dfd");
        else if (l.startsWith(QLatin1Char('-')))
            line(l, "#fdd");
        else if (l.startsWith(QLatin1String("@@")))
            line(l, "#eee");
        else
            line(l, nullptr);
    }
    return html + QStringLiteral("</pre>");
}

} // namespace

ReviewPanel::ReviewPanel(QWidget* parent)
    : QWidget(parent)
    , m_title(new QLabel(this))
    , m_plan(new QPlainTextEdit(this))
    , m_diff(new QTextBrowser(this))
    , m_severity(new QLabel(this))
    , m_compileError(new QPlainTextEdit(this))
    , m_reportModel(new StaticReportModel(this))
    , m_reportView(new StaticReportView(this))
    , m_reason(new QLineEdit(this))
    , m_hint(new QLabel(this))
    // No mnemonics: Alt+A, Alt+R and Alt+E open the Analysis, Review and Edit menus.
    //: review button (Ctrl+Return): run the proposal
    , m_accept(new QPushButton(tr("Accept"), this))
    //: review button (Ctrl+Shift+R): refuse the proposal; the reason goes to the proposer
    , m_reject(new QPushButton(tr("Reject"), this))
    //: review button (Ctrl+Shift+T): do not run it; the text steers the next proposal
    , m_steer(new QPushButton(tr("Steer"), this))
    //: review button (Ctrl+Shift+E): open the proposal in the editor to change it
    , m_edit(new QPushButton(tr("Edit"), this))
    //: review button: evaluate the editor's version of the proposal instead
    , m_runEdited(new QPushButton(tr("Run Edited"), this))
    //: menu action: run the proposal waiting for review
    , m_acceptAction(new QAction(tr("&Accept Proposal"), this))
    //: menu action: refuse the proposal with the reason typed in the review panel
    , m_rejectAction(new QAction(tr("&Reject Proposal with the Reason"), this))
    //: menu action: do not run the proposal; the review panel's text steers the next one
    , m_steerAction(new QAction(tr("S&teer the Next Proposal"), this))
    //: menu action: open the proposal in the editor to change it
    , m_editAction(new QAction(tr("&Edit Proposal in the Editor"), this))
{
    m_title->setStyleSheet(QStringLiteral("font-weight: bold;"));
    // A long plan scrolls in its own pane: as a wrapped label it made the dock (and with it the window)
    // as tall as the plan, past the screen's edge.
    m_plan->setReadOnly(true);
    m_plan->setFrameShape(QFrame::NoFrame);
    m_plan->setMinimumHeight(m_plan->fontMetrics().lineSpacing() * 2 + 8);
    m_diff->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_diff->setLineWrapMode(QTextEdit::NoWrap);
    m_diff->setMinimumHeight(m_diff->fontMetrics().lineSpacing() * 3 + 8);
    m_severity->setWordWrap(true);
    m_compileError->setReadOnly(true);
    m_compileError->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_compileError->setMaximumHeight(120);
    m_compileError->hide();
    m_reportView->setReportModel(m_reportModel);
    //: review: the text of Reject (a reason) or Steer (the next proposal's direction)
    m_reason->setPlaceholderText(tr("Reason to reject, or text to steer the next proposal"));
    m_hint->setStyleSheet(QStringLiteral("color: palette(mid);"));
    m_acceptAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
    m_rejectAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    m_steerAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T));
    m_editAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    for (auto [button, action] : { std::pair { m_accept, m_acceptAction }, { m_reject, m_rejectAction },
             { m_steer, m_steerAction }, { m_edit, m_editAction } }) {
        button->setToolTip(action->shortcut().toString(QKeySequence::NativeText));
        connect(action, &QAction::triggered, button, &QPushButton::click);
    }
    // Until the window puts them in its menu, the panel's own keys (a panel shown on its own).
    addActions(reviewActions());
    m_runEdited->hide();

    auto* statics = new QWidget;
    auto* staticsLayout = new QVBoxLayout(statics);
    staticsLayout->setContentsMargins(0, 0, 0, 0);
    staticsLayout->addWidget(m_severity);
    staticsLayout->addWidget(m_compileError);
    staticsLayout->addWidget(m_reportView, 1);
    // The static side scrolls as a whole: its wrapped lines never set the dock's height.
    auto* staticsScroll = new QScrollArea(this);
    staticsScroll->setWidget(statics);
    staticsScroll->setWidgetResizable(true);
    staticsScroll->setFrameShape(QFrame::NoFrame);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_diff);
    split->addWidget(staticsScroll);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    // The plan above the diff, each scrolling in its own pane; the splitter moves the line between them.
    auto* planAndDiff = new QSplitter(Qt::Vertical, this);
    planAndDiff->addWidget(m_plan);
    planAndDiff->addWidget(split);
    planAndDiff->setStretchFactor(0, 1);
    planAndDiff->setStretchFactor(1, 3);
    planAndDiff->setChildrenCollapsible(false);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_reason, 1);
    for (QPushButton* b : { m_accept, m_reject, m_steer, m_edit, m_runEdited })
        buttons->addWidget(b);
    // The keys beside the title: a line of its own made the dock taller than a laptop has room for.
    auto* titleRow = new QHBoxLayout;
    titleRow->addWidget(m_title, 2);
    titleRow->addWidget(m_hint, 3);
    m_hint->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_hint->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(titleRow);
    layout->addWidget(planAndDiff, 1);
    layout->addLayout(buttons);

    connect(m_accept, &QPushButton::clicked, this, [this] { answer(AcceptAnswer); });
    connect(m_reject, &QPushButton::clicked, this, [this] { answer(RejectAnswer); });
    connect(m_steer, &QPushButton::clicked, this, [this] { answer(SteerAnswer); });
    connect(m_edit, &QPushButton::clicked, this, [this] {
        if (!m_request)
            return;
        const auto& p = m_request->proposal;
        emit editRequested(toQString(p.candidate.source), p.tunables, toQString(p.candidate.fileName));
    });
    connect(m_runEdited, &QPushButton::clicked, this, [this] {
        if (m_hasRequest)
            emit runEditedRequested();
    });
    clearRequest();
}

void ReviewPanel::showRequest(const ReviewRequested& request)
{
    m_request = std::make_shared<const ReviewRequested>(request);
    m_hasRequest = true;
    const auto& p = request.proposal;
    //: review title: %1 the round, %2 who proposed it (llm, tuner)
    m_title->setText(
        tr("Round %1: a proposal from %2 waits for your review").arg(request.round).arg(toQString(p.proposer)));
    QString plan = p.hypothesis.empty() ? tr("No plan given.") : tr("Plan: %1").arg(toQString(p.hypothesis));
    if (p.predictedSpeedup)
        //: review: the proposer's own expectation, e.g. 1.20x over the incumbent
        plan += QLatin1Char('\n') + tr("Predicted effect: %1x over the incumbent").arg(*p.predictedSpeedup, 0, 'f', 2);
    else
        plan += QLatin1Char('\n') + tr("Predicted effect: not stated");
    m_plan->setPlainText(plan);
    const auto changes
        = report::candidateChanges(request.best.source, request.bestTunables, p.candidate.source, p.tunables);
    // Named by file, not by where the baseline was read from ("incumbent//tmp/.../baseline.cu").
    const auto unified = report::unifiedDiff(request.best.source, p.candidate.source,
        "incumbent/" + std::filesystem::path(request.best.fileName).filename().string(),
        "proposal/" + std::filesystem::path(p.candidate.fileName).filename().string());
    m_diff->setHtml(
        diffHtml(report::changesHeaderText(changes), unified.empty() ? "(the source is unchanged)\n" : unified));
    m_reportModel->clear();
    m_compileError->hide();
    //: review: while the proposal compiles offline for its static report
    m_severity->setText(tr("Compiling for the static report…"));
    m_reason->clear();
    m_hint->setText(tr("Ctrl+Return accepts · Ctrl+Shift+R rejects with the reason · Ctrl+Shift+T steers · "
                       "Ctrl+Shift+E edits"));
    setEditing(false);
    setButtonsEnabled(true);
}

void ReviewPanel::setStaticReport(std::shared_ptr<const StaticReport> report)
{
    m_compileError->hide();
    QStringList lines;
    if (report)
        for (const auto& launch : report->launches)
            for (const auto& line : report::staticSeverityLines(launch))
                lines << toQString(line);
    m_severity->setText(lines.isEmpty() ? tr("Static report: nothing to flag.") : lines.join(QLatin1Char('\n')));
    showReportTable(std::move(report));
}

// The table holds a report or is hidden: its row labels alone read as a report of nothing.
void ReviewPanel::showReportTable(std::shared_ptr<const StaticReport> report)
{
    m_reportView->setVisible(report != nullptr);
    m_reportModel->setReport(std::move(report));
}

void ReviewPanel::setCompileError(const QString& error)
{
    showReportTable(nullptr);
    //: review: the proposal does not compile; the loop would record it as a compile failure
    m_severity->setText(tr("The proposal does not compile:"));
    m_compileError->setPlainText(error);
    m_compileError->show();
}

void ReviewPanel::clearRequest(const QString& why)
{
    m_request.reset();
    m_hasRequest = false;
    m_title->setText(why.isEmpty() ? tr("No proposal is waiting for review") : why);
    m_plan->clear();
    m_diff->clear();
    m_severity->clear();
    m_compileError->hide();
    showReportTable(nullptr);
    m_reason->clear();
    m_hint->clear();
    setEditing(false);
    setButtonsEnabled(false);
}

void ReviewPanel::setEditing(bool editing) { m_runEdited->setVisible(editing); }

void ReviewPanel::setButtonsEnabled(bool enabled)
{
    for (QPushButton* b : { m_accept, m_reject, m_steer, m_edit, m_runEdited })
        b->setEnabled(enabled);
    for (QAction* a : reviewActions())
        a->setEnabled(enabled);
    m_reason->setEnabled(enabled);
}

void ReviewPanel::answer(int kind)
{
    if (!m_hasRequest)
        return;
    const QString text = m_reason->text().trimmed();
    if (kind != AcceptAnswer && text.isEmpty()) { // as at the CLI's prompt: reject and steer need text
        m_hint->setText(kind == RejectAnswer ? tr("Type the reason the proposer should read, then Reject.")
                                             : tr("Type the direction for the next proposal, then Steer."));
        m_reason->setFocus();
        return;
    }
    if (kind == AcceptAnswer)
        emit accepted();
    else if (kind == RejectAnswer)
        emit rejected(text);
    else
        emit steered(text);
}

QString ReviewPanel::diffText() const { return m_diff->toPlainText(); }

QString ReviewPanel::planText() const { return m_plan->toPlainText(); }

QList<QAction*> ReviewPanel::reviewActions() const
{
    return { m_acceptAction, m_rejectAction, m_steerAction, m_editAction };
}

QString ReviewPanel::staticText() const
{
    return m_severity->text()
        + (!m_compileError->isHidden() ? QLatin1Char('\n') + m_compileError->toPlainText() : QString());
}

} // namespace kl::gui

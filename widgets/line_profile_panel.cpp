#include "widgets/line_profile_panel.h"

#include "core/model/error.h"
#include "core/model/problem.h"
#include "core/store/code_listings.h"
#include "widgets/code_listing_view.h"
#include "widgets/kernel_editor.h"
#include "widgets/string_conversion.h"

#include <QEvent>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QSplitter>
#include <QToolTip>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <Qsci/qscistyle.h>

#include <algorithm>
#include <cmath>

namespace kl::gui {

namespace {

constexpr int kHeatLevels = 6;
constexpr int kHeatStyleBase = 120; // styles past the lexer's and the annotations'

std::string lastComponent(const std::string& path)
{
    const auto slash = path.find_last_of("/\\");
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

QString percentText(double share)
{
    if (share > 0.0 && share < 0.005)
        return QStringLiteral("<1%"); // sampled, but less than a rounded percent
    return QString::number(std::lround(100.0 * share)) + QLatin1Char('%');
}

// Heat from white to a strong red, by share of the kernel's samples.
QColor heatColour(int level)
{
    const double t = static_cast<double>(level) / (kHeatLevels - 1);
    return QColor::fromRgbF(1.0, 1.0 - 0.75 * t, 1.0 - 0.8 * t);
}

int heatLevel(double share)
{
    // A square root so that a line with a few percent is still visible beside a 90% line.
    return std::clamp(static_cast<int>(std::ceil(std::sqrt(share) * (kHeatLevels - 1))), 1, kHeatLevels - 1);
}

} // namespace

LineProfilePanel::LineProfilePanel(IterationSelection* selection, QWidget* parent)
    : QWidget(parent)
    , m_editor(new KernelEditor(this))
    , m_summary(new QLabel(this))
    , m_hotLines(new QTreeWidget(this))
    , m_listingTitle(new QLabel(this))
    , m_listing(new CodeListingView(this))
{
    m_editor->setReadOnly(true);
    // The line whose instructions the code pane highlights, in the same blue.
    m_editor->setCaretLineVisible(true);
    m_editor->setCaretLineBackgroundColor(QColor(0xc8, 0xdc, 0xff));
    m_editor->SendScintilla(QsciScintillaBase::SCI_SETCARETLINEVISIBLEALWAYS, 1); // also while the code pane has focus
    m_editor->setMarginType(m_heatMargin, QsciScintilla::TextMarginRightJustified);
    m_editor->setMarginWidth(m_heatMargin, QStringLiteral("100%0"));
    m_editor->viewport()->installEventFilter(this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_hotLines->setColumnCount(4);
    m_hotLines->setHeaderLabels({ tr("Line"), tr("Samples"), tr("Dominant warp state"), tr("Source") });
    m_hotLines->setRootIsDecorated(false);
    m_hotLines->setAlternatingRowColors(true);
    m_hotLines->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_hotLines->header()->setStretchLastSection(true);
    m_hotLines->setToolTip(tr("The source lines with the most PC samples; click one to show it in the source"));

    m_listingTitle->setWordWrap(true);
    m_listing->setToolTip(tr("The kernel's machine code; the instructions of the source line under the editor's "
                             "cursor are highlighted. Click an instruction to show its source line."));

    auto* listingBox = new QWidget(this);
    auto* listingLayout = new QVBoxLayout(listingBox);
    listingLayout->setContentsMargins(0, 0, 0, 0);
    listingLayout->addWidget(m_listingTitle);
    listingLayout->addWidget(m_listing);
    auto* sourceAndCode = new QSplitter(Qt::Horizontal, this);
    sourceAndCode->addWidget(m_editor);
    sourceAndCode->addWidget(listingBox);
    sourceAndCode->setStretchFactor(0, 1);
    sourceAndCode->setStretchFactor(1, 1);
    auto* vertical = new QSplitter(Qt::Vertical, this);
    vertical->addWidget(sourceAndCode);
    vertical->addWidget(m_hotLines);
    vertical->setStretchFactor(0, 3);
    vertical->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(vertical, 1);

    connect(m_hotLines, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) { jumpTo(item); });
    connect(m_hotLines, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) { jumpTo(item); });
    connect(m_editor, &QsciScintilla::cursorPositionChanged, this, [this](int line, int) { showListingFor(line + 1); });
    connect(m_listing, &CodeListingView::sourceLineChosen, this, &LineProfilePanel::showSourceLine);
    connect(&m_compiled, &QFutureWatcherBase::finished, this, &LineProfilePanel::listingCompiled);
    follow(selection, this, this);
}

void LineProfilePanel::showSession(const std::shared_ptr<const SessionView>& session) { m_session = session; }

void LineProfilePanel::showIteration(const std::shared_ptr<const IterationFocus>& focus)
{
    m_focus = focus;
    m_sampling.reset();
    m_heat = {};
    m_sass.reset();
    m_ptx.reset();
    m_listingNote.clear();
    m_listingCompiledHere = false;
    m_hotLines->clear();
    const auto* detail = focus ? focus->detail.get() : nullptr;
    m_editor->setSource(detail && detail->candidate ? toQString(detail->candidate->source) : QString());
    QString summary;
    if (!detail) {
        summary = tr("Select an iteration to see where its kernel spends its time.");
    } else if (detail->result) {
        m_sampling = detail->result->pcSampling;
        for (const Error& unreadable : detail->result->unreadable)
            if (unreadable.where().starts_with("pc_sampling_json"))
                summary = tr("The stored PC samples cannot be read: %1").arg(toQString(unreadable.message()));
        const auto listings = store::codeListingsOf(detail->result->compile);
        if (!listings.sass.empty())
            m_sass = lines::parseSass(listings.sass);
        if (!listings.ptx.empty())
            m_ptx = lines::parsePtx(listings.ptx);
        m_listingNote = toQString(store::codeListingsText(listings));
        if (listings.ptx.empty() && listings.sass.empty() && !listings.damaged && detail->candidate && m_compiler)
            compileListingHere(focus->detail);
    }
    if (detail && summary.isEmpty()) {
        if (!m_sampling) {
            summary = tr("No PC sampling for this iteration; run with --metrics lines (or deep).");
        } else {
            const std::string source = detail->candidate ? detail->candidate->source : std::string();
            // The report's first line (the totals, or why there are no samples), and for a sampled
            // iteration what the phase cost.
            const std::string report = lines::hotLinesReport(*m_sampling, source, 0);
            summary = toQString(report.substr(0, report.find('\n')));
            if (m_sampling->status == lines::SamplingStatus::Ok) {
                summary += QLatin1Char('\n') + toQString(lines::samplingCostText(*m_sampling));
                m_heat = lines::lineHeat(*m_sampling);
                for (const auto& hot : m_heat.lines) {
                    auto* item = new QTreeWidgetItem(m_hotLines);
                    item->setText(0, QString::number(hot.line));
                    item->setData(0, Qt::UserRole, hot.line);
                    item->setText(1, percentText(hot.share));
                    item->setText(2,
                        hot.stalls.empty()
                            ? QString()
                            : toQString(hot.dominantStall()) + QLatin1Char(' ') + percentText(hot.dominantShare()));
                    item->setText(3, toQString(lines::sourceLine(source, hot.line)));
                    item->setToolTip(2, heatToolTip(hot.line));
                    item->setBackground(0, heatColour(heatLevel(hot.share)));
                }
            }
        }
    }
    m_summary->setText(summary);
    paintHeat();
    fillListing();
    // Without samples the hot-lines list has nothing to say: the source and its code take the room.
    m_hotLines->setVisible(!m_heat.lines.empty());
    showFirstLine();
}

QString LineProfilePanel::summaryText() const { return m_summary->text(); }

QString LineProfilePanel::listingTitle() const { return m_listingTitle->text(); }

void LineProfilePanel::paintHeat()
{
    m_editor->clearMarginText();
    for (const auto& hot : m_heat.lines) {
        if (hot.line < 1 || hot.line > m_editor->lines())
            continue;
        const int level = heatLevel(hot.share);
        QsciStyle style(kHeatStyleBase + level, QStringLiteral("heat"), QColor(0x40, 0x10, 0x10), heatColour(level),
            m_editor->font());
        m_editor->setMarginText(hot.line - 1, percentText(hot.share), style);
    }
}

QString LineProfilePanel::heatText(int line) const
{
    const auto* hot = m_heat.line(line);
    return hot ? percentText(hot->share) : QString();
}

QString LineProfilePanel::heatToolTip(int line) const
{
    const auto* hot = m_heat.line(line);
    if (!hot)
        return {};
    QString text
        = tr("line %1: %2 of the kernel's samples (%3)").arg(line).arg(percentText(hot->share)).arg(hot->samples);
    for (const auto& stall : hot->stalls)
        text += QLatin1Char('\n') + toQString(stall.stall) + QStringLiteral(": ")
            + percentText(static_cast<double>(stall.samples) / std::max<std::int64_t>(hot->samples, 1));
    if (!hot->stalls.empty())
        text += QLatin1Char('\n')
            + tr("%1: the warp %2")
                  .arg(toQString(hot->dominantStall()), toQString(lines::stallMeaning(hot->dominantStall())));
    return text;
}

void LineProfilePanel::fillListing()
{
    QVector<CodeRow> rows;
    // Code inlined from a header (__half2float from cuda_fp16.hpp) carries the header's line numbers:
    // only lines of the candidate's own file link to the editor, where the listing names that file.
    const std::string candidateFile = m_focus && m_focus->detail && m_focus->detail->candidate
        ? lastComponent(m_focus->detail->candidate->fileName)
        : std::string();
    bool namesCandidate = false;
    if (m_sass)
        for (const auto& function : m_sass->functions)
            for (const auto& instruction : function.instructions)
                namesCandidate = namesCandidate || lastComponent(instruction.file) == candidateFile;
    if (m_ptx && !(m_sass && !m_sass->functions.empty()))
        for (const auto& ptxLine : m_ptx->lines)
            namesCandidate = namesCandidate || lastComponent(ptxLine.sourceFile) == candidateFile;
    const auto linked = [&](const std::string& file, int line) {
        return !namesCandidate || file.empty() || lastComponent(file) == candidateFile ? line : 0;
    };
    if (m_sass && !m_sass->functions.empty()) {
        static const lines::PcSampling unsampled;
        std::vector<std::vector<lines::SampledInstruction>> functions;
        std::int64_t most = 0;
        int stallWidth = 0;
        for (const auto& function : m_sass->functions) {
            functions.push_back(lines::sampledInstructions(function, m_sampling ? *m_sampling : unsampled));
            for (const auto& sampled : functions.back()) {
                most = std::max(most, sampled.samples);
                stallWidth = std::max(stallWidth, static_cast<int>(sampled.dominantStall.size()));
            }
        }
        const int samplesWidth = static_cast<int>(QString::number(most).size());
        for (std::size_t f = 0; f < functions.size(); ++f) {
            rows.append({ toQString(m_sass->functions[f].name) + QLatin1Char(':'), 0, 0, {} });
            for (const auto& sampled : functions[f]) {
                // Offset, source line, samples and dominant state first, as narrow as the kernel's
                // figures allow, so that they line up and leave the instruction room.
                const int line = linked(sampled.instruction.file, sampled.instruction.line);
                const double share = m_heat.samples > 0 ? static_cast<double>(sampled.samples) / m_heat.samples : 0.0;
                rows.append({ QStringLiteral("%1 %2 %3 %4 %5")
                                  .arg(sampled.instruction.offset, 4, 16, QLatin1Char('0'))
                                  .arg(line > 0 ? QString::number(line) : QString(), 4)
                                  .arg(sampled.samples > 0 ? QString::number(sampled.samples) : QString(), samplesWidth)
                                  .arg(toQString(sampled.dominantStall), -stallWidth)
                                  .arg(toQString(sampled.instruction.text)),
                    line, sampled.samples, sampled.samples > 0 ? heatColour(heatLevel(share)) : QColor() });
            }
        }
    } else if (m_ptx) {
        // The functions' bodies: from the first entry or function on, without the .loc/.file
        // directives the source-line column replaces.
        bool inFunction = false;
        for (const auto& ptxLine : m_ptx->lines) {
            const QString text = toQString(ptxLine.text).replace(QLatin1Char('\t'), QLatin1Char(' ')).trimmed();
            inFunction
                = inFunction || text.contains(QStringLiteral(".entry")) || text.contains(QStringLiteral(".func"));
            if (!inFunction || text.isEmpty() || text.startsWith(QStringLiteral(".loc"))
                || text.startsWith(QStringLiteral(".file")) || text.startsWith(QStringLiteral("//")))
                continue;
            const int line = linked(ptxLine.sourceFile, ptxLine.sourceLine);
            const bool indented = ptxLine.sourceLine > 0 || text.startsWith(QLatin1Char('.'));
            rows.append({ QStringLiteral("%1 %2  %3%4")
                              .arg(ptxLine.number, 5)
                              .arg(line > 0 ? QString::number(line) : QString(), 4)
                              .arg(indented ? QStringLiteral("  ") : QString(), text),
                line, 0, {} });
        }
    }
    m_listingTitle->setToolTip(m_listingNote); // which listings the iteration has, and why no SASS
    if (!rows.isEmpty()) {
        m_listing->setRows(std::move(rows));
        return;
    }
    const auto* detail = m_focus ? m_focus->detail.get() : nullptr;
    m_listingTitle->setText(tr("Machine code"));
    if (detail && m_compiling && m_compiling.get() == detail)
        m_listing->setMessage(tr("No SASS or PTX stored for this iteration (%1): compiling its source here with "
                                 "NVRTC…")
                                  .arg(m_listingNote));
    else
        m_listing->setMessage(detail ? tr("No SASS or PTX: %1.").arg(m_listingNote) : QString());
}

void LineProfilePanel::compileListingHere(const std::shared_ptr<const store::IterationDetail>& detail)
{
    // The newest iteration wins: a compile still running for another one finishes unwatched.
    m_compiling = detail;
    // The problem's architecture, as the loop compiled for it.
    const std::string arch = problemArchOf(m_session ? m_session->problemJson : std::string());
    m_compiled.setFuture(QtConcurrent::run(
        [compiler = m_compiler, candidate = *detail->candidate, arch] { return compiler(candidate, arch); }));
}

void LineProfilePanel::listingCompiled()
{
    const auto detail = std::exchange(m_compiling, nullptr);
    if (!detail || !m_focus || m_focus->detail != detail || m_compiled.future().resultCount() == 0)
        return;
    const report::ListingsCompiledHere compiled = m_compiled.result();
    if (!compiled.listings.sass.empty())
        m_sass = lines::parseSass(compiled.listings.sass);
    if (!compiled.listings.ptx.empty())
        m_ptx = lines::parsePtx(compiled.listings.ptx);
    m_listingNote = toQString(compiled.note);
    m_listingCompiledHere = m_sass || m_ptx;
    if (m_sass || m_ptx)
        m_listingNote += tr("; %1")
                             .arg(toQString(store::codeListingsText(compiled.listings)))
                             .remove(QStringLiteral(" stored (0.0 KB in the store)"));
    fillListing();
    showFirstLine();
}

void LineProfilePanel::showFirstLine()
{
    // The hottest line, else the first with code (a kernel's first lines are comments and directives).
    int line = m_heat.lines.empty() ? 0 : m_heat.lines.front().line;
    for (int row = 0; line == 0 && row < m_listing->rows().size(); ++row)
        line = m_listing->rows()[row].sourceLine;
    if (line > 0)
        m_editor->goToLine(line);
    showListingFor(std::max(line, 1));
}

void LineProfilePanel::showListingFor(int line)
{
    if (m_listing->rows().isEmpty())
        return;
    const int instructions = m_listing->highlightSourceLine(line);
    const bool sass = m_sass && !m_sass->functions.empty();
    const QString count = instructions == 1 ? tr("1 instruction") : tr("%1 instructions").arg(instructions);
    QString title = (sass ? tr("SASS of line %1: %2") : tr("PTX of line %1: %2")).arg(line).arg(count);
    if (const auto* hot = m_heat.line(line); sass && hot)
        title += hot->samples == 1 ? tr(", 1 sample") : tr(", %1 samples").arg(hot->samples);
    //: the pane lists the whole kernel; the source line's instructions are the highlighted rows
    if (m_listingCompiledHere)
        title += sass ? tr(" (highlighted; compiled here: no listing stored)")
                      : tr(" (highlighted; compiled here: no listing stored, no nvdisasm for SASS)");
    else
        title += sass ? tr(" (highlighted; whole kernel from the stored nvdisasm listing)")
                      : tr(" (highlighted; whole kernel from the stored compile output, no SASS stored)");
    m_listingTitle->setText(title);
}

void LineProfilePanel::showSourceLine(int line)
{
    // The editor follows without taking the focus: the arrow keys keep walking the instructions.
    if (line < 1 || line > m_editor->lines())
        return;
    m_editor->setCursorPosition(line - 1, 0);
    m_editor->ensureLineVisible(line - 1);
    showListingFor(line);
}

void LineProfilePanel::jumpTo(QTreeWidgetItem* item)
{
    if (!item)
        return;
    const int line = item->data(0, Qt::UserRole).toInt();
    m_editor->goToLine(line);
    showListingFor(line);
}

bool LineProfilePanel::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_editor->viewport() && event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        int marginsWidth = 0;
        for (int m = 0; m <= m_heatMargin; ++m)
            marginsWidth += m_editor->marginWidth(m);
        if (help->pos().x() < marginsWidth) {
            const int height = static_cast<int>(m_editor->SendScintilla(QsciScintillaBase::SCI_TEXTHEIGHT, 0));
            const int line = m_editor->firstVisibleLine() + help->pos().y() / std::max(height, 1) + 1;
            const QString tip = heatToolTip(line);
            if (!tip.isEmpty())
                QToolTip::showText(help->globalPos(), tip, m_editor->viewport());
            else
                QToolTip::hideText();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace kl::gui

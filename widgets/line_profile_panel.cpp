#include "widgets/line_profile_panel.h"

#include "core/model/error.h"
#include "core/store/code_listings.h"
#include "widgets/kernel_editor.h"
#include "widgets/string_conversion.h"

#include <QEvent>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QToolTip>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <Qsci/qscistyle.h>

#include <algorithm>
#include <cmath>

namespace kl::gui {

namespace {

constexpr int kHeatLevels = 6;
constexpr int kHeatStyleBase = 120; // styles past the lexer's and the annotations'

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
    , m_listing(new QPlainTextEdit(this))
{
    m_editor->setReadOnly(true);
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

    m_listing->setReadOnly(true);
    m_listing->setLineWrapMode(QPlainTextEdit::NoWrap);
    QFont mono(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::TypeWriter);
    m_listing->setFont(mono);

    auto* listingBox = new QWidget(this);
    auto* listingLayout = new QVBoxLayout(listingBox);
    listingLayout->setContentsMargins(0, 0, 0, 0);
    listingLayout->addWidget(m_listingTitle);
    listingLayout->addWidget(m_listing);
    auto* sourceAndCode = new QSplitter(Qt::Horizontal, this);
    sourceAndCode->addWidget(m_editor);
    sourceAndCode->addWidget(listingBox);
    sourceAndCode->setStretchFactor(0, 3);
    sourceAndCode->setStretchFactor(1, 2);
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
    follow(selection, this, this);
}

void LineProfilePanel::showSession(const std::shared_ptr<const SessionView>&) { }

void LineProfilePanel::showIteration(const std::shared_ptr<const IterationFocus>& focus)
{
    m_focus = focus;
    m_sampling.reset();
    m_heat = {};
    m_sass.reset();
    m_ptx.reset();
    m_listingNote.clear();
    m_hotLines->clear();
    const auto* detail = focus ? focus->detail.get() : nullptr;
    m_editor->setSource(detail && detail->candidate ? toQString(detail->candidate->source) : QString());
    QString summary;
    if (!detail) {
        summary = tr("Select an iteration to see where its kernel spends its time.");
    } else if (detail->result) {
        try {
            m_sampling = lines::pcSamplingFromJson(detail->result->pcSampling);
        } catch (const Error& error) {
            summary = tr("The stored PC samples cannot be read: %1").arg(toQString(error.message()));
        }
        const auto listings = store::codeListingsOf(detail->result->compile);
        if (!listings.sass.empty())
            m_sass = lines::parseSass(listings.sass);
        if (!listings.ptx.empty())
            m_ptx = lines::parsePtx(listings.ptx);
        m_listingNote = toQString(store::codeListingsText(listings));
    }
    if (detail && summary.isEmpty()) {
        if (!m_sampling) {
            summary = tr("No PC sampling for this iteration; run with --metrics lines (or deep).");
        } else {
            const std::string source = detail->candidate ? detail->candidate->source : std::string();
            const std::string report = lines::hotLinesReport(*m_sampling, source, 0);
            summary = toQString(report.substr(0, report.find('\n')));
            if (m_sampling->status == lines::SamplingStatus::Ok) {
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
    if (!m_heat.lines.empty())
        m_editor->goToLine(m_heat.lines.front().line);
    showListingFor(m_heat.lines.empty() ? 1 : m_heat.lines.front().line);
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

void LineProfilePanel::showListingFor(int line)
{
    QStringList out;
    const auto* detail = m_focus ? m_focus->detail.get() : nullptr;
    if (m_sass && !m_sass->functions.empty()) {
        m_listingTitle->setText(tr("SASS of line %1 (stored nvdisasm listing)").arg(line));
        for (const auto& function : m_sass->functions) {
            static const lines::PcSampling unsampled;
            const auto listed = lines::sampledInstructions(function, m_sampling ? *m_sampling : unsampled);
            for (const auto& sampled : listed) {
                if (sampled.instruction.line != line)
                    continue;
                // Samples first, so that the figures line up whatever the instruction's length.
                const QString samples = sampled.samples > 0
                    ? QStringLiteral("%1 samples, %2").arg(sampled.samples).arg(toQString(sampled.dominantStall))
                    : QString();
                out.append(QStringLiteral("/*%1*/ %2  %3")
                               .arg(sampled.instruction.offset, 4, 16, QLatin1Char('0'))
                               .arg(samples, -32)
                               .arg(toQString(sampled.instruction.text)));
            }
        }
    } else if (m_ptx) {
        m_listingTitle->setText(tr("PTX of line %1 (stored compile output; no SASS stored)").arg(line));
        for (int number : m_ptx->ptxLinesFor(line))
            out.append(QStringLiteral("%1  %2").arg(number, 5).arg(
                toQString(m_ptx->lines[static_cast<std::size_t>(number - 1)].text)));
    } else {
        m_listingTitle->setText(tr("Machine code"));
        m_listingTitle->setToolTip(m_listingNote);
        m_listing->setPlainText(detail ? tr("No SASS or PTX: %1.").arg(m_listingNote) : QString());
        return;
    }
    // Which listings the iteration has, and why there is no SASS when there is none.
    m_listingTitle->setToolTip(m_listingNote);
    m_listing->setPlainText(
        out.isEmpty() ? tr("(no instructions for line %1)").arg(line) : out.join(QLatin1Char('\n')));
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

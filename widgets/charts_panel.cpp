#include "widgets/charts_panel.h"

#include "widgets/bandwidth_chart.h"
#include "widgets/latency_chart.h"
#include "widgets/number_text.h"
#include "widgets/resources_chart.h"
#include "widgets/stall_chart.h"
#include "widgets/string_conversion.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QTabWidget>
#include <QVBoxLayout>

namespace kl::gui {

ChartsPanel::ChartsPanel(IterationSelection* selection, QWidget* parent)
    : QWidget(parent)
    , m_selection(selection)
    , m_tabs(new QTabWidget(this))
    , m_sizes(new QComboBox(this))
    , m_latency(new LatencyChart(selection, this))
    , m_bandwidth(new BandwidthChart(selection, this))
    , m_stalls(new StallChart(selection, this))
    , m_resources(new ResourcesChart(selection, this))
{
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_latency, tr("Latency"));
    m_tabs->addTab(m_bandwidth, tr("Bandwidth"));
    //: charts tab: warp stall reasons per iteration
    m_tabs->addTab(m_stalls, tr("Stall reasons"));
    m_tabs->addTab(m_resources, tr("Registers && occupancy"));
    m_sizes->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_sizes->setToolTip(tr("The main size whose figures the charts draw"));
    auto* png = new QPushButton(tr("Export PNG…"), this);
    auto* svg = new QPushButton(tr("Export SVG…"), this);
    //: tooltip of the chart export buttons; %1 x %2 the exported image's size in pixels
    const QString exported = tr("The chart at %1×%2 px, titled with the problem, the session and the size it shows")
                                 .arg(IterationChart::kExportSize.width())
                                 .arg(IterationChart::kExportSize.height());
    png->setToolTip(exported);
    svg->setToolTip(exported);
    auto* copy = new QPushButton(tr("Copy with Evidence"), this);
    copy->setToolTip(tr("Copy the chart and the selected iteration's figures to the clipboard"));
    m_actions = { png, svg, copy, m_sizes };
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Size"), this));
    bar->addWidget(m_sizes);
    bar->addStretch(1);
    bar->addWidget(copy);
    bar->addWidget(png);
    bar->addWidget(svg);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(m_tabs, 1);
    connect(png, &QPushButton::clicked, this, [this] { exportCurrent(false); });
    connect(svg, &QPushButton::clicked, this, [this] { exportCurrent(true); });
    connect(copy, &QPushButton::clicked, this, &ChartsPanel::copyFigure);
    connect(m_sizes, &QComboBox::currentTextChanged, this, &ChartsPanel::chooseSize);
    follow(selection, this, this);
}

LatencyChart* ChartsPanel::latency() const { return showPending(m_latency); }
BandwidthChart* ChartsPanel::bandwidth() const { return showPending(m_bandwidth); }
StallChart* ChartsPanel::stalls() const { return showPending(m_stalls); }
ResourcesChart* ChartsPanel::resources() const { return showPending(m_resources); }

IterationChart* ChartsPanel::currentChart() const { return qobject_cast<IterationChart*>(m_tabs->currentWidget()); }

void ChartsPanel::showSession(const std::shared_ptr<const SessionView>& session)
{
    QStringList sizes;
    if (session)
        for (const std::string& size : session->sizes)
            sizes.append(toQString(size));
    QStringList shown;
    for (int i = 0; i < m_sizes->count(); ++i)
        shown.append(m_sizes->itemText(i));
    if (sizes != shown) { // a live refresh mostly keeps them: no relayout of the bar
        const QSignalBlocker block(m_sizes);
        const QString chosen = m_sizes->currentText();
        m_sizes->clear();
        m_sizes->addItems(sizes);
        const int again = m_sizes->findText(chosen);
        if (again >= 0)
            m_sizes->setCurrentIndex(again);
    }
    for (QWidget* action : m_actions)
        action->setEnabled(session != nullptr && !session->rows.empty());
    m_sizes->setEnabled(m_sizes->count() > 1);
}

void ChartsPanel::showIteration(const std::shared_ptr<const IterationFocus>&) { }

void ChartsPanel::chooseSize(const QString& size)
{
    const std::string chosen = toStdString(size);
    for (IterationChart* chart : { static_cast<IterationChart*>(m_latency), static_cast<IterationChart*>(m_bandwidth),
             static_cast<IterationChart*>(m_stalls), static_cast<IterationChart*>(m_resources) })
        chart->setSize(chosen);
    const QSignalBlocker block(m_sizes);
    m_sizes->setCurrentText(size);
}

QString ChartsPanel::figureEvidence() const
{
    const auto session = m_selection->session();
    const int index = m_selection->current();
    if (!session)
        return {};
    QString text = tr("%1 on %2, session %3")
                       .arg(toQString(session->session.problemName), toQString(session->session.device))
                       .arg(session->session.id);
    const figures::IterationFigures* f = index > 0 ? session->figuresOf(index) : nullptr;
    const IterationChart* chart = currentChart();
    const figures::SizeFigures* at = f && chart ? f->atSize(chart->size()) : nullptr;
    if (!f)
        return text + QLatin1Char('\n');
    text += QLatin1Char('\n') + tr("iteration %1: %2").arg(index).arg(toQString(f->category));
    if (at)
        //: copied evidence; sizes and figures as `show` prints them
        text += QLatin1Char('\n')
            + tr("at %1: median %2 us [p20 %3, p80 %4], baseline %5 us in the same job, %6 GB/s, %7% of copy, %8x")
                  .arg(toQString(at->size), fixedText(at->medianUs, 2), fixedText(at->p20Us, 2),
                      fixedText(at->p80Us, 2), fixedText(at->baselineUs, 2), fixedText(at->gbps, 0),
                      fixedText(at->pctOfCopy, 1), fixedText(at->speedup, 2));
    if (f->registers)
        text += QLatin1Char('\n')
            + tr("%1 registers per thread, theoretical occupancy %2%")
                  .arg(*f->registers)
                  .arg(fixedText(
                      f->theoreticalOccupancy ? std::optional<double>(*f->theoreticalOccupancy * 100) : std::nullopt,
                      0));
    return text + QLatin1Char('\n');
}

void ChartsPanel::copyFigure() const
{
    IterationChart* chart = currentChart();
    if (!chart)
        return;
    auto* mime = new QMimeData;
    mime->setImageData(chart->grab().toImage());
    mime->setText(figureEvidence());
    QApplication::clipboard()->setMimeData(mime);
}

void ChartsPanel::exportCurrent(bool svg)
{
    IterationChart* chart = currentChart();
    if (!chart)
        return;
    const QString path = QFileDialog::getSaveFileName(this, svg ? tr("Export Chart as SVG") : tr("Export Chart as PNG"),
        m_tabs->tabText(m_tabs->currentIndex()).toLower().replace(QLatin1Char(' '), QLatin1Char('-'))
            + (svg ? QStringLiteral(".svg") : QStringLiteral(".png")),
        svg ? tr("SVG images (*.svg)") : tr("PNG images (*.png)"));
    if (path.isEmpty())
        return;
    if (const QString error = exportChart(path); !error.isEmpty())
        QMessageBox::warning(this, tr("Export failed"), error);
}

QString ChartsPanel::exportTitle() const
{
    const auto session = m_selection->session();
    const IterationChart* chart = currentChart();
    if (!session || !chart)
        return {};
    const QString size = !chart->size().empty() ? toQString(chart->size()) : m_sizes->currentText();
    //: exported chart title; %1 problem, %2 session id, %3 the chart (Latency, Bandwidth, ...), %4 the main size
    return tr("%1 · session %2 · %3 at %4")
        .arg(toQString(session->session.problemName))
        .arg(session->session.id)
        .arg(m_tabs->tabText(m_tabs->currentIndex()).replace(QStringLiteral("&&"), QStringLiteral("&")), size);
}

QString ChartsPanel::exportChart(const QString& path)
{
    IterationChart* chart = currentChart();
    if (!chart)
        return tr("No chart is shown");
    const bool svg = path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive);
    const bool written = svg ? chart->saveSvg(path, exportTitle()) : chart->savePng(path, exportTitle());
    return written ? QString() : tr("Cannot write %1").arg(path);
}

} // namespace kl::gui

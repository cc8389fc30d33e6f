#include "widgets/bandwidth_chart.h"

#include "widgets/string_conversion.h"

#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>

namespace kl::gui {

BandwidthChart::BandwidthChart(IterationSelection* selection, QWidget* parent)
    : IterationChart(selection, parent)
    , m_yAxis(new QValueAxis(this))
{
    //: bandwidth chart's y axis, short as the latency chart's (the legend names the same-size copy)
    m_yAxis->setTitleText(tr("% of copy"));
    m_yAxis->setLabelFormat(QStringLiteral("%.0f"));
    addReadableAxis(chart(), m_yAxis, Qt::AlignLeft);
    follow(selection, this, this);
}

std::optional<double> BandwidthChart::valueOf(const figures::IterationFigures& figures) const
{
    const figures::SizeFigures* at = figures.passed ? sizeOf(figures) : nullptr;
    return at ? at->pctOfCopy : std::nullopt;
}

void BandwidthChart::rebuild()
{
    clearSeries();
    QList<QPointF> points;
    double high = 100;
    if (m_session)
        for (const figures::IterationFigures& f : m_session->figures)
            if (const auto pct = valueOf(f)) {
                points.append(QPointF(f.index, *pct));
                high = std::max(high, *pct);
            }
    if (m_session && points.isEmpty())
        setNote(m_session->figures.empty() ? tr("Reading the iterations' figures…")
                                           : tr("No iteration passed and was timed at %1").arg(toQString(m_size)));
    setRoundTicks(m_yAxis, 0, high * 1.08);
    QXYSeries* series = pointSeries(points.size());
    series->replace(points);
    //: bandwidth chart legend
    series->setName(tr("% of copy"));
    series->setColor(QColor(0x6a, 0x3d, 0x9a));
    attach(series, m_yAxis);
    auto* ceiling = new QLineSeries(this);
    const double last = std::max(1, lastIndex());
    ceiling->replace({ QPointF(0.5, 100), QPointF(last + 0.5, 100) });
    //: bandwidth chart legend: a device-to-device copy of the same bytes
    ceiling->setName(tr("same-size copy"));
    QPen pen(QColor(0x80, 0x80, 0x80));
    pen.setStyle(Qt::DashLine);
    ceiling->setPen(pen);
    attach(ceiling, m_yAxis);
}

} // namespace kl::gui

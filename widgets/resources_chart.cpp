#include "widgets/resources_chart.h"

#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>

namespace kl::gui {

ResourcesChart::ResourcesChart(IterationSelection* selection, QWidget* parent)
    : IterationChart(selection, parent)
    , m_registers(new QValueAxis(this))
    , m_occupancy(new QValueAxis(this))
{
    // Short axis titles: a 1366x768 window leaves ~70 px of height for them (the legend says "per thread").
    m_registers->setTitleText(tr("Registers"));
    m_registers->setLabelFormat(QStringLiteral("%d"));
    m_occupancy->setTitleText(tr("Occupancy %"));
    m_occupancy->setLabelFormat(QStringLiteral("%d"));
    setRoundTicks(m_occupancy, 0, 105);
    addReadableAxis(chart(), m_registers, Qt::AlignLeft);
    addReadableAxis(chart(), m_occupancy, Qt::AlignRight);
    // One grid: the occupancy ticks need not fall on the registers' lines.
    m_occupancy->setGridLineVisible(false);
    follow(selection, this, this);
}

std::optional<double> ResourcesChart::valueOf(const figures::IterationFigures& figures) const
{
    return figures.registers ? std::optional<double>(*figures.registers) : std::nullopt;
}

void ResourcesChart::rebuild()
{
    clearSeries();
    QList<QPointF> registers, theoretical, achieved;
    double high = 32;
    if (m_session)
        for (const figures::IterationFigures& f : m_session->figures) {
            if (f.registers) {
                registers.append(QPointF(f.index, *f.registers));
                high = std::max(high, static_cast<double>(*f.registers));
            }
            if (f.theoreticalOccupancy)
                theoretical.append(QPointF(f.index, *f.theoreticalOccupancy * 100.0));
            if (const figures::SizeFigures* at = sizeOf(f); at && at->achievedOccupancy)
                achieved.append(QPointF(f.index, *at->achievedOccupancy));
        }
    if (m_session && registers.isEmpty())
        setNote(m_session->figures.empty() ? tr("Reading the iterations' figures…")
                                           : tr("No iteration has a static resource report"));
    setRoundTicks(m_registers, 0, high * 1.15);
    // All three drawn alike (markers or lines), decided by the registers' count.
    auto series = [&](const QList<QPointF>& points, const QString& name, const QColor& color, QValueAxis* axis) {
        QXYSeries* s = pointSeries(registers.size());
        s->replace(points);
        s->setName(name);
        s->setColor(color);
        attach(s, axis);
    };
    //: resources chart legend
    series(registers, tr("registers per thread"), QColor(0xb8, 0x60, 0x00), m_registers);
    //: resources chart legend: occupancy the occupancy calculator allows
    series(theoretical, tr("theoretical occupancy"), QColor(0x1f, 0x6f, 0xb4), m_occupancy);
    //: resources chart legend: occupancy measured by CUPTI
    series(achieved, tr("achieved occupancy"), QColor(0x1b, 0x7a, 0x35), m_occupancy);
}

} // namespace kl::gui

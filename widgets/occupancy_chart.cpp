#include "widgets/occupancy_chart.h"

#include "widgets/iteration_chart.h"

#include <QChart>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>

namespace kl::gui {

namespace {

constexpr int kMaxRegisters = 255;
constexpr std::int64_t kSharedStep = 1024; // one point per KiB

} // namespace

OccupancyChart::OccupancyChart(QWidget* parent)
    : QChartView(parent)
    , m_curve(new QLineSeries)
    , m_current(new QScatterSeries)
    , m_axisX(new QValueAxis)
    , m_axisY(new QValueAxis)
{
    auto* chart = new QChart;
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->legend()->setVisible(false);
    chart->setBackgroundRoundness(0);

    QPen pen(QColor(0x1f, 0x6f, 0xc5));
    pen.setWidthF(2.0);
    m_curve->setPen(pen);
    m_current->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    m_current->setMarkerSize(11.0);
    m_current->setColor(QColor(0xd0, 0x40, 0x20));
    m_current->setBorderColor(Qt::white);
    chart->addSeries(m_curve);
    chart->addSeries(m_current);

    // A little headroom so that a kernel at 100% shows its marker whole.
    m_axisY->setRange(0.0, 104.0);
    m_axisY->setTickType(QValueAxis::TicksDynamic);
    m_axisY->setTickAnchor(0.0);
    m_axisY->setTickInterval(20.0);
    m_axisY->setLabelFormat(QStringLiteral("%d%%"));
    //: axis title of the occupancy chart
    m_axisY->setTitleText(tr("Theoretical<br>occupancy")); // two lines: one was elided in a short chart
    m_axisX->setLabelFormat(QStringLiteral("%d"));
    addReadableAxis(chart, m_axisX, Qt::AlignBottom);
    addReadableAxis(chart, m_axisY, Qt::AlignLeft);
    for (QAbstractSeries* series :
        { static_cast<QAbstractSeries*>(m_curve), static_cast<QAbstractSeries*>(m_current) }) {
        series->attachAxis(m_axisX);
        series->attachAxis(m_axisY);
    }
    setChart(chart);
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(120); // a laptop with the review dock open; the splitter gives it the rest
    rebuild();
}

void OccupancyChart::setKernel(const DeviceLimits& device, const KernelShape& shape)
{
    m_device = device;
    m_shape = shape;
    m_hasKernel = shape.threadsPerBlock > 0;
    rebuild();
}

void OccupancyChart::clear(const QString& reason)
{
    m_hasKernel = false;
    m_emptyReason = reason;
    rebuild();
}

void OccupancyChart::setVariation(Variation variation)
{
    m_variation = variation;
    rebuild();
}

int OccupancyChart::curvePointCount() const { return static_cast<int>(m_curve->count()); }

QPointF OccupancyChart::currentPoint() const { return m_current->count() > 0 ? m_current->at(0) : QPointF(); }

double OccupancyChart::occupancyPercent(int threads, int registers, std::int64_t sharedBytes) const
{
    return 100.0 * theoreticalOccupancy(m_device, threads, registers, sharedBytes, m_shape.barriers).theoretical;
}

void OccupancyChart::rebuild()
{
    QList<QPointF> points;
    // Occupancy is a step function: draw it as steps, not as slopes between samples.
    auto add = [&points](double x, double y) {
        if (!points.isEmpty() && points.back().y() != y)
            points.append(QPointF(x, points.back().y()));
        points.append(QPointF(x, y));
    };
    QPointF current;
    QString xTitle;
    double xMax = 1.0;
    double xTick = 1.0;
    if (m_hasKernel) {
        switch (m_variation) {
        case Variation::Registers:
            for (int r = 1; r <= kMaxRegisters; ++r)
                add(r, occupancyPercent(m_shape.threadsPerBlock, r, m_shape.sharedBytes));
            current = QPointF(
                m_shape.registers, occupancyPercent(m_shape.threadsPerBlock, m_shape.registers, m_shape.sharedBytes));
            //: x axis of the occupancy chart
            xTitle = tr("Registers per thread");
            xMax = 256;
            xTick = 32;
            break;
        case Variation::BlockSize:
            for (int t = m_device.warpSize; t <= m_device.maxThreadsPerBlock; t += m_device.warpSize)
                add(t, occupancyPercent(t, m_shape.registers, m_shape.sharedBytes));
            current = QPointF(m_shape.threadsPerBlock,
                occupancyPercent(m_shape.threadsPerBlock, m_shape.registers, m_shape.sharedBytes));
            //: x axis of the occupancy chart
            xTitle = tr("Threads per block");
            xMax = m_device.maxThreadsPerBlock;
            xTick = 128;
            break;
        case Variation::SharedMemory:
            for (std::int64_t s = 0; s <= m_device.sharedPerBlockOptin; s += kSharedStep)
                add(static_cast<double>(s) / 1024.0, occupancyPercent(m_shape.threadsPerBlock, m_shape.registers, s));
            current = QPointF(static_cast<double>(m_shape.sharedBytes) / 1024.0,
                occupancyPercent(m_shape.threadsPerBlock, m_shape.registers, m_shape.sharedBytes));
            //: x axis of the occupancy chart; KiB = 1024 bytes
            xTitle = tr("Shared memory per block (KiB)");
            xMax = static_cast<double>(m_device.sharedPerBlockOptin) / 1024.0;
            xTick = 32;
            break;
        }
    }
    m_curve->replace(points);
    m_current->clear();
    if (m_hasKernel)
        m_current->append(current);
    // The interval before the range: a range of 256 at the empty chart's interval of 1 laid out 256
    // labels, drawn as a row of "…" until the next layout.
    m_axisX->setTickType(QValueAxis::TicksDynamic);
    m_axisX->setTickAnchor(0.0);
    m_axisX->setTickInterval(xTick);
    m_axisX->setRange(0.0, std::max(1.0, xMax));
    m_axisX->setTitleText(xTitle);
    m_axisX->setVisible(m_hasKernel); // no empty axes under the "appears after" title
    m_axisY->setVisible(m_hasKernel);
    if (m_hasKernel) {
        //: chart title; %1 kernel name, %2 threads per block, %3 registers per thread, %4 occupancy in percent
        chart()->setTitle(tr("%1: %2 threads, %3 registers → %4% occupancy")
                              .arg(m_shape.kernel)
                              .arg(m_shape.threadsPerBlock)
                              .arg(m_shape.registers)
                              .arg(current.y(), 0, 'f', 0));
    } else {
        chart()->setTitle(m_emptyReason.isEmpty() ? tr("Occupancy appears after the first analysis") : m_emptyReason);
    }
}

} // namespace kl::gui

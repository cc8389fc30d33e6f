#include "widgets/roofline_chart.h"

#include "widgets/string_conversion.h"

#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>

#include <algorithm>
#include <cmath>

namespace kl::gui {

namespace {

// A roof of `gbps` capped by the compute peak, sampled at its ends and its ridge.
QLineSeries* roof(const QString& name, double gbps, double peakGflops, double left, double right, QColor colour)
{
    auto* series = new QLineSeries;
    series->setName(name);
    const double ridge = peakGflops > 0.0 ? peakGflops / gbps : right;
    series->append(left, gbps * left);
    if (ridge > left && ridge < right)
        series->append(ridge, peakGflops);
    series->append(right, peakGflops > 0.0 ? std::min(gbps * right, peakGflops) : gbps * right);
    QPen pen(colour);
    pen.setWidthF(2.0);
    series->setPen(pen);
    return series;
}

QString gbpsText(double gbps) { return QString::number(gbps, 'f', 0) + QStringLiteral(" GB/s"); }

} // namespace

RooflineChart::RooflineChart(IterationSelection* selection, QWidget* parent)
    : QChartView(parent)
    , m_x(new QLogValueAxis(this))
    , m_y(new QLogValueAxis(this))
{
    setRenderHint(QPainter::Antialiasing);
    chart()->setTitle(tr("Roofline"));
    //: roofline x axis
    m_x->setTitleText(tr("Arithmetic intensity (FLOP/byte)"));
    m_x->setLabelFormat(QStringLiteral("%g"));
    m_x->setBase(10.0);
    //: roofline y axis
    m_y->setTitleText(tr("Achieved GFLOP/s"));
    m_y->setLabelFormat(QStringLiteral("%.0f"));
    m_y->setBase(10.0);
    chart()->addAxis(m_x, Qt::AlignBottom);
    chart()->addAxis(m_y, Qt::AlignLeft);
    chart()->legend()->setAlignment(Qt::AlignBottom);
    follow(selection, this, this);
}

void RooflineChart::showSession(const std::shared_ptr<const SessionView>&) { }

void RooflineChart::showIteration(const std::shared_ptr<const IterationFocus>& focus)
{
    const auto* detail = focus ? focus->detail.get() : nullptr;
    m_index = detail ? detail->row.index : 0;
    m_roofline = detail && detail->result ? figures::rooflineOf(*detail->result) : figures::Roofline {};
    if (!detail)
        m_note = tr("Select an iteration to place it on the roofline.");
    else if (!detail->result)
        m_note = tr("Iteration %1 has no result.").arg(m_index);
    else
        m_note = toQString(m_roofline.note);
    rebuild();
}

QStringList RooflineChart::seriesNames() const
{
    QStringList names;
    for (const auto* series : chart()->series())
        names.append(series->name());
    return names;
}

void RooflineChart::rebuild()
{
    chart()->removeAllSeries();
    if (m_roofline.points.empty()) {
        chart()->setTitle(m_note.isEmpty() ? tr("Roofline") : tr("Roofline: %1").arg(m_note));
        return;
    }
    chart()->setTitle(tr("Roofline of iteration %1").arg(m_index));
    double left = 1e30, right = 0.0, low = 1e30, high = 0.0;
    for (const auto& point : m_roofline.points) {
        left = std::min(left, point.intensity);
        right = std::max(right, point.intensity);
        low = std::min(low, point.achievedGflops);
        high = std::max(high, point.achievedGflops);
    }
    const double peak = m_roofline.peakGflops.value_or(0.0);
    for (double gbps : { m_roofline.deviceCopyGbps.value_or(0.0) })
        if (gbps > 0.0 && peak > 0.0) {
            left = std::min(left, m_roofline.ridge(gbps));
            right = std::max(right, m_roofline.ridge(gbps));
        }
    left = std::pow(10.0, std::floor(std::log10(left)) - 1);
    right = std::pow(10.0, std::ceil(std::log10(right)) + 1);
    auto attach = [this](QAbstractSeries* series) {
        chart()->addSeries(series);
        series->attachAxis(m_x);
        series->attachAxis(m_y);
    };
    if (m_roofline.deviceCopyGbps) {
        const QString name = peak > 0.0 ? tr("device copy %1, FP32 peak %2 TFLOP/s")
                                              .arg(gbpsText(*m_roofline.deviceCopyGbps))
                                              .arg(peak / 1e3, 0, 'f', 1)
                                        : tr("device copy %1").arg(gbpsText(*m_roofline.deviceCopyGbps));
        attach(roof(name, *m_roofline.deviceCopyGbps, peak, left, right, QColor(0x60, 0x60, 0x60)));
        low = std::min(low, *m_roofline.deviceCopyGbps * left);
    }
    if (const auto copy = m_roofline.points.front().copyGbps) {
        attach(roof(tr("same-size copy %1").arg(gbpsText(*copy)), *copy, peak, left, right, QColor(0x2a, 0x7a, 0xc0)));
        low = std::min(low, *copy * left);
    }
    auto* achieved = new QScatterSeries;
    achieved->setName(tr("achieved"));
    achieved->setMarkerSize(11.0);
    achieved->setColor(QColor(0xd0, 0x40, 0x20));
    for (const auto& point : m_roofline.points)
        achieved->append(point.intensity, point.achievedGflops);
    attach(achieved);
    high = std::max(high, peak);
    m_x->setRange(left, right);
    m_y->setRange(std::pow(10.0, std::floor(std::log10(low))), std::pow(10.0, std::ceil(std::log10(high * 1.5))));
}

} // namespace kl::gui

#include "widgets/roofline_chart.h"

#include "widgets/iteration_chart.h"
#include "widgets/string_conversion.h"

#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>

#include <algorithm>
#include <cmath>

namespace kl::gui {

namespace {

// The y axis is in TFLOP/s: its log labels then read 0.01 .. 100 instead of 10 .. 1000000 GFLOP/s.
constexpr double kGflopsPerTflops = 1e3;

// A roof of `gbps` capped by the compute peak, sampled at its ends and its ridge.
QLineSeries* roof(const QString& name, double gbps, double peakGflops, double left, double right, QColor colour)
{
    auto* series = new QLineSeries;
    series->setName(name);
    const double ridge = peakGflops > 0.0 ? peakGflops / gbps : right;
    series->append(left, gbps * left / kGflopsPerTflops);
    if (ridge > left && ridge < right)
        series->append(ridge, peakGflops / kGflopsPerTflops);
    series->append(right, (peakGflops > 0.0 ? std::min(gbps * right, peakGflops) : gbps * right) / kGflopsPerTflops);
    QPen pen(colour);
    pen.setWidthF(2.0);
    series->setPen(pen);
    return series;
}

QString gbpsText(double gbps) { return QString::number(gbps, 'f', 0) + QStringLiteral(" GB/s"); }

QString flopsText(double gflops)
{
    return gflops >= kGflopsPerTflops ? QString::number(gflops / kGflopsPerTflops, 'f', 1) + QStringLiteral(" TFLOP/s")
                                      : QString::number(gflops, 'f', 1) + QStringLiteral(" GFLOP/s");
}

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
    m_y->setTitleText(tr("Achieved TFLOP/s"));
    m_y->setLabelFormat(QStringLiteral("%g"));
    m_y->setBase(10.0);
    addReadableAxis(chart(), m_x, Qt::AlignBottom);
    addReadableAxis(chart(), m_y, Qt::AlignLeft);
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
    // What the point means in the units the engineer tunes against: bandwidth and its share of the copy.
    const auto& first = m_roofline.points.front();
    QString figures = tr("%1, %2").arg(flopsText(first.achievedGflops), gbpsText(first.achievedGbps));
    if (first.copyGbps)
        figures += tr(" (%1% of the same-size copy)").arg(100.0 * first.achievedGbps / *first.copyGbps, 0, 'f', 0);
    if (first.pctOfSol && m_roofline.precision)
        //: roofline title: %1 % of speed of light, %2 which floor binds (memory or compute), %3 the compute
        //: ceiling and why ("FP32 CUDA cores: not a matrix product")
        figures += tr(", %1% of SOL (%2; ceiling %3)")
                       .arg(*first.pctOfSol, 0, 'f', 1)
                       .arg(first.solBound ? toQString(std::string(boundName(*first.solBound))) : QStringLiteral("?"))
                       .arg(toQString(ceilingText(*m_roofline.precision, m_roofline.precisionReason)));
    else if (first.pctOfSol)
        //: roofline title: %1 % of speed of light, %2 which floor binds (memory or compute)
        figures += tr(", %1% of SOL (%2)")
                       .arg(*first.pctOfSol, 0, 'f', 1)
                       .arg(first.solBound ? toQString(std::string(boundName(*first.solBound))) : QStringLiteral("?"));
    if (m_roofline.points.size() > 1)
        figures += tr(" at %1, the first of %2 sizes").arg(toQString(first.size)).arg(m_roofline.points.size());
    chart()->setTitle(tr("Roofline of iteration %1: %2").arg(m_index).arg(figures));
    double left = 1e30, right = 0.0, low = 1e30, high = 0.0;
    for (const auto& point : m_roofline.points) {
        left = std::min(left, point.intensity);
        right = std::max(right, point.intensity);
        low = std::min(low, point.achievedGflops);
        high = std::max(high, point.achievedGflops);
    }
    const double peak = m_roofline.peakGflops.value_or(0.0);
    const double precisionPeak = m_roofline.precisionPeakGflops.value_or(0.0);
    for (double gbps : { m_roofline.deviceCopyGbps.value_or(0.0) })
        if (gbps > 0.0 && peak > 0.0) {
            left = std::min(left, m_roofline.ridge(gbps));
            right = std::max(right, m_roofline.ridge(gbps));
            if (precisionPeak > 0.0)
                right = std::max(right, precisionPeak / gbps);
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
        auto* device = roof(name, *m_roofline.deviceCopyGbps, peak, left, right, QColor(0x60, 0x60, 0x60));
        QPen dashed = device->pen();
        dashed.setStyle(Qt::DashLine); // visible where it runs on top of the same-size copy's roof
        device->setPen(dashed);
        attach(device);
        low = std::min(low, *m_roofline.deviceCopyGbps * left);
    }
    if (const auto copy = m_roofline.points.front().copyGbps) {
        attach(roof(tr("same-size copy %1").arg(gbpsText(*copy)), *copy, peak, left, right, QColor(0x2a, 0x7a, 0xc0)));
        low = std::min(low, *copy * left);
    }
    // The problem's own ceiling where it is not FP32's (an fp16 GEMM: FP16 tensor), under the same-size
    // copy: the roof speed of light holds the point to.
    if (const auto gbps = first.copyGbps ? first.copyGbps : m_roofline.deviceCopyGbps;
        precisionPeak > 0.0 && gbps && m_roofline.precision) {
        //: roofline series: %1 the precision ("FP16 tensor"), %2 its ceiling in TFLOP/s
        attach(roof(tr("%1 peak %2 TFLOP/s")
                        .arg(toQString(std::string(precisionLabel(*m_roofline.precision))))
                        .arg(precisionPeak / 1e3, 0, 'f', 0),
            *gbps, precisionPeak, left, right, QColor(0x20, 0x90, 0x40)));
        high = std::max(high, precisionPeak);
        // What the runner's mma.sync microbenchmark reached on this device, beside the theoretical roof.
        if (const auto measured = m_roofline.measuredTensorGflops;
            measured && (*m_roofline.precision == Precision::Fp16 || *m_roofline.precision == Precision::Bf16)) {
            //: roofline series: the FP16 tensor ceiling measured by the runner's mma.sync microbenchmark
            auto* reached = roof(tr("FP16 tensor measured (mma.sync) %1 TFLOP/s").arg(*measured / 1e3, 0, 'f', 0),
                *gbps, *measured, left, right, QColor(0x20, 0x90, 0x40));
            QPen dotted = reached->pen();
            dotted.setStyle(Qt::DotLine);
            reached->setPen(dotted);
            attach(reached);
        }
    }
    auto* achieved = new QScatterSeries;
    achieved->setName(tr("achieved"));
    achieved->setMarkerSize(11.0);
    achieved->setColor(QColor(0xd0, 0x40, 0x20));
    for (const auto& point : m_roofline.points)
        achieved->append(point.intensity, point.achievedGflops / kGflopsPerTflops);
    attach(achieved);
    high = std::max(high, peak);
    // Just past the powers of ten at the ends, or the axes leave their first label out.
    constexpr double kMargin = 1.02;
    m_x->setRange(left / kMargin, right * kMargin);
    m_y->setRange(std::pow(10.0, std::floor(std::log10(low / kGflopsPerTflops))) / kMargin,
        std::pow(10.0, std::ceil(std::log10(high * 1.5 / kGflopsPerTflops))) * kMargin);
}

} // namespace kl::gui

#include "widgets/latency_chart.h"

#include "widgets/string_conversion.h"
#include "widgets/verdict_style.h"

#include <QtCharts/QAreaSeries>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <map>

namespace kl::gui {

namespace {
// Beyond this many points the median is drawn as a line only: markers would cover each other.
constexpr std::size_t kMarkerLimit = 400;
} // namespace

LatencyChart::LatencyChart(IterationSelection* selection, QWidget* parent)
    : IterationChart(selection, parent)
    , m_yAxis(new QValueAxis(this))
{
    //: latency chart's y axis
    m_yAxis->setTitleText(tr("Median latency (µs)"));
    m_yAxis->setLabelFormat(QStringLiteral("%.0f"));
    chart()->addAxis(m_yAxis, Qt::AlignLeft);
    follow(selection, this, this);
}

std::optional<double> LatencyChart::valueOf(const figures::IterationFigures& figures) const
{
    if (!figures.passed)
        return figures.sizes.empty() && figures.category.empty() ? std::nullopt : std::optional<double>(m_laneY);
    const figures::SizeFigures* at = sizeOf(figures);
    return at ? at->medianUs : std::nullopt;
}

void LatencyChart::rebuild()
{
    chart()->removeAllSeries();
    m_failedCategories.clear();
    if (!m_session || m_session->figures.empty()) {
        m_yAxis->setRange(0, 1);
        setNote(m_session ? tr("Reading the iterations' figures…") : QString());
        return;
    }
    QList<QPointF> median, upper, lower, baseline, best;
    std::map<std::string, QList<QPointF>> failed;
    double low = 1e300, high = 0;
    std::optional<double> bestSoFar;
    for (const figures::IterationFigures& f : m_session->figures) {
        const figures::SizeFigures* at = sizeOf(f);
        if (!f.passed || !at || !at->medianUs) {
            if (!f.passed)
                failed[f.category].append(QPointF(f.index, 0));
            continue;
        }
        const double x = f.index;
        median.append(QPointF(x, *at->medianUs));
        upper.append(QPointF(x, at->p80Us.value_or(*at->medianUs)));
        lower.append(QPointF(x, at->p20Us.value_or(*at->medianUs)));
        if (at->baselineUs)
            baseline.append(QPointF(x, *at->baselineUs));
        if (!bestSoFar || *at->medianUs < *bestSoFar) {
            if (bestSoFar)
                best.append(QPointF(x, *bestSoFar));
            bestSoFar = *at->medianUs;
        }
        best.append(QPointF(x, *bestSoFar));
        low = std::min({ low, at->p20Us.value_or(*at->medianUs), at->baselineUs.value_or(low) });
        high = std::max({ high, at->p80Us.value_or(*at->medianUs), at->baselineUs.value_or(high) });
    }
    if (!best.isEmpty())
        best.append(QPointF(m_session->rows.back().index, *bestSoFar));
    if (median.isEmpty()) {
        low = 0;
        high = 1;
        //: latency chart note when nothing passed at the chosen size
        setNote(tr("No iteration passed and was timed at %1").arg(toQString(m_size)));
    }
    const double span = std::max(high - low, high * 0.05);
    m_laneY = high + span * 0.12;
    m_yAxis->setRange(std::max(0.0, low - span * 0.05), m_laneY + span * 0.06);

    auto* upperSeries = new QLineSeries(this);
    auto* lowerSeries = new QLineSeries(this);
    upperSeries->replace(upper);
    lowerSeries->replace(lower);
    auto* band = new QAreaSeries(upperSeries, lowerSeries);
    band->setParent(this);
    //: latency chart legend: the spread of the timed runs
    band->setName(tr("p20–p80"));
    band->setColor(QColor(0x1f, 0x6f, 0xb4, 50));
    band->setBorderColor(QColor(0x1f, 0x6f, 0xb4, 80));
    attach(band, m_yAxis);

    auto* baselineSeries = new QLineSeries(this);
    baselineSeries->replace(baseline);
    //: latency chart legend: the problem's baseline, timed in the same job as each candidate
    baselineSeries->setName(tr("baseline (same job)"));
    QPen baselinePen(QColor(0x80, 0x80, 0x80));
    baselinePen.setStyle(Qt::DashLine);
    baselineSeries->setPen(baselinePen);
    attach(baselineSeries, m_yAxis);

    auto* bestSeries = new QLineSeries(this);
    bestSeries->replace(best);
    //: latency chart legend: the fastest passing median so far
    bestSeries->setName(tr("best so far"));
    QPen bestPen(verdictColor(Verdict::Passed));
    bestPen.setWidthF(2.0);
    bestSeries->setPen(bestPen);
    attach(bestSeries, m_yAxis);

    QXYSeries* medianSeries = nullptr;
    if (median.size() <= static_cast<qsizetype>(kMarkerLimit)) {
        auto* scatter = new QScatterSeries(this);
        scatter->setMarkerSize(7);
        medianSeries = scatter;
    } else {
        medianSeries = new QLineSeries(this);
    }
    medianSeries->replace(median);
    medianSeries->setName(tr("median"));
    medianSeries->setColor(QColor(0x1f, 0x6f, 0xb4));
    attach(medianSeries, m_yAxis);

    for (auto& [category, points] : failed) {
        for (QPointF& p : points)
            p.setY(m_laneY);
        auto* lane = new QScatterSeries(this);
        lane->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
        lane->setMarkerSize(9);
        lane->replace(points);
        //: latency chart legend for failed iterations; %1 the failure category
        lane->setName(tr("failed: %1").arg(toQString(category)));
        lane->setColor(verdictColor(category.starts_with("compile.") ? Verdict::CompileError : Verdict::Failed));
        attach(lane, m_yAxis);
        m_failedCategories.append(toQString(category));
    }
}

} // namespace kl::gui

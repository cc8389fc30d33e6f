#include "widgets/latency_chart.h"

#include "widgets/string_conversion.h"
#include "widgets/verdict_style.h"

#include <QtCharts/QAreaSeries>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <map>

namespace kl::gui {

namespace {
enum class Keep { Both, Highest, Lowest };

// A long line as the screen shows it: per pixel column its lowest and highest point (in x order),
// or only one of them for the band's edges. Short lines come back as they are.
QList<QPointF> perColumn(const QList<QPointF>& points, double first, double last, int columns, Keep keep)
{
    if (points.size() <= 2 * columns || last <= first)
        return points;
    QList<QPointF> out;
    out.reserve(2 * columns + 2);
    const double width = (last - first) / columns;
    qsizetype i = 0;
    while (i < points.size()) {
        const auto column = static_cast<long>((points[i].x() - first) / width);
        QPointF low = points[i], high = points[i];
        for (; i < points.size() && static_cast<long>((points[i].x() - first) / width) == column; ++i) {
            if (points[i].y() < low.y())
                low = points[i];
            if (points[i].y() > high.y())
                high = points[i];
        }
        if (keep != Keep::Highest && (keep == Keep::Lowest || low.x() <= high.x()))
            out.append(low);
        if (keep != Keep::Lowest)
            out.append(high);
        if (keep == Keep::Both && low.x() > high.x())
            out.append(low);
    }
    return out;
}
} // namespace

LatencyChart::LatencyChart(IterationSelection* selection, QWidget* parent)
    : IterationChart(selection, parent)
    , m_yAxis(new QValueAxis(this))
{
    //: latency chart's y axis, short: a chart 1366x768 window leaves ~70 px of height for it
    // ("Median latency (µs)" read "Median lat..." there).
    m_yAxis->setTitleText(tr("Median µs"));
    m_yAxis->setLabelFormat(QStringLiteral("%.0f"));
    addReadableAxis(chart(), m_yAxis, Qt::AlignLeft);
    follow(selection, this, this);
}

std::optional<double> LatencyChart::valueOf(const figures::IterationFigures& figures) const
{
    if (!figures.passed)
        return figures.sizes.empty() && figures.category.empty() ? std::nullopt : std::optional<double>(m_laneY);
    const figures::SizeFigures* at = sizeOf(figures);
    return at ? at->medianUs : std::nullopt;
}

void LatencyChart::createSeries(bool medianAsLine, const std::vector<std::string>& categories)
{
    clearSeries();
    m_lanes.clear();
    m_failedCategories.clear();
    ++m_created;
    m_upper = new QLineSeries(this);
    m_lower = new QLineSeries(this);
    auto* band = new QAreaSeries(m_upper, m_lower);
    band->setParent(this);
    //: latency chart legend: the spread of the timed runs
    band->setName(tr("p20–p80"));
    band->setColor(QColor(0x1f, 0x6f, 0xb4, 60));
    band->setPen(Qt::NoPen); // one area, not two outlines that read as extra lines
    attach(band, m_yAxis);

    m_baseline = new QLineSeries(this);
    //: latency chart legend: the problem's baseline, timed in the same job as each candidate
    m_baseline->setName(tr("baseline (same job)"));
    QPen baselinePen(QColor(0x80, 0x80, 0x80));
    baselinePen.setStyle(Qt::DashLine);
    m_baseline->setPen(baselinePen);
    attach(m_baseline, m_yAxis);

    m_best = new QLineSeries(this);
    //: latency chart legend: the fastest passing median so far
    m_best->setName(tr("best so far"));
    QPen bestPen(verdictColor(Verdict::Passed));
    bestPen.setWidthF(2.0);
    m_best->setPen(bestPen);
    attach(m_best, m_yAxis);

    m_medianAsLine = medianAsLine;
    m_median = pointSeries(medianAsLine ? 401 : 0);
    m_median->setName(tr("median"));
    m_median->setColor(QColor(0x1f, 0x6f, 0xb4));
    attach(m_median, m_yAxis);

    // The failed lane: one filled path per category, a small box per failed iteration (a scatter
    // series would make a graphics item per point: ~1,900 of them at 10,000 iterations).
    for (const std::string& category : categories) {
        auto* lane = new QAreaSeries(new QLineSeries(this), new QLineSeries(this));
        lane->setParent(this);
        //: latency chart legend for failed iterations; %1 the failure category
        lane->setName(tr("failed: %1").arg(toQString(category)));
        lane->setColor(verdictColor(category.starts_with("compile.") ? Verdict::CompileError : Verdict::Failed));
        lane->setPen(Qt::NoPen);
        attach(lane, m_yAxis);
        m_lanes.emplace_back(category, lane);
        m_failedCategories.append(toQString(category));
    }
}

void LatencyChart::rebuild()
{
    if (!m_session || m_session->figures.empty()) {
        clearSeries();
        m_median = nullptr;
        m_lanes.clear();
        m_failedCategories.clear();
        m_yAxis->setRange(0, 1);
        setNote(m_session ? tr("Reading the iterations' figures…") : QString());
        return;
    }
    QList<QPointF> median, upper, lower, best;
    std::vector<double> baselines;
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
            baselines.push_back(*at->baselineUs);
        if (!bestSoFar || *at->medianUs < *bestSoFar) { // a step: only where the best changes
            if (bestSoFar)
                best.append(QPointF(x, *bestSoFar));
            bestSoFar = *at->medianUs;
            best.append(QPointF(x, *bestSoFar));
        }
        low = std::min({ low, at->p20Us.value_or(*at->medianUs), at->baselineUs.value_or(low) });
        high = std::max({ high, at->p80Us.value_or(*at->medianUs), at->baselineUs.value_or(high) });
    }
    if (!best.isEmpty())
        best.append(QPointF(lastIndex(), *bestSoFar));
    // The baseline is timed again in every job; one line at the median of those timings says the
    // same as a point per iteration, in two points instead of thousands.
    QList<QPointF> baseline;
    if (!baselines.empty()) {
        std::nth_element(baselines.begin(), baselines.begin() + baselines.size() / 2, baselines.end());
        m_baselineUs = baselines[baselines.size() / 2];
        const auto [first, last] = xRange();
        baseline = { QPointF(first, *m_baselineUs), QPointF(last, *m_baselineUs) };
    } else {
        m_baselineUs.reset();
    }
    if (median.isEmpty()) {
        low = 0;
        high = 1;
        //: latency chart note when nothing passed at the chosen size
        setNote(tr("No iteration passed and was timed at %1").arg(toQString(m_size)));
    }
    const double span = std::max(high - low, high * 0.05);
    m_laneY = high + span * 0.12;
    setRoundTicks(m_yAxis, std::max(0.0, low - span * 0.05), m_laneY + span * 0.06);

    // The same series as the last refresh take the new points (markers up to 400 points, a line beyond).
    std::vector<std::string> categories;
    for (const auto& [category, points] : failed)
        categories.push_back(category);
    std::vector<std::string> shownCategories;
    for (const auto& [category, lane] : m_lanes)
        shownCategories.push_back(category);
    const bool medianAsLine = median.size() > 400;
    if (!m_median || medianAsLine != m_medianAsLine || categories != shownCategories)
        createSeries(medianAsLine, categories);

    const auto [firstX, lastX] = xRange();
    const int columns = std::max(200, static_cast<int>(chart()->plotArea().width()));
    setPoints(m_upper, perColumn(upper, firstX, lastX, columns, Keep::Highest));
    setPoints(m_lower, perColumn(lower, firstX, lastX, columns, Keep::Lowest));
    setPoints(m_baseline, baseline);
    setPoints(m_best, best);
    setPoints(m_median, perColumn(median, firstX, lastX, columns, Keep::Both));

    const double boxHalfHeight = span * 0.035;
    for (const auto& [category, lane] : m_lanes) {
        const QList<QPointF>& points = failed[category];
        // A few pixels wide at any length; neighbours that touch merge, so the path never overlaps itself.
        const double halfWidth = std::max(0.3, 0.004 * lastIndex());
        QList<QPointF> boxes;
        boxes.reserve(points.size() * 4);
        auto close = [&](double from, double to) {
            boxes.append(QPointF(from, m_laneY - boxHalfHeight));
            boxes.append(QPointF(from, m_laneY + boxHalfHeight));
            boxes.append(QPointF(to, m_laneY + boxHalfHeight));
            boxes.append(QPointF(to, m_laneY - boxHalfHeight));
        };
        double from = points.front().x() - halfWidth, to = points.front().x() + halfWidth;
        for (const QPointF& p : points) {
            if (p.x() - halfWidth > to) {
                close(from, to);
                from = p.x() - halfWidth;
            }
            to = p.x() + halfWidth;
        }
        close(from, to);
        setPoints(lane->upperSeries(), boxes);
        setPoints(lane->lowerSeries(),
            { QPointF(boxes.front().x(), m_laneY - boxHalfHeight),
                QPointF(boxes.back().x(), m_laneY - boxHalfHeight) });
    }
}

} // namespace kl::gui

#include "widgets/stall_chart.h"

#include "core/findings/stall_reasons.h"
#include "widgets/string_conversion.h"

#include <QtCharts/QBarSet>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <cmath>
#include <map>

namespace kl::gui {

namespace {
constexpr int kWindow = 48; // bars drawn at once; more would be too thin to read
constexpr int kReasons = 7; // the largest reasons get their own colour, the rest are "other"
} // namespace

StallChart::StallChart(IterationSelection* selection, QWidget* parent)
    : IterationChart(selection, parent)
    , m_axis(new QCategoryAxis(this))
    , m_yAxis(new QValueAxis(this))
{
    m_axis->setTitleText(tr("Iteration"));
    m_axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    replaceIterationAxis(m_axis);
    //: stall chart's y axis: Nsight Compute's unit for warp stall reasons
    m_yAxis->setTitleText(tr("Cycles per instruction"));
    m_yAxis->setLabelFormat(QStringLiteral("%.1f"));
    addReadableAxis(chart(), m_yAxis, Qt::AlignLeft);
    chart()->legend()->setAlignment(Qt::AlignRight);
    follow(selection, this, this);
}

std::optional<double> StallChart::valueOf(const figures::IterationFigures& figures) const
{
    const figures::SizeFigures* at = sizeOf(figures);
    if (!at || at->stalls.empty())
        return std::nullopt;
    double total = 0;
    for (const auto& [name, value] : at->stalls)
        total += value;
    return total / 2;
}

double StallChart::xOf(int iteration) const
{
    const auto it = std::find(m_shown.begin(), m_shown.end(), iteration);
    return it == m_shown.end() ? -10.0 : static_cast<double>(it - m_shown.begin());
}

int StallChart::iterationOfX(double x) const
{
    const long position = std::lround(x);
    return position >= 0 && position < static_cast<long>(m_shown.size()) ? m_shown[static_cast<std::size_t>(position)]
                                                                         : 0;
}

std::pair<double, double> StallChart::xRange() const { return { -0.5, std::max<double>(0.5, m_shown.size() - 0.5) }; }

void StallChart::showIteration(const std::shared_ptr<const IterationFocus>& focus)
{
    // Slide the window when the selection leaves it.
    const int index = m_selection->current();
    if (index > 0 && xOf(index) < 0 && m_session && m_session->figuresOf(index)
        && valueOf(*m_session->figuresOf(index)))
        redraw();
    else
        IterationChart::showIteration(focus);
}

void StallChart::rebuild()
{
    clearSeries();
    m_categories.clear();
    m_shown.clear();
    for (const QString& label : m_axis->categoriesLabels())
        m_axis->remove(label);
    // Without bars there is nothing to read off the axes: a category axis without categories draws
    // its title in the chart's corner. The note says why the chart is empty.
    m_axis->setVisible(false);
    m_yAxis->setVisible(false);
    if (!m_session || m_session->figures.empty()) {
        m_yAxis->setRange(0, 1);
        setNote(m_session ? tr("Reading the iterations' figures…") : QString());
        return;
    }
    std::vector<int> profiled;
    int unprofiled = 0;
    for (const figures::IterationFigures& f : m_session->figures) {
        if (valueOf(f))
            profiled.push_back(f.index);
        else if (sizeOf(f))
            ++unprofiled;
    }
    if (profiled.empty()) {
        m_yAxis->setRange(0, 1);
        //: stall chart note when no iteration carries stall metrics
        setNote(tr("No stall profile: these iterations were profiled without warp stall metrics "
                   "(Session ▸ New Session with Metric set stalls or deep records them)"));
        return;
    }
    // The window: the selection in the middle where it can be.
    const int selected = m_selection->current();
    auto at = std::lower_bound(profiled.begin(), profiled.end(), selected);
    const long centre = at == profiled.end() ? static_cast<long>(profiled.size()) - 1 : at - profiled.begin();
    const long first = std::clamp(centre - kWindow / 2, 0L, std::max(0L, static_cast<long>(profiled.size()) - kWindow));
    const long end = std::min(static_cast<long>(profiled.size()), first + kWindow);
    m_shown.assign(profiled.begin() + first, profiled.begin() + end);

    // The reasons that matter most over the window get a bar set each.
    std::map<std::string, double> totals;
    for (int index : m_shown)
        for (const auto& [name, value] : sizeOf(*m_session->figuresOf(index))->stalls)
            totals[name] += value;
    std::vector<std::pair<std::string, double>> ranked(totals.begin(), totals.end());
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < ranked.size() && kept.size() < static_cast<std::size_t>(kReasons); ++i)
        kept.push_back(ranked[i].first);
    const bool other = ranked.size() > kept.size();

    auto* series = new QStackedBarSeries(this);
    series->setBarWidth(0.8);
    std::vector<QBarSet*> sets;
    for (const std::string& name : kept) {
        const StallReason* reason = stallReason(name);
        const QString label = reason ? toQString(reason->label) : toQString(name);
        sets.push_back(new QBarSet(label, this));
        m_categories.append(label);
    }
    if (other) {
        //: stall chart: the smaller stall reasons together
        sets.push_back(new QBarSet(tr("other reasons"), this));
        m_categories.append(sets.back()->label());
    }
    double high = 0;
    for (int index : m_shown) {
        const figures::SizeFigures* size = sizeOf(*m_session->figuresOf(index));
        double rest = 0, total = 0;
        std::map<std::string, double> values(size->stalls.begin(), size->stalls.end());
        for (std::size_t i = 0; i < kept.size(); ++i) {
            const double v = values.count(kept[i]) ? values[kept[i]] : 0.0;
            sets[i]->append(v);
            total += v;
        }
        for (const auto& [name, value] : values)
            if (std::find(kept.begin(), kept.end(), name) == kept.end())
                rest += value;
        if (other)
            sets.back()->append(rest);
        high = std::max(high, total + rest);
    }
    for (QBarSet* set : sets) {
        series->append(set);
        connect(set, &QBarSet::clicked, this, [this](int position) {
            if (const int index = iterationOfX(position); index > 0)
                m_selection->select(index);
        });
    }
    for (std::size_t p = 0; p < m_shown.size(); ++p) {
        // Label every bar when few, else every fourth: the axis stays readable.
        if (m_shown.size() <= 16 || p % 4 == 0)
            m_axis->append(QString::number(m_shown[p]), static_cast<double>(p));
    }
    m_axis->setVisible(true);
    m_yAxis->setVisible(true);
    setRoundTicks(m_yAxis, 0, high * 1.1);
    attach(series, m_yAxis);
    if (unprofiled > 0)
        //: stall chart note; %n iterations timed without stall metrics
        setNote(tr("%n timed iteration(s) have no stall profile and are not drawn", nullptr, unprofiled));
}

} // namespace kl::gui

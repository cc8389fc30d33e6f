#pragma once
// Latency per iteration at one main size: the median with its p20–p80 band, the baseline timed in
// the same job, the best so far as a step line, and failed iterations on a lane of their own above
// the plot, one series per failure category.
#include "widgets/iteration_chart.h"

#include <utility>
#include <vector>

class QAreaSeries;

namespace kl::gui {

class LatencyChart : public IterationChart {
    Q_OBJECT
public:
    explicit LatencyChart(IterationSelection* selection, QWidget* parent = nullptr);
    // The failure categories on the failed lane, in legend order.
    QStringList failedCategories() const { return m_failedCategories; }
    double failedLaneValue() const { return m_laneY; }
    // The baseline line's value: the median of the baseline's same-job timings at the size shown.
    std::optional<double> baselineValue() const { return m_baselineUs; }
    // How many times its series were created (a refresh that only adds points creates none).
    int seriesCreated() const { return m_created; }

protected:
    void rebuild() override;
    std::optional<double> valueOf(const figures::IterationFigures& figures) const override;
    QValueAxis* valueAxis() const override { return m_yAxis; }

private:
    // Creates the series anew (a new session, a new failure category, markers becoming a line).
    void createSeries(bool medianAsLine, const std::vector<std::string>& categories);

    QValueAxis* m_yAxis;
    // The series drawn, kept between refreshes: a live session's refresh moves their points only.
    QLineSeries* m_upper = nullptr;
    QLineSeries* m_lower = nullptr;
    QLineSeries* m_baseline = nullptr;
    QLineSeries* m_best = nullptr;
    QXYSeries* m_median = nullptr;
    bool m_medianAsLine = false;
    std::vector<std::pair<std::string, QAreaSeries*>> m_lanes; // failure category -> its lane
    int m_created = 0; // how many times the series were created, for tests
    QStringList m_failedCategories;
    double m_laneY = 0.0;
    std::optional<double> m_baselineUs;
};

} // namespace kl::gui

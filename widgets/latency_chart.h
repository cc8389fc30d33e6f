#pragma once
// Latency per iteration at one main size: the median with its p20–p80 band, the baseline timed in
// the same job, the best so far as a step line, and failed iterations on a lane of their own above
// the plot, one series per failure category.
#include "widgets/iteration_chart.h"

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

protected:
    void rebuild() override;
    std::optional<double> valueOf(const figures::IterationFigures& figures) const override;
    QValueAxis* valueAxis() const override { return m_yAxis; }

private:
    QValueAxis* m_yAxis;
    QStringList m_failedCategories;
    double m_laneY = 0.0;
    std::optional<double> m_baselineUs;
};

} // namespace kl::gui

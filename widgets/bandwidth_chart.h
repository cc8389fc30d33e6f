#pragma once
// Achieved bandwidth per iteration as % of a same-size device copy (the memory-bound ceiling the
// runner measures in the same job), at one main size, with the 100 % line.
#include "widgets/iteration_chart.h"

namespace kl::gui {

class BandwidthChart : public IterationChart {
    Q_OBJECT
public:
    explicit BandwidthChart(IterationSelection* selection, QWidget* parent = nullptr);

protected:
    void rebuild() override;
    std::optional<double> valueOf(const figures::IterationFigures& figures) const override;
    QValueAxis* valueAxis() const override { return m_yAxis; }

private:
    QValueAxis* m_yAxis;
};

} // namespace kl::gui

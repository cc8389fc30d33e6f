#pragma once
// Registers per thread and occupancy per iteration: the main kernel's static registers (left
// axis) and its theoretical and achieved occupancy (right axis, %).
#include "widgets/iteration_chart.h"

namespace kl::gui {

class ResourcesChart : public IterationChart {
    Q_OBJECT
public:
    explicit ResourcesChart(IterationSelection* selection, QWidget* parent = nullptr);

protected:
    void rebuild() override;
    std::optional<double> valueOf(const figures::IterationFigures& figures) const override;
    QValueAxis* valueAxis() const override { return m_registers; }

private:
    QValueAxis* m_registers;
    QValueAxis* m_occupancy;
};

} // namespace kl::gui

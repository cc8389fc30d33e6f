#pragma once
// Warp stall reasons per iteration as stacked bars (cycles per issued instruction, Nsight
// Compute's "Warp State Statistics"), at one main size, for a window of iterations around the
// selection. Iterations profiled without stall metrics are named, not drawn as zero.
#include "widgets/iteration_chart.h"

#include <vector>

class QCategoryAxis;

namespace kl::gui {

class StallChart : public IterationChart {
    Q_OBJECT
public:
    explicit StallChart(IterationSelection* selection, QWidget* parent = nullptr);

    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

    // The stall reasons drawn (their Nsight Compute labels), in stacking order.
    QStringList categories() const { return m_categories; }
    const std::vector<int>& shownIterations() const { return m_shown; }

protected:
    void rebuild() override;
    std::optional<double> valueOf(const figures::IterationFigures& figures) const override;
    QValueAxis* valueAxis() const override { return m_yAxis; }
    double xOf(int iteration) const override;
    int iterationOfX(double x) const override;
    std::pair<double, double> xRange() const override;

private:
    QCategoryAxis* m_axis;
    QValueAxis* m_yAxis;
    QStringList m_categories;
    std::vector<int> m_shown; // iteration indices, one bar each
};

} // namespace kl::gui

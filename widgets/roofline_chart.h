#pragma once
// The selected iteration on a roofline (issue 11): arithmetic intensity (FLOP/byte, the problem's
// expressions) against achieved TFLOP/s, one point per timed main size, under two memory roofs (the
// same-size copy timed in the same job, and the device's 2 GiB copy) that meet the device's FP32
// peak. Log axes, as rooflines are read. Follows the selection; draws nothing for an untimed one.
#include "core/figures/roofline.h"
#include "widgets/iteration_selection.h"

#include <QtCharts/QChartView>

class QLogValueAxis;

namespace kl::gui {

class RooflineChart : public QChartView, public IterationViewer {
    Q_OBJECT
public:
    explicit RooflineChart(IterationSelection* selection, QWidget* parent = nullptr);

    void showSession(const std::shared_ptr<const SessionView>& session) override;
    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

    const figures::Roofline& roofline() const { return m_roofline; }
    QString note() const { return m_note; }
    // The names of the drawn series, in drawing order (for tests and the legend).
    QStringList seriesNames() const;

private:
    void rebuild();

    QLogValueAxis* m_x;
    QLogValueAxis* m_y;
    figures::Roofline m_roofline;
    QString m_note;
    int m_index = 0;
};

} // namespace kl::gui

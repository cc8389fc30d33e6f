#pragma once
// The occupancy chart with its two choices: which launch (kernel at a size) and which resource
// varies along the x axis.
#include "widgets/occupancy_chart.h"

#include <QWidget>

#include <vector>

class QComboBox;

namespace kl::gui {

class OccupancyPanel : public QWidget {
    Q_OBJECT
public:
    explicit OccupancyPanel(QWidget* parent = nullptr);

    void setKernels(const DeviceLimits& device, std::vector<OccupancyChart::KernelShape> kernels);
    void clear(const QString& reason = {});
    OccupancyChart* chart() const { return m_chart; }
    QComboBox* kernelChooser() const { return m_kernel; }
    QComboBox* variationChooser() const { return m_variation; }

private:
    void showSelected();

    DeviceLimits m_device;
    std::vector<OccupancyChart::KernelShape> m_kernels;
    QComboBox* m_kernel;
    QComboBox* m_variation;
    OccupancyChart* m_chart;
};

} // namespace kl::gui

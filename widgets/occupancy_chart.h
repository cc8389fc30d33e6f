#pragma once
// Theoretical occupancy of one kernel as one of its resources varies, with the kernel's own point
// marked — the three "impact of varying ..." graphs of NVIDIA's occupancy calculator. It answers
// "how many registers may I spend before I lose a block per SM?" without a GPU.
#include "core/compile/occupancy.h"

#include <QChartView>
#include <QPointF>

class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace kl::gui {

class OccupancyChart : public QChartView {
    Q_OBJECT
public:
    enum class Variation { Registers, BlockSize, SharedMemory };

    // What occupancy depends on for one launch of one kernel.
    struct KernelShape {
        QString kernel;
        int threadsPerBlock = 0;
        int registers = 0;
        std::int64_t sharedBytes = 0; // static + dynamic, per block
        int barriers = 1;
    };

    explicit OccupancyChart(QWidget* parent = nullptr);

    void setKernel(const DeviceLimits& device, const KernelShape& shape);
    // No kernel to show; `reason` becomes the title (a default one when empty).
    void clear(const QString& reason = {});
    void setVariation(Variation variation);
    Variation variation() const { return m_variation; }

    bool hasKernel() const { return m_hasKernel; }
    int curvePointCount() const;
    QPointF currentPoint() const; // x in the variation's unit, y in percent

private:
    void rebuild();
    double occupancyPercent(int threads, int registers, std::int64_t sharedBytes) const; // 0 when it cannot run

    DeviceLimits m_device;
    KernelShape m_shape;
    bool m_hasKernel = false;
    QString m_emptyReason;
    Variation m_variation = Variation::Registers;
    QLineSeries* m_curve;
    QScatterSeries* m_current;
    QValueAxis* m_axisX;
    QValueAxis* m_axisY;
};

} // namespace kl::gui

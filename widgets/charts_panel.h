#pragma once
// The per-iteration charts side by side in tabs, one main size at a time (a size chooser for
// multi-size problems), each exportable as PNG or SVG and copyable with its evidence.
#include "widgets/iteration_selection.h"

#include <QWidget>

class QComboBox;
class QTabWidget;

namespace kl::gui {

class BandwidthChart;
class IterationChart;
class LatencyChart;
class ResourcesChart;
class StallChart;

class ChartsPanel : public QWidget, public IterationViewer {
    Q_OBJECT
public:
    explicit ChartsPanel(IterationSelection* selection, QWidget* parent = nullptr);

    void showSession(const std::shared_ptr<const SessionView>& session) override;
    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

    IterationChart* currentChart() const;
    // Each chart, caught up with the selection when read (a hidden one waits for its show otherwise).
    LatencyChart* latency() const;
    BandwidthChart* bandwidth() const;
    StallChart* stalls() const;
    ResourcesChart* resources() const;
    QTabWidget* tabs() const { return m_tabs; }
    QComboBox* sizeBox() const { return m_sizes; }

    void chooseSize(const QString& size);
    // The shown chart and a text of the selected iteration's figures, for the clipboard.
    void copyFigure() const;
    QString figureEvidence() const;

private:
    void exportCurrent(bool svg);

    IterationSelection* m_selection;
    QTabWidget* m_tabs;
    QComboBox* m_sizes;
    LatencyChart* m_latency;
    BandwidthChart* m_bandwidth;
    StallChart* m_stalls;
    ResourcesChart* m_resources;
    QList<QWidget*> m_actions;
};

} // namespace kl::gui

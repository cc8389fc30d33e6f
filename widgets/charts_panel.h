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

    // Writes the shown chart to `path` (.svg: SVG, else PNG) at IterationChart::kExportSize with
    // exportTitle() over it; empty on success, else why not.
    QString exportChart(const QString& path);
    // "layernorm_gelu · session 1 · Latency at 8192x4096": what an exported chart shows.
    QString exportTitle() const;

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

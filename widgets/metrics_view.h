#pragma once
// The Metrics page: MetricsModel's table with its column policy. Every column is as wide as what it
// holds; the Size column shows only for a session of several sizes; a pinned baseline's column
// shows its whole title ("Baseline: layernorm_gelu-llm-replay-h200 #4") where the pane has the room
// and is cut to a short one (whole in the tooltip) where it has not, never narrower than its values;
// the last column fills the rest.
#include <QTableView>

namespace kl::gui {

class MetricsModel;

class MetricsView : public QTableView {
    Q_OBJECT
public:
    explicit MetricsView(MetricsModel* model, QWidget* parent = nullptr);

protected:
    void updateGeometries() override;

private:
    void fitBaseline();

    MetricsModel* m_model;
    bool m_fitting = false;
};

} // namespace kl::gui

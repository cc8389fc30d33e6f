#pragma once
// The selected iteration's CUPTI metrics in Nsight Compute's sections with readable labels and
// units (core/findings/metric_sections.h), the baseline's value beside each, and how each moved
// against the compared iteration (its parent) and against the baseline, coloured by whether the
// move is good for a kernel's speed.
#include "widgets/iteration_selection.h"

#include <QAbstractTableModel>

#include <optional>
#include <vector>

namespace kl::gui {

class MetricsModel : public QAbstractTableModel, public IterationViewer {
    Q_OBJECT
public:
    enum Column {
        SectionColumn,
        SizeColumn,
        MetricColumn,
        ValueColumn,
        BaselineColumn,
        VsBaselineColumn,
        VsParentColumn,
        ColumnCount
    };
    enum Role { RawValueRole = Qt::UserRole + 1, MetricNameRole };

    explicit MetricsModel(QObject* parent = nullptr);

    void showSession(const std::shared_ptr<const SessionView>& session) override;
    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

    int rowOfMetric(const QString& size, const QString& metric) const; // -1 when absent
    // How many problem sizes the rows cover: with one, the view hides the Size column.
    int sizeCount() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString kernel;
        QString size;
        QString metric;
        QString section;
        QString label;
        QString guidance;
        int sectionRank = 0;
        int order = 0;
        double value = 0.0;
        std::optional<double> parent;
        std::optional<double> baseline;
    };
    std::vector<Row> m_rows;
    QString m_pinnedBaseline;
};

// The unit of a metric from its Nsight Compute name ("%", "byte/s", "ns", ...).
QString metricUnit(const QString& metric);
// +1 when a larger value is better for speed, -1 when smaller is, 0 when it depends.
int metricDirection(const QString& metric);

} // namespace kl::gui

#pragma once
// The static report as a table: one row per launch at each main size, with what ptxas said about
// the kernel (registers, shared memory, stack, spills, barriers) and what that means on the
// device (blocks per SM, theoretical occupancy and its limiter, waves). Spills, stack frames and
// low occupancy are highlighted, because they are what an engineer acts on.
#include "core/compile/static_report.h"
#include "widgets/occupancy_chart.h"

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace kl::gui {

class StaticReportModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        KernelColumn,
        SizeColumn,
        RegistersColumn,
        StaticSharedColumn,
        DynamicSharedColumn,
        StackFrameColumn,
        SpillStoresColumn,
        SpillLoadsColumn,
        BarriersColumn,
        ThreadsColumn,
        GridColumn,
        BlocksPerSmColumn,
        OccupancyColumn,
        LimiterColumn,
        WavesColumn,
        ColumnCount
    };
    // The unformatted value of a cell (a number where the column is numeric), for sorting and tests.
    static constexpr int RawValueRole = Qt::UserRole + 1;
    // True when the cell is highlighted as something to look at.
    static constexpr int WarningRole = Qt::UserRole + 2;

    explicit StaticReportModel(QObject* parent = nullptr);

    void setReport(std::shared_ptr<const StaticReport> report);
    void clear();
    const std::shared_ptr<const StaticReport>& report() const { return m_report; }

    // One entry per row, for the occupancy chart.
    std::vector<OccupancyChart::KernelShape> kernelShapes() const;
    // One line about the first launch (or what is wrong), for the status bar.
    QString summary() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant display(const StaticReport::PerLaunch& launch, int column) const;
    QVariant raw(const StaticReport::PerLaunch& launch, int column) const;
    QVariant toolTip(const StaticReport::PerLaunch& launch, int column) const;
    // 0: fine, 1: worth a look (warning), 2: bad (critical), as core/report/static_severity.h says.
    int severity(const StaticReport::PerLaunch& launch, int column) const;

    std::shared_ptr<const StaticReport> m_report;
};

} // namespace kl::gui

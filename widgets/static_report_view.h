#pragma once
// Shows a StaticReportModel transposed, the way Nsight Compute lists launch statistics: one row
// per metric, one column per launch (kernel at a size). A report has few launches and many
// metrics, so this reads well in a side pane where fifteen columns would not fit.
#include <QTableView>

class QTransposeProxyModel;

namespace kl::gui {

class StaticReportModel;

class StaticReportView : public QTableView {
    Q_OBJECT
public:
    explicit StaticReportView(QWidget* parent = nullptr);

    void setReportModel(StaticReportModel* model);
    StaticReportModel* reportModel() const { return m_report; }
    // The view's index for a report cell (row = launch, column = StaticReportModel::Column).
    QModelIndex viewIndex(int launch, int column) const;
    // Height that shows every metric row without scrolling.
    int naturalHeight() const;

private:
    void hideRedundantRows();

    StaticReportModel* m_report = nullptr;
    QTransposeProxyModel* m_transpose;
};

} // namespace kl::gui

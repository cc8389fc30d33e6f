#include "widgets/metrics_view.h"

#include "widgets/metrics_model.h"

#include <QHeaderView>

#include <algorithm>

namespace kl::gui {

MetricsView::MetricsView(MetricsModel* model, QWidget* parent)
    : QTableView(parent)
    , m_model(model)
{
    setModel(model);
    verticalHeader()->hide();
    setAlternatingRowColors(true);
    setWordWrap(false);
    QHeaderView* header = horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->setStretchLastSection(true);
    // Sized here (fitBaseline): sized to its title, a long pinned name put the deltas past a 1366-px
    // window's edge.
    header->setSectionResizeMode(MetricsModel::BaselineColumn, QHeaderView::Interactive);
    // One size (most problems): the column repeats it on every row and costs a laptop's width.
    connect(model, &QAbstractItemModel::modelReset, this, [this] {
        setColumnHidden(MetricsModel::SizeColumn, m_model->sizeCount() <= 1);
        fitBaseline();
    });
    connect(model, &QAbstractItemModel::headerDataChanged, this, &MetricsView::fitBaseline);
}

void MetricsView::updateGeometries()
{
    QTableView::updateGeometries();
    fitBaseline(); // the pane's width changed, or the columns around the baseline's did
}

void MetricsView::fitBaseline()
{
    if (m_fitting)
        return;
    m_fitting = true;
    QHeaderView* header = horizontalHeader();
    constexpr int baseline = MetricsModel::BaselineColumn;
    const int values = sizeHintForColumn(baseline);
    const int whole = header->sectionSizeHint(baseline);
    const int cut = header->fontMetrics().horizontalAdvance(QStringLiteral("Baseline: iteration 00")) + 16;
    // What the other columns need, the stretched last one at its contents rather than its stretch.
    int others = 0;
    for (int column = 0; column < m_model->columnCount(); ++column)
        if (column != baseline && !isColumnHidden(column))
            others += std::max(sizeHintForColumn(column), header->sectionSizeHint(column));
    const int room = viewport()->width() - others;
    const int width = std::max(values, std::min(whole, std::max(cut, room)));
    if (header->sectionSize(baseline) != width)
        header->resizeSection(baseline, width);
    m_fitting = false;
}

} // namespace kl::gui

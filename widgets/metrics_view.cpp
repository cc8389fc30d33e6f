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
    // Sized here (fitBaseline): sized to its title, a long pinned name put the deltas past a 1366-px
    // window's edge; the last column fills what is left (a stretched one kept 100 px past its contents).
    header->setSectionResizeMode(MetricsModel::BaselineColumn, QHeaderView::Interactive);
    header->setSectionResizeMode(MetricsModel::VsParentColumn, QHeaderView::Interactive);
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
    constexpr int last = MetricsModel::VsParentColumn;
    const auto need
        = [this, header](int column) { return std::max(sizeHintForColumn(column), header->sectionSizeHint(column)); };
    const int values = sizeHintForColumn(baseline);
    const int whole = header->sectionSizeHint(baseline);
    const int cut = header->fontMetrics().horizontalAdvance(QStringLiteral("Baseline: iteration 00")) + 16;
    int others = 0; // the columns sized to their contents
    for (int column = 0; column < m_model->columnCount(); ++column)
        if (column != baseline && column != last && !isColumnHidden(column))
            others += need(column);
    const int room = viewport()->width() - 1; // a pixel spare: exactly full scrolled by 1
    const int width = std::max(values, std::min(whole, std::max(cut, room - others - need(last))));
    if (header->sectionSize(baseline) != width)
        header->resizeSection(baseline, width);
    // The last column fills the rest, as a stretched one would, but never below its contents.
    const int fill = std::max(need(last), room - others - width);
    if (header->sectionSize(last) != fill)
        header->resizeSection(last, fill);
    m_fitting = false;
}

} // namespace kl::gui

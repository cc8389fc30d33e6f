#include "widgets/static_report_view.h"

#include "widgets/static_report_model.h"

#include <QHeaderView>
#include <QScrollBar>
#include <QTransposeProxyModel>

#include <algorithm>

namespace kl::gui {

StaticReportView::StaticReportView(QWidget* parent)
    : QTableView(parent)
    , m_transpose(new QTransposeProxyModel(this))
{
    setAlternatingRowColors(true);
    setSelectionMode(QAbstractItemView::NoSelection);
    setWordWrap(false);
    setCornerButtonEnabled(false);
    setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    verticalHeader()->setDefaultAlignment(Qt::AlignRight | Qt::AlignVCenter);
    horizontalHeader()->setHighlightSections(false);
    horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    horizontalHeader()->setDefaultSectionSize(200);
    horizontalHeader()->setStretchLastSection(false);
}

void StaticReportView::setReportModel(StaticReportModel* model)
{
    m_report = model;
    m_transpose->setSourceModel(model);
    setModel(m_transpose);
    connect(model, &QAbstractItemModel::modelReset, this, &StaticReportView::hideRedundantRows);
    hideRedundantRows();
    // A few metrics at least; the rest scroll on a short screen (a 1366x768 laptop), and the window's
    // splitters give the view its natural height where there is room.
    const int header = std::max(horizontalHeader()->sizeHint().height(), fontMetrics().height() + 8);
    setMinimumHeight(std::min(naturalHeight(), header + 4 * verticalHeader()->defaultSectionSize() + 2 * frameWidth()));
}

QModelIndex StaticReportView::viewIndex(int launch, int column) const
{
    return m_report ? m_transpose->mapFromSource(m_report->index(launch, column)) : QModelIndex();
}

int StaticReportView::naturalHeight() const
{
    int rows = 0;
    for (int row = 0; row < StaticReportModel::ColumnCount; ++row)
        rows += isRowHidden(row) ? 0 : verticalHeader()->defaultSectionSize();
    const int header = std::max(horizontalHeader()->sizeHint().height(), fontMetrics().height() + 8);
    // Room for a horizontal scroll bar too, which appears when launches outgrow the width.
    return rows + header + horizontalScrollBar()->sizeHint().height() + 2 * frameWidth() + 2;
}

void StaticReportView::hideRedundantRows()
{
    // Kernel and size are already in each column's header.
    setRowHidden(StaticReportModel::KernelColumn, true);
    setRowHidden(StaticReportModel::SizeColumn, true);
}

} // namespace kl::gui

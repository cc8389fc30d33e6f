#include "widgets/history_panel.h"

#include "widgets/iteration_table_model.h"
#include "widgets/proposal_tree_model.h"

#include <QHeaderView>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>

namespace kl::gui {

namespace {

// The top finding reads whole up to ~60 characters; a longer one is cut there rather than pushing
// the columns after it out of reach (its tooltip holds it whole).
int findingWidth(const QAbstractItemView* view) { return 60 * view->fontMetrics().averageCharWidth(); }

} // namespace

HistoryPanel::HistoryPanel(IterationSelection* selection, QWidget* parent)
    : QWidget(parent)
    , m_selection(selection)
    , m_tableModel(new IterationTableModel(this))
    , m_sorted(new QSortFilterProxyModel(this))
    , m_treeModel(new ProposalTreeModel(this))
    , m_tabs(new QTabWidget(this))
    , m_table(new QTableView(this))
    , m_tree(new QTreeView(this))
{
    m_sorted->setSourceModel(m_tableModel);
    m_sorted->setSortRole(IterationTableModel::SortRole);
    m_table->setModel(m_sorted);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(IterationTableModel::IterationColumn, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setWordWrap(false);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->setIconSize(QSize(14, 14));
    // Where an iteration ran reads the same on most rows ('local:0 · NVIDIA H200'): shown last, so in a
    // narrow pane it does not push the top finding out of sight (the status bar names the GPU too).
    m_table->horizontalHeader()->moveSection(IterationTableModel::GpuColumn, IterationTableModel::ColumnCount - 1);

    m_tree->setModel(m_treeModel);
    m_tree->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_tree->setSelectionMode(QAbstractItemView::SingleSelection);
    m_tree->setUniformRowHeights(true);
    m_tree->setIconSize(QSize(14, 14));
    // Every column sized to what it holds, the top finding included: stretching the last section
    // would now widen GPU and leave the finding at the default width, cut after a word.
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->moveSection(IterationTableModel::GpuColumn, IterationTableModel::ColumnCount - 1);

    m_tabs->setDocumentMode(true);
    //: history tab: the iterations in order
    m_tabs->addTab(m_table, tr("Iterations"));
    //: history tab: proposals arranged by the candidate each was derived from
    m_tabs->addTab(m_tree, tr("Proposal tree"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tabs);

    // New nodes of a live session show under open parents, as expandAll() left the others.
    connect(m_treeModel, &QAbstractItemModel::rowsInserted, this, [this](const QModelIndex& under) {
        if (under.isValid())
            m_tree->expand(under);
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        [this](const QModelIndex& current) { chooseFrom(current); });
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        [this](const QModelIndex& current) { chooseFrom(current); });
    follow(selection, this, this);
}

void HistoryPanel::chooseFrom(const QModelIndex& index)
{
    if (m_following || !index.isValid())
        return;
    m_selection->select(index.data(IterationTableModel::IterationRole).toInt());
}

void HistoryPanel::showSession(const std::shared_ptr<const SessionView>& session)
{
    const std::size_t shownRows = m_shownRows;
    m_shownSession = session ? session->session.id : 0;
    m_shownRows = session ? session->rows.size() : 0;
    m_following = true;
    const bool tableKept = m_tableModel->setSession(session);
    const bool treeKept = m_treeModel->setSession(session);
    m_following = false;
    if (!session)
        return;
    showFigureColumns(*session, tableKept && treeKept);
    if (!tableKept || !treeKept) {
        m_tree->expandAll();
        for (int column = 0; column < IterationTableModel::ColumnCount; ++column) {
            m_table->resizeColumnToContents(column);
            m_tree->resizeColumnToContents(column);
        }
        const int finding = findingWidth(m_table);
        m_table->setColumnWidth(IterationTableModel::FindingColumn,
            std::min(finding, m_table->columnWidth(IterationTableModel::FindingColumn)));
        m_tree->setColumnWidth(IterationTableModel::FindingColumn,
            std::min(finding, m_tree->columnWidth(IterationTableModel::FindingColumn)));
        return;
    }
    // A live refresh: the columns only widen, to what the new rows need (measuring every row of
    // both views each refresh was most of this panel's cost).
    for (std::size_t row = shownRows; row < m_shownRows; ++row) {
        const int iteration = session->rows[row].index;
        const QModelIndex node = m_treeModel->indexOf(iteration);
        int depth = m_tree->rootIsDecorated() ? 1 : 0;
        for (QModelIndex up = node.parent(); up.isValid(); up = up.parent())
            ++depth;
        for (int column = 0; column < IterationTableModel::ColumnCount; ++column) {
            const int most = column == IterationTableModel::FindingColumn ? findingWidth(m_table) : INT_MAX;
            const QModelIndex cell = m_sorted->mapFromSource(m_tableModel->index(static_cast<int>(row), column));
            const int wide = std::min(most, m_table->sizeHintForIndex(cell).width() + (m_table->showGrid() ? 1 : 0));
            if (wide > m_table->columnWidth(column))
                m_table->setColumnWidth(column, wide);
            const int deep = std::min(most,
                m_tree->sizeHintForIndex(node.siblingAtColumn(column)).width()
                    + (column == 0 ? depth * m_tree->indentation() : 0));
            if (deep > m_tree->columnWidth(column))
                m_tree->setColumnWidth(column, deep);
        }
    }
}

// "vs eager" and "vs torch.compile" only for a session timed against PyTorch; "GPU" only when its
// results say who measured them. The figures arrive after the rows: a column that appears then is
// sized once to what it holds.
void HistoryPanel::showFigureColumns(const SessionView& session, bool kept)
{
    const bool contenders = figures::hasContenders(session.figures);
    const bool measuredOn = figures::hasMeasuredOn(session.figures);
    for (const auto& [column, shown] : { std::pair { int(IterationTableModel::VsEagerColumn), contenders },
             std::pair { int(IterationTableModel::VsCompileColumn), contenders },
             std::pair { int(IterationTableModel::GpuColumn), measuredOn } }) {
        const bool appears = kept && shown && m_table->isColumnHidden(column);
        m_table->setColumnHidden(column, !shown);
        m_tree->setColumnHidden(column, !shown);
        if (appears) {
            m_table->resizeColumnToContents(column);
            m_tree->resizeColumnToContents(column);
        }
    }
}

void HistoryPanel::showIteration(const std::shared_ptr<const IterationFocus>& focus)
{
    m_following = true;
    if (!focus) {
        m_table->clearSelection();
        m_tree->clearSelection();
    } else {
        const int row = m_tableModel->rowOf(focus->index());
        if (row >= 0) {
            const QModelIndex index = m_sorted->mapFromSource(m_tableModel->index(row, 0));
            m_table->selectionModel()->setCurrentIndex(
                index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            m_table->scrollTo(index);
        }
        const QModelIndex node = m_treeModel->indexOf(focus->index());
        if (node.isValid()) {
            m_tree->selectionModel()->setCurrentIndex(
                node, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            m_tree->scrollTo(node);
        }
    }
    m_following = false;
}

} // namespace kl::gui

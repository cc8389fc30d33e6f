#include "widgets/history_panel.h"

#include "widgets/hypothesis_log_model.h"
#include "widgets/iteration_table_model.h"
#include "widgets/proposal_tree_model.h"
#include "widgets/string_conversion.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QStyle>
#include <QStyleOptionHeader>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>

namespace kl::gui {

namespace {

using C = IterationTableModel::Column;

// The widest a column is sized to: the top finding reads whole up to ~60 characters and where an
// iteration ran up to ~26; a longer one is cut there rather than pushing the columns after it out
// of reach (the tooltips hold both whole).
int widest(const QAbstractItemView* view, int column)
{
    const int characters = column == C::FindingColumn ? 60 : column == C::GpuColumn ? 26 : 0;
    return characters > 0 ? characters * view->fontMetrics().averageCharWidth() : INT_MAX;
}

// What a column's title needs: its text and margins, and room for the sort arrow in the sorted
// section only. The header's own hint keeps that room in every section once sorting is on (~25 px
// each), which in a narrow pane pushed the last columns out of sight.
int titleWidth(const QHeaderView* header, int column)
{
    if (header->isSortIndicatorShown() && header->sortIndicatorSection() == column)
        return header->sectionSizeHint(column);
    // As QHeaderView measures a section, less the arrow: in bold, as a title over selected cells is drawn.
    QStyleOptionHeader option;
    option.initFrom(header);
    option.section = column;
    option.text = header->model()->headerData(column, Qt::Horizontal).toString();
    QFont bold = header->font();
    bold.setBold(true);
    option.fontMetrics = QFontMetrics(bold);
    return header->style()->sizeFromContents(QStyle::CT_HeaderSection, &option, QSize(), header).width();
}

// A column as wide as its title and the cells it shows, up to widest().
int fittedWidth(const QAbstractItemView* view, const QHeaderView* header, int column)
{
    return std::min(widest(view, column), std::max(view->sizeHintForColumn(column), titleWidth(header, column)));
}

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
    , m_hypothesisModel(new HypothesisLogModel(this))
    , m_hypotheses(new QTableView(this))
    , m_note(new QLabel(this))
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
    // The short columns first, the top finding (the one long text) last: where an iteration ran
    // ('local:0 · NVIDIA H200') follows the decision, so a narrow pane still shows it and the finding
    // takes what is left.
    m_table->horizontalHeader()->moveSection(C::GpuColumn, C::DecisionColumn);
    m_table->viewport()->installEventFilter(this);
    connect(m_table->horizontalHeader(), &QHeaderView::sortIndicatorChanged, this, [this](int column) {
        // The sorted title now needs room for its arrow.
        QHeaderView* header = m_table->horizontalHeader();
        if (!m_table->isColumnHidden(column) && column != C::FindingColumn)
            header->resizeSection(column, std::max(header->sectionSize(column), titleWidth(header, column)));
        fillWithFinding(m_table);
    });

    m_tree->setModel(m_treeModel);
    m_tree->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_tree->setSelectionMode(QAbstractItemView::SingleSelection);
    m_tree->setUniformRowHeights(true);
    m_tree->setIconSize(QSize(14, 14));
    // As the table: the finding last, filled by fillWithFinding() rather than a stretched last section
    // (stretched, it shrinks to a few pixels once the other columns are wider than the pane).
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->moveSection(C::GpuColumn, C::DecisionColumn);
    m_tree->viewport()->installEventFilter(this);

    m_hypotheses->setModel(m_hypothesisModel);
    m_hypotheses->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_hypotheses->setSelectionMode(QAbstractItemView::SingleSelection);
    m_hypotheses->setWordWrap(false);
    m_hypotheses->verticalHeader()->hide();
    m_hypotheses->verticalHeader()->setDefaultSectionSize(m_hypotheses->fontMetrics().height() + 6);
    m_hypotheses->horizontalHeader()->setStretchLastSection(true);

    m_tabs->setDocumentMode(true);
    //: history tab: the iterations in order
    m_tabs->addTab(m_table, tr("Iterations"));
    //: history tab: proposals arranged by the candidate each was derived from
    m_tabs->addTab(m_tree, tr("Proposal tree"));
    //: history tab: what each proposer expected against what was measured
    m_tabs->addTab(m_hypotheses, tr("Hypotheses"));
    m_note->setWordWrap(true);
    m_note->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_note->setContentsMargins(4, 2, 4, 2);
    m_note->hide();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_note);
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
    connect(m_hypotheses->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        [this](const QModelIndex& current) {
            if (!m_following && current.isValid())
                m_selection->select(current.data(HypothesisLogModel::IterationRole).toInt());
        });
    follow(selection, this, this);
}

void HistoryPanel::chooseFrom(const QModelIndex& index)
{
    if (m_following || !index.isValid())
        return;
    m_selection->select(index.data(IterationTableModel::IterationRole).toInt());
}

// What `history` prints after its table, said above the panel's: the stop line once the loop wrote
// its summary, and the warning when two GPU models measured the results (from the figures, which may
// arrive after the rows).
void HistoryPanel::showNotes(const SessionView& session)
{
    QStringList lines;
    if (session.summary)
        lines << toQString(report::stopLine(*session.summary));
    if (const auto warning = report::mixedModelsWarning(report::gpuModelsOf(session.figures)); !warning.empty())
        lines << toQString(warning);
    m_note->setText(lines.join(QLatin1Char('\n')));
    m_note->setVisible(!lines.isEmpty());
    const bool fresh = m_hypothesisModel->rowCount() == 0;
    m_hypothesisModel->setEntries(report::hypothesisLog(session.rows, session.decisionReasons));
    if (fresh && m_hypothesisModel->rowCount() > 0) {
        // The short columns as wide as they read, the decision held to ~30 characters and the hypothesis
        // filling the rest (both whole in their tooltips), so that a 1366-px window shows every column.
        for (int column = 0; column < HypothesisLogModel::HypothesisColumn; ++column)
            m_hypotheses->resizeColumnToContents(column);
        const int measured = 30 * m_hypotheses->fontMetrics().averageCharWidth();
        if (m_hypotheses->columnWidth(HypothesisLogModel::MeasuredColumn) > measured)
            m_hypotheses->setColumnWidth(HypothesisLogModel::MeasuredColumn, measured);
    }
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
    if (!session) {
        m_note->hide();
        m_hypothesisModel->setEntries({});
        return;
    }
    m_following = true; // a reset of the log's rows is not the engineer's choice
    showNotes(*session);
    m_following = false;
    showFigureColumns(*session, tableKept && treeKept);
    if (!tableKept || !treeKept) {
        m_tree->expandAll();
        // Measured anew, every column shown; then the narrow pane's give way again.
        for (const auto& [column, width] : m_yieldedWidth)
            if (column != C::GpuColumn || m_gpuWanted) {
                m_table->setColumnHidden(column, false);
                m_tree->setColumnHidden(column, false);
            }
        m_yieldedWidth.clear();
        fitColumns(m_table);
        fitColumns(m_tree);
        fitNarrowColumns();
        fillWithFinding(m_table);
        fillWithFinding(m_tree);
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
        for (int column = 0; column < C::ColumnCount; ++column) {
            const QModelIndex cell = m_sorted->mapFromSource(m_tableModel->index(static_cast<int>(row), column));
            widen(m_table, column, m_table->sizeHintForIndex(cell).width() + (m_table->showGrid() ? 1 : 0));
            widen(m_tree, column,
                m_tree->sizeHintForIndex(node.siblingAtColumn(column)).width()
                    + (column == 0 ? depth * m_tree->indentation() : 0));
        }
    }
    fillWithFinding(m_table);
    fillWithFinding(m_tree);
}

QHeaderView* HistoryPanel::headerOf(const QAbstractItemView* view) const
{
    return view == m_table ? m_table->horizontalHeader() : m_tree->header();
}

void HistoryPanel::fitColumns(QAbstractItemView* view)
{
    QHeaderView* header = headerOf(view);
    for (int column = 0; column < C::ColumnCount; ++column) {
        if (header->isSectionHidden(column))
            continue;
        const int width = fittedWidth(view, header, column);
        if (column == C::FindingColumn)
            findingNeeds(view) = width;
        else
            header->resizeSection(column, width);
    }
    fillWithFinding(view);
}

void HistoryPanel::widen(QAbstractItemView* view, int column, int width)
{
    QHeaderView* header = headerOf(view);
    width = std::min(widest(view, column), width);
    if (column == C::FindingColumn)
        findingNeeds(view) = std::max(findingNeeds(view), width);
    else if (const auto yielded = m_yieldedWidth.find(column);
             view == m_table && yielded != m_yieldedWidth.end() && header->isSectionHidden(column))
        yielded->second = std::max(yielded->second, width); // for when it comes back
    else if (width > header->sectionSize(column))
        header->resizeSection(column, width);
}

int& HistoryPanel::findingNeeds(const QAbstractItemView* view)
{
    return view == m_table ? m_tableFindingWidth : m_treeFindingWidth;
}

// The top finding, the last column, takes what the pane has left after the others, cut with an
// ellipsis where it holds more (the tooltip has it whole), but never narrower than its title: below
// that the pane scrolls instead. A stretched last section would shrink to nothing.
void HistoryPanel::fillWithFinding(QAbstractItemView* view)
{
    QHeaderView* header = headerOf(view);
    if (header->isSectionHidden(C::FindingColumn))
        return;
    const int others = header->length() - header->sectionSize(C::FindingColumn);
    const int left = view->viewport()->width() - others - 1; // a pixel spare: exactly full scrolled by 1
    // Down to its title (a 1366-px window: the other columns leave it ~80 px), never sideways scrolling.
    const int least = std::min(findingNeeds(view), titleWidth(header, C::FindingColumn));
    const int width = std::max(least, left);
    if (width != header->sectionSize(C::FindingColumn))
        header->resizeSection(C::FindingColumn, width);
}

int HistoryPanel::neededWidth() const
{
    const QHeaderView* header = m_table->horizontalHeader();
    int others = header->length() - header->sectionSize(C::FindingColumn);
    for (const auto& [column, width] : m_yieldedWidth)
        if (header->isSectionHidden(column))
            others += width;
    const int finding = header->isSectionHidden(C::FindingColumn) ? 0 : titleWidth(header, C::FindingColumn);
    return others + finding + 2 * m_table->frameWidth() + m_table->verticalScrollBar()->sizeHint().width() + 2;
}

bool HistoryPanel::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::Resize) {
        if (watched == m_table->viewport()) {
            fitNarrowColumns();
            fillWithFinding(m_table);
            fillWithFinding(m_tree);
        } else if (watched == m_tree->viewport())
            fillWithFinding(m_tree);
    }
    return QWidget::eventFilter(watched, event);
}

// "vs eager" and "vs torch.compile" only for a session timed against PyTorch; "GPU" only when its
// results say who measured them (and, when it is one GPU for all, there is room: fitNarrowColumns); "% SOL"
// only when they carry speed of light (older files do not). The figures arrive after the rows: a
// column that appears then is sized once to what it holds.
void HistoryPanel::showFigureColumns(const SessionView& session, bool kept)
{
    const bool contenders = figures::hasContenders(session.figures);
    const bool measuredOn = figures::hasMeasuredOn(session.figures);
    const bool sol
        = std::any_of(session.figures.begin(), session.figures.end(), [](const figures::IterationFigures& f) {
              return std::any_of(f.sizes.begin(), f.sizes.end(), [](const auto& s) { return s.pctOfSol.has_value(); });
          });
    for (const auto& [column, shown] :
        { std::pair { int(C::VsEagerColumn), contenders }, std::pair { int(C::VsCompileColumn), contenders },
            std::pair { int(C::GpuColumn), measuredOn }, std::pair { int(C::SolColumn), sol } }) {
        const bool appears = kept && shown && m_table->isColumnHidden(column);
        m_table->setColumnHidden(column, !shown);
        m_tree->setColumnHidden(column, !shown);
        if (appears) {
            headerOf(m_table)->resizeSection(column, fittedWidth(m_table, headerOf(m_table), column));
            headerOf(m_tree)->resizeSection(column, fittedWidth(m_tree, headerOf(m_tree), column));
        }
    }
    m_gpuWanted = measuredOn;
    m_solShown = sol;
    if (!measuredOn)
        m_yieldedWidth.erase(C::GpuColumn); // hidden for want of data, not of room
    QString first;
    m_gpuSame = true;
    for (const figures::IterationFigures& f : session.figures)
        if (!f.endpoint.empty() || !f.gpuModel.empty()) {
            const QString text = measuredOnText(f);
            m_gpuSame = m_gpuSame && (first.isEmpty() || text == first);
            first = text;
        }
    if (kept) // a new session's columns are fitted first (showSession)
        fitNarrowColumns();
    fillWithFinding(m_table);
    fillWithFinding(m_tree);
}

// What gives way when the columns would not fit the pane (the KernelBench session scrolled sideways
// in a 1366-px window; the live review layout left the history ~545 px), first to last: the GPU where
// one runner and GPU measured every iteration (the session list's Device says it), then % of copy
// where % SOL shows (for a memory-bound kernel it is the same figure), then GB/s where % SOL or % of
// copy says how near the roof it came. Each comes back, last first, when there is room.
std::vector<int> HistoryPanel::narrowYields() const
{
    std::vector<int> columns;
    if (m_gpuWanted && m_gpuSame)
        columns.push_back(C::GpuColumn);
    if (m_solShown)
        columns.push_back(C::PctOfCopyColumn);
    columns.push_back(C::GbpsColumn);
    return columns;
}

void HistoryPanel::fitNarrowColumns()
{
    if (m_shownSession == 0)
        return;
    QHeaderView* header = headerOf(m_table);
    const std::vector<int> yields = narrowYields();
    // A column that may no longer give way (a second GPU measured a live session's newest) shows again.
    for (auto it = m_yieldedWidth.begin(); it != m_yieldedWidth.end();)
        if (std::find(yields.begin(), yields.end(), it->first) == yields.end()) {
            if (it->first != C::GpuColumn || m_gpuWanted) {
                m_table->setColumnHidden(it->first, false);
                m_tree->setColumnHidden(it->first, false);
                header->resizeSection(it->first, it->second);
            }
            it = m_yieldedWidth.erase(it);
        } else {
            ++it;
        }
    int kept = header->length() - header->sectionSize(C::FindingColumn);
    for (const int column : yields)
        if (!header->isSectionHidden(column)) {
            m_yieldedWidth[column] = header->sectionSize(column);
            kept -= header->sectionSize(column);
        } else if (!m_yieldedWidth.contains(column)) {
            m_yieldedWidth[column] = fittedWidth(m_table, header, column);
        }
    // From the last to give way back: each shows while it and those after it fit beside the finding's title.
    const int room = m_table->viewport()->width() - titleWidth(header, C::FindingColumn) - 1;
    bool fits = true;
    for (auto it = yields.rbegin(); it != yields.rend(); ++it) {
        const int column = *it;
        fits = fits && kept + m_yieldedWidth[column] <= room;
        if (fits)
            kept += m_yieldedWidth[column];
        if (header->isSectionHidden(column) == !fits)
            continue;
        m_table->setColumnHidden(column, !fits);
        m_tree->setColumnHidden(column, !fits);
        if (fits) {
            header->resizeSection(column, m_yieldedWidth[column]);
            headerOf(m_tree)->resizeSection(column, fittedWidth(m_tree, headerOf(m_tree), column));
        }
    }
    for (auto it = m_yieldedWidth.begin(); it != m_yieldedWidth.end();)
        it = header->isSectionHidden(it->first) ? std::next(it) : m_yieldedWidth.erase(it);
}

void HistoryPanel::showIteration(const std::shared_ptr<const IterationFocus>& focus)
{
    m_following = true;
    if (!focus) {
        m_table->clearSelection();
        m_tree->clearSelection();
        m_hypotheses->clearSelection();
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
        if (const int logged = m_hypothesisModel->rowOf(focus->index()); logged >= 0) {
            const QModelIndex entry = m_hypothesisModel->index(logged, 0);
            m_hypotheses->selectionModel()->setCurrentIndex(
                entry, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            m_hypotheses->scrollTo(entry);
        } else {
            m_hypotheses->clearSelection();
        }
    }
    m_following = false;
}

} // namespace kl::gui

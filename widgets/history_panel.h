#pragma once
// A session's iterations as a table (the `history` columns), as a proposal tree by parent and as the
// hypothesis log (predicted against measured). All follow the selection and select what the engineer
// clicks. The PyTorch columns show only for a session timed against PyTorch, the GPU column only when
// the results say who measured them. In a narrow pane the columns that repeat what another says give
// way, in order: one GPU for all, % of copy and GB/s where % SOL shows (fitNarrowColumns). Above them,
// as `history` prints below its table: how the session stopped (pass@k and speedup@k) and a warning
// when its results come from two GPU models.
#include "widgets/iteration_selection.h"

#include <QWidget>

#include <map>
#include <vector>

class QAbstractItemView;
class QHeaderView;
class QLabel;
class QSortFilterProxyModel;
class QTableView;
class QTabWidget;
class QTreeView;

namespace kl::gui {

class HypothesisLogModel;
class IterationTableModel;
class ProposalTreeModel;

class HistoryPanel : public QWidget, public IterationViewer {
    Q_OBJECT
public:
    explicit HistoryPanel(IterationSelection* selection, QWidget* parent = nullptr);

    void showSession(const std::shared_ptr<const SessionView>& session) override;
    void showIteration(const std::shared_ptr<const IterationFocus>& focus) override;

    IterationTableModel* tableModel() const { return m_tableModel; }
    ProposalTreeModel* treeModel() const { return m_treeModel; }
    QTableView* table() const { return m_table; }
    // The width the table needs to show every column without scrolling sideways (those that give way
    // in a narrow pane included), the top finding at its least (its title).
    int neededWidth() const;
    QTreeView* tree() const { return m_tree; }
    QTabWidget* tabs() const { return m_tabs; }
    HypothesisLogModel* hypothesisModel() const { return m_hypothesisModel; }
    QTableView* hypotheses() const { return m_hypotheses; }
    // The stop line and the mixed-GPU warning (hidden when the session has neither).
    QLabel* note() const { return m_note; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void chooseFrom(const QModelIndex& index);
    void showFigureColumns(const SessionView& session, bool kept);
    void showNotes(const SessionView& session);
    QHeaderView* headerOf(const QAbstractItemView* view) const;
    void fitColumns(QAbstractItemView* view);
    void widen(QAbstractItemView* view, int column, int width);
    int& findingNeeds(const QAbstractItemView* view);
    void fillWithFinding(QAbstractItemView* view);
    std::vector<int> narrowYields() const;
    void fitNarrowColumns();

    IterationSelection* m_selection;
    IterationTableModel* m_tableModel;
    QSortFilterProxyModel* m_sorted;
    ProposalTreeModel* m_treeModel;
    QTabWidget* m_tabs;
    QTableView* m_table;
    QTreeView* m_tree;
    HypothesisLogModel* m_hypothesisModel;
    QTableView* m_hypotheses;
    QLabel* m_note;
    bool m_following = false;
    std::int64_t m_shownSession = 0;
    std::size_t m_shownRows = 0;
    // What the top finding holds in each view (up to its cap); fillWithFinding() may give it more.
    int m_tableFindingWidth = 0;
    int m_treeFindingWidth = 0;
    bool m_gpuWanted = false; // the results say who measured them
    bool m_gpuSame = false; // ... and it was one runner and GPU for every iteration
    bool m_solShown = false; // the results carry % of speed of light
    std::map<int, int> m_yieldedWidth; // a column that gave way: its width when shown
};

} // namespace kl::gui

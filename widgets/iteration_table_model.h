#pragma once
// The iterations of one session, one row each, with the columns of `kernelloop-cli history`:
// iteration, proposer, verdict, median, GB/s, % of copy, speedup, the speedups over PyTorch eager and
// torch.compile (a PyTorch reference's), the runner and GPU that measured it, decision, top finding.
// The last three before the decision come from the session's figures (read for the whole session at
// once, after the rows): empty until they arrive, and the history panel hides them when no iteration
// has them.
#include "widgets/session_view.h"

#include <QAbstractTableModel>

#include <memory>

namespace kl::gui {

class IterationTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        IterationColumn,
        ProposerColumn,
        VerdictColumn,
        MedianColumn,
        GbpsColumn,
        PctOfCopyColumn,
        SolColumn, // % of speed of light and the bound, the first size's
        SpeedupColumn,
        VsEagerColumn,
        VsCompileColumn,
        GpuColumn,
        DecisionColumn,
        FindingColumn,
        ColumnCount
    };
    enum Role { IterationRole = Qt::UserRole + 1, SortRole };

    explicit IterationTableModel(QObject* parent = nullptr);

    // Shows a session. A newer value of the one shown whose rows extend its rows (a live session's
    // refresh) inserts the new rows and updates the changed ones, and returns true; anything else
    // resets the model and returns false.
    bool setSession(std::shared_ptr<const SessionView> session);
    int rowOf(int iteration) const; // -1 when absent

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const SessionView> m_session;
};

// Whether `next` is a newer value of `shown` that keeps its rows (same session, same iterations in
// the same order, maybe more of them at the end).
bool extendsRows(const SessionView* shown, const SessionView* next);
// Whether two rows, with their figures (null: not read yet), read the same in every column and role.
bool sameCells(const store::IterationRow& a, const figures::IterationFigures* aFigures, const store::IterationRow& b,
    const figures::IterationFigures* bFigures);

// One cell's text for a row and its figures (null: not read yet), shared by the table and the tree.
QVariant iterationCell(const store::IterationRow& row, const figures::IterationFigures* figures, int column, int role);
// "local:0 · NVIDIA H200": the runner endpoint and the GPU model that measured an iteration.
QString measuredOnText(const figures::IterationFigures& figures);
QVariant iterationHeader(int column);

} // namespace kl::gui

#pragma once
// The iterations of one session, one row each, with the columns of `kernelloop-cli history`:
// iteration, proposer, verdict, median, GB/s, % of copy, speedup, decision, top finding.
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
        SpeedupColumn,
        DecisionColumn,
        FindingColumn,
        ColumnCount
    };
    enum Role { IterationRole = Qt::UserRole + 1, SortRole };

    explicit IterationTableModel(QObject* parent = nullptr);

    void setSession(std::shared_ptr<const SessionView> session);
    int rowOf(int iteration) const; // -1 when absent

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const SessionView> m_session;
};

// One cell's text for a row, shared by the table and the proposal tree.
QVariant iterationCell(const store::IterationRow& row, int column, int role);
QVariant iterationHeader(int column);

} // namespace kl::gui

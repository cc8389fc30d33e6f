#pragma once
// The hypothesis log of one session, one row per iteration whose proposer said what it expected: its
// prediction over the best of its time against the decision that measured it, as `kernelloop-cli
// history --hypotheses` prints it (core/report/session_notes.h makes the entries for both).
#include "core/report/session_notes.h"

#include <QAbstractTableModel>

#include <vector>

namespace kl::gui {

class HypothesisLogModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        IterationColumn,
        ProposerColumn,
        VerdictColumn,
        PredictedColumn,
        SpeedupColumn,
        MeasuredColumn,
        HypothesisColumn,
        ColumnCount
    };
    enum Role { IterationRole = Qt::UserRole + 1 };

    explicit HypothesisLogModel(QObject* parent = nullptr);

    // Replaces the rows; unchanged entries (a live refresh that adds none) leave the model as it is.
    void setEntries(std::vector<report::HypothesisEntry> entries);
    int rowOf(int iteration) const; // -1 when absent

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<report::HypothesisEntry> m_entries;
};

} // namespace kl::gui

#pragma once
// The sessions of a store, one row each: what the session browser lists and filters.
#include "core/store/records.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include <vector>

namespace kl::gui {

class SessionListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        IdColumn,
        ProblemColumn,
        DeviceColumn,
        ProposerColumn,
        StatusColumn,
        IterationsColumn,
        BestSpeedupColumn,
        BestPctOfCopyColumn,
        StartedColumn,
        LabelColumn,
        ColumnCount
    };
    enum Role { SessionIdRole = Qt::UserRole + 1, SortRole };

    explicit SessionListModel(QObject* parent = nullptr);

    void setSessions(std::vector<store::SessionRow> sessions);
    const std::vector<store::SessionRow>& sessions() const { return m_sessions; }
    int rowOf(std::int64_t sessionId) const; // -1 when absent

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<store::SessionRow> m_sessions;
};

// Filters on every text column at once ("h200 llm" keeps rows that mention both words).
class SessionFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit SessionFilterModel(QObject* parent = nullptr);
    void setFilterWords(const QString& text);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QStringList m_words;
};

} // namespace kl::gui

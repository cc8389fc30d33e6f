#pragma once
// The proposals of a session as a tree by parent candidate: the baseline at the root, each
// candidate under the one it was derived from, so forks and reverts to an older best show as
// branches. Columns as in the iteration table.
#include "widgets/session_view.h"

#include <QAbstractItemModel>

#include <map>
#include <memory>
#include <vector>

namespace kl::gui {

class ProposalTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Role { IterationRole = Qt::UserRole + 1 };

    explicit ProposalTreeModel(QObject* parent = nullptr);

    // As IterationTableModel::setSession: a live refresh inserts the new nodes under their parents
    // and returns true; anything else resets the model.
    bool setSession(std::shared_ptr<const SessionView> session);
    QModelIndex indexOf(int iteration) const; // column 0; invalid when absent

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Node {
        std::size_t row = 0; // into the session's rows
        int parent = -1; // node index, -1 for a root
        int position = 0; // among its parent's children
        std::vector<int> children;
    };
    const Node* nodeOf(const QModelIndex& index) const;
    // Places node `i` (the session's row i) under its parent; with `announce`, as an insertion.
    void addNode(std::size_t i, bool announce);
    QModelIndex indexOfNode(int node) const;

    std::shared_ptr<const SessionView> m_session;
    std::vector<Node> m_nodes;
    std::vector<int> m_roots;
    std::map<int, int> m_nodeOfIteration;
};

} // namespace kl::gui

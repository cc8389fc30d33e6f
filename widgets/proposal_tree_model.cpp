#include "widgets/proposal_tree_model.h"

#include "widgets/iteration_table_model.h"

namespace kl::gui {

ProposalTreeModel::ProposalTreeModel(QObject* parent)
    : QAbstractItemModel(parent)
{
}

void ProposalTreeModel::setSession(std::shared_ptr<const SessionView> session)
{
    beginResetModel();
    m_session = std::move(session);
    m_nodes.clear();
    m_roots.clear();
    if (m_session) {
        const auto& rows = m_session->rows;
        m_nodes.resize(rows.size());
        std::map<int, int> nodeOfIteration;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            Node& node = m_nodes[i];
            node.row = i;
            nodeOfIteration[rows[i].index] = static_cast<int>(i);
            // A parent is always recorded before its child; anything else would be a cycle.
            const int parentIteration = m_session->parentIteration(rows[i].index);
            const auto parent = nodeOfIteration.find(parentIteration);
            if (parentIteration > 0 && parentIteration < rows[i].index && parent != nodeOfIteration.end()) {
                node.parent = parent->second;
                node.position = static_cast<int>(m_nodes[static_cast<std::size_t>(node.parent)].children.size());
                m_nodes[static_cast<std::size_t>(node.parent)].children.push_back(static_cast<int>(i));
            } else {
                node.position = static_cast<int>(m_roots.size());
                m_roots.push_back(static_cast<int>(i));
            }
        }
    }
    endResetModel();
}

const ProposalTreeModel::Node* ProposalTreeModel::nodeOf(const QModelIndex& index) const
{
    if (!index.isValid())
        return nullptr;
    const auto id = static_cast<std::size_t>(index.internalId());
    return id < m_nodes.size() ? &m_nodes[id] : nullptr;
}

QModelIndex ProposalTreeModel::indexOf(int iteration) const
{
    if (!m_session)
        return {};
    const store::IterationRow* row = m_session->row(iteration);
    if (!row)
        return {};
    const auto id = static_cast<std::size_t>(row - m_session->rows.data());
    return createIndex(m_nodes[id].position, 0, static_cast<quintptr>(id));
}

QModelIndex ProposalTreeModel::index(int row, int column, const QModelIndex& parent) const
{
    if (row < 0 || column < 0 || column >= IterationTableModel::ColumnCount)
        return {};
    const std::vector<int>* children = &m_roots;
    if (parent.isValid()) {
        const Node* node = nodeOf(parent);
        if (!node || parent.column() != 0)
            return {};
        children = &node->children;
    }
    if (row >= static_cast<int>(children->size()))
        return {};
    return createIndex(row, column, static_cast<quintptr>((*children)[static_cast<std::size_t>(row)]));
}

QModelIndex ProposalTreeModel::parent(const QModelIndex& child) const
{
    const Node* node = nodeOf(child);
    if (!node || node->parent < 0)
        return {};
    const Node& parent = m_nodes[static_cast<std::size_t>(node->parent)];
    return createIndex(parent.position, 0, static_cast<quintptr>(node->parent));
}

int ProposalTreeModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return static_cast<int>(m_roots.size());
    if (parent.column() != 0)
        return 0;
    const Node* node = nodeOf(parent);
    return node ? static_cast<int>(node->children.size()) : 0;
}

int ProposalTreeModel::columnCount(const QModelIndex&) const { return IterationTableModel::ColumnCount; }

QVariant ProposalTreeModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Node* node = nodeOf(index);
    if (!node)
        return {};
    const store::IterationRow& row = m_session->rows[node->row];
    if (role == IterationRole)
        return row.index;
    return iterationCell(row, index.column(), role);
}

QVariant ProposalTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return iterationHeader(section);
}

} // namespace kl::gui

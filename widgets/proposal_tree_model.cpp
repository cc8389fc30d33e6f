#include "widgets/proposal_tree_model.h"

#include "widgets/iteration_table_model.h"

namespace kl::gui {

ProposalTreeModel::ProposalTreeModel(QObject* parent)
    : QAbstractItemModel(parent)
{
}

void ProposalTreeModel::addNode(std::size_t i, bool announce)
{
    const store::IterationRow& row = m_session->rows[i];
    Node node;
    node.row = i;
    // A parent is always recorded before its child; anything else would be a cycle.
    const int parentIteration = m_session->parentIteration(row.index);
    const auto parent = m_nodeOfIteration.find(parentIteration);
    if (parentIteration > 0 && parentIteration < row.index && parent != m_nodeOfIteration.end())
        node.parent = parent->second;
    auto siblings = [this, &node]() -> std::vector<int>& {
        return node.parent < 0 ? m_roots : m_nodes[static_cast<std::size_t>(node.parent)].children;
    };
    node.position = static_cast<int>(siblings().size());
    m_nodeOfIteration[row.index] = static_cast<int>(i);
    m_nodes.push_back(node); // not reachable from the tree until its parent lists it
    if (announce)
        beginInsertRows(indexOfNode(node.parent), node.position, node.position);
    siblings().push_back(static_cast<int>(i));
    if (announce)
        endInsertRows();
}

QModelIndex ProposalTreeModel::indexOfNode(int node) const
{
    if (node < 0)
        return {};
    return createIndex(m_nodes[static_cast<std::size_t>(node)].position, 0, static_cast<quintptr>(node));
}

bool ProposalTreeModel::setSession(std::shared_ptr<const SessionView> session)
{
    // A live refresh keeps the nodes when every shown row keeps its parent.
    bool extends = extendsRows(m_session.get(), session.get());
    for (std::size_t i = 0; extends && i < m_nodes.size(); ++i) {
        const auto parent = m_nodeOfIteration.find(session->parentIteration(session->rows[i].index));
        const int now
            = parent != m_nodeOfIteration.end() && parent->first < session->rows[i].index ? parent->second : -1;
        extends = now == m_nodes[i].parent;
    }
    if (!extends) {
        beginResetModel();
        m_session = std::move(session);
        m_nodes.clear();
        m_roots.clear();
        m_nodeOfIteration.clear();
        if (m_session) {
            m_nodes.reserve(m_session->rows.size());
            for (std::size_t i = 0; i < m_session->rows.size(); ++i)
                addNode(i, false);
        }
        endResetModel();
        return false;
    }
    const std::shared_ptr<const SessionView> previous = std::move(m_session);
    m_session = std::move(session); // the shown nodes read the same rows from it
    const std::size_t kept = m_nodes.size();
    for (std::size_t i = kept; i < m_session->rows.size(); ++i)
        addNode(i, true);
    for (std::size_t i = 0; i < kept; ++i)
        if (!sameCells(previous->rows[i], previous->figuresOf(previous->rows[i].index), m_session->rows[i],
                m_session->figuresOf(m_session->rows[i].index))) {
            const QModelIndex first = indexOfNode(static_cast<int>(i));
            emit dataChanged(first, first.siblingAtColumn(IterationTableModel::ColumnCount - 1));
        }
    return true;
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
    if (id >= m_nodes.size())
        return {};
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
    return iterationCell(row, m_session->figuresOf(row.index), index.column(), role);
}

QVariant ProposalTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return iterationHeader(section);
}

} // namespace kl::gui

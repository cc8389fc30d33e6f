#include "widgets/session_list_model.h"

#include "core/store/records.h"
#include "widgets/number_text.h"
#include "widgets/string_conversion.h"

namespace kl::gui {

SessionListModel::SessionListModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void SessionListModel::setSessions(std::vector<store::SessionRow> sessions)
{
    beginResetModel();
    m_sessions = std::move(sessions);
    endResetModel();
}

int SessionListModel::rowOf(std::int64_t sessionId) const
{
    for (std::size_t i = 0; i < m_sessions.size(); ++i)
        if (m_sessions[i].session.id == sessionId)
            return static_cast<int>(i);
    return -1;
}

int SessionListModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_sessions.size());
}

int SessionListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant SessionListModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const store::SessionRow& row = m_sessions[static_cast<std::size_t>(index.row())];
    const store::SessionRecord& s = row.session;
    if (role == SessionIdRole)
        return QVariant::fromValue<qlonglong>(s.id);
    if (role == SortRole) {
        switch (index.column()) {
        case IdColumn:
            return QVariant::fromValue<qlonglong>(s.id);
        case IterationsColumn:
            return row.iterations;
        case BestSpeedupColumn:
            return row.bestSpeedup.value_or(0.0);
        case BestPctOfCopyColumn:
            return store::summaryBestPctOfCopy(row.session).value_or(0.0);
        case StartedColumn:
            return QVariant::fromValue<qlonglong>(s.startedMs);
        default:
            return data(index, Qt::DisplayRole);
        }
    }
    if (role == Qt::TextAlignmentRole) {
        switch (index.column()) {
        case IdColumn:
        case IterationsColumn:
        case BestSpeedupColumn:
        case BestPctOfCopyColumn:
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        default:
            return {};
        }
    }
    // Cells elide in the browser: the tooltip has the whole text, and the device on every column
    // (its own column is hidden by default).
    if (role == Qt::ToolTipRole) {
        const QString cell = data(index, Qt::DisplayRole).toString();
        return index.column() == DeviceColumn || s.device.empty() ? cell
                                                                  : tr("%1\non %2").arg(cell, toQString(s.device));
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case IdColumn:
        return QString::number(s.id);
    case ProblemColumn:
        return toQString(s.problemName);
    case DeviceColumn:
        return toQString(s.device);
    case ProposerColumn:
        return toQString(s.proposer);
    case StatusColumn:
        return toQString(s.status);
    case IterationsColumn:
        return row.iterations;
    case BestSpeedupColumn:
        return fixedText(row.bestSpeedup, 2, QStringLiteral("×"));
    case BestPctOfCopyColumn:
        return fixedText(store::summaryBestPctOfCopy(row.session), 1, QStringLiteral(" %"));
    case StartedColumn:
        return utcText(s.startedMs);
    case LabelColumn:
        return toQString(s.label);
    default:
        return {};
    }
}

QVariant SessionListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    // The headers are short so that the browser fits beside the iteration table; their tooltips
    // say what the column holds.
    if (role == Qt::ToolTipRole)
        switch (section) {
        case IterationsColumn:
            return tr("Iterations recorded in the session");
        case BestSpeedupColumn:
            //: session browser column tooltip: the same iteration Review ▸ Select Best picks
            return tr("The speedup of the session's best iteration (Review ▸ Select Best): the loop's incumbent; "
                      "a later iteration faster only within the noise does not replace it");
        case StartedColumn:
            return tr("When the session started (UTC)");
        default:
            return headerData(section, orientation, Qt::DisplayRole);
        }
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case IdColumn:
        //: session browser column: the session's number in the store
        return tr("Id");
    case ProblemColumn:
        return tr("Problem");
    case DeviceColumn:
        return tr("Device");
    case ProposerColumn:
        return tr("Proposer");
    case StatusColumn:
        return tr("Status");
    case IterationsColumn:
        //: session browser column: number of iterations
        return tr("Iters");
    case BestSpeedupColumn:
        //: session browser column: the best verified speedup over the baseline
        return tr("Best");
    case BestPctOfCopyColumn:
        //: session browser column: the best candidate's bandwidth as % of a same-size device copy
        return tr("% of copy");
    case StartedColumn:
        return tr("Started");
    case LabelColumn:
        return tr("Label");
    default:
        return {};
    }
}

SessionFilterModel::SessionFilterModel(QObject* parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(SessionListModel::SortRole);
}

void SessionFilterModel::setFilterWords(const QString& text)
{
    m_words = text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    invalidateFilter();
}

bool SessionFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const
{
    if (m_words.isEmpty())
        return true;
    QString text;
    for (int column = 0; column < sourceModel()->columnCount(sourceParent); ++column)
        text += sourceModel()->index(sourceRow, column, sourceParent).data().toString() + QLatin1Char(' ');
    for (const QString& word : m_words)
        if (!text.contains(word, Qt::CaseInsensitive))
            return false;
    return true;
}

} // namespace kl::gui

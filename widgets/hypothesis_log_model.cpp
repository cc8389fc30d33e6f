#include "widgets/hypothesis_log_model.h"

#include "widgets/number_text.h"
#include "widgets/string_conversion.h"

namespace kl::gui {

namespace {

bool sameEntry(const report::HypothesisEntry& a, const report::HypothesisEntry& b)
{
    return a.index == b.index && a.proposer == b.proposer && a.verdict == b.verdict
        && a.predictedSpeedup == b.predictedSpeedup && a.speedup == b.speedup && a.measured == b.measured
        && a.hypothesis == b.hypothesis;
}

} // namespace

HypothesisLogModel::HypothesisLogModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void HypothesisLogModel::setEntries(std::vector<report::HypothesisEntry> entries)
{
    if (std::equal(entries.begin(), entries.end(), m_entries.begin(), m_entries.end(), sameEntry))
        return;
    beginResetModel();
    m_entries = std::move(entries);
    endResetModel();
}

int HypothesisLogModel::rowOf(int iteration) const
{
    for (std::size_t row = 0; row < m_entries.size(); ++row)
        if (m_entries[row].index == iteration)
            return static_cast<int>(row);
    return -1;
}

int HypothesisLogModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

int HypothesisLogModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant HypothesisLogModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const report::HypothesisEntry& e = m_entries[static_cast<std::size_t>(index.row())];
    if (role == IterationRole)
        return e.index;
    if (role == Qt::TextAlignmentRole)
        return index.column() == IterationColumn || index.column() == PredictedColumn || index.column() == SpeedupColumn
            ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
            : QVariant();
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
    case IterationColumn:
        return e.index;
    case ProposerColumn:
        return toQString(e.proposer);
    case VerdictColumn:
        return toQString(e.verdict);
    case PredictedColumn:
        return fixedText(e.predictedSpeedup, 2, QStringLiteral("×"));
    case SpeedupColumn:
        return fixedText(e.speedup, 2, QStringLiteral("×"));
    case MeasuredColumn:
        return toQString(e.measured);
    case HypothesisColumn:
        return toQString(e.hypothesis);
    default:
        return {};
    }
}

QVariant HypothesisLogModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case PredictedColumn:
            //: hypothesis log header tooltip
            return tr("What the proposer expected over the best candidate of its time");
        case SpeedupColumn:
            //: hypothesis log header tooltip
            return tr("Measured speedup over the session's baseline");
        case MeasuredColumn:
            //: hypothesis log header tooltip
            return tr("The decision that measured it against the best candidate of its time");
        default:
            return {};
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case IterationColumn:
        //: hypothesis log column: the iteration's number
        return tr("Iter");
    case ProposerColumn:
        return tr("Proposer");
    case VerdictColumn:
        return tr("Verdict");
    case PredictedColumn:
        //: hypothesis log column: the proposer's predicted speedup
        return tr("Predicted");
    case SpeedupColumn:
        //: hypothesis log column: measured speedup over the baseline
        return tr("vs baseline");
    case MeasuredColumn:
        //: hypothesis log column: the decision that measured it against the best candidate then (tooltip)
        return tr("Measured");
    case HypothesisColumn:
        return tr("Hypothesis");
    default:
        return {};
    }
}

} // namespace kl::gui

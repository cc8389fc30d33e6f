#include "widgets/campaign_table_model.h"

#include "widgets/number_text.h"
#include "widgets/string_conversion.h"

namespace kl::gui {

CampaignTableModel::CampaignTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void CampaignTableModel::setReport(std::shared_ptr<const campaign::CampaignReport> report)
{
    beginResetModel();
    m_report = std::move(report);
    endResetModel();
}

std::int64_t CampaignTableModel::sessionAt(int row) const
{
    if (!m_report || row < 0 || row >= int(m_report->rows.size()))
        return 0;
    return m_report->rows[std::size_t(row)].sessionId;
}

int CampaignTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_report ? 0 : int(m_report->rows.size());
}

int CampaignTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant CampaignTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& r = m_report->rows[std::size_t(index.row())];
    if (role == SessionIdRole)
        return QVariant::fromValue<qlonglong>(r.sessionId);
    if (role == Qt::ToolTipRole && r.status == "failed")
        return toQString(r.category + ": " + r.detail);
    if (role == Qt::ToolTipRole && (index.column() == PctOfSolColumn || index.column() == BoundColumn) && r.pctOfSol
        && r.compute)
        //: tooltip of the campaign's % SOL cell: %1 the compute ceiling and why ("FP32 CUDA cores: not a matrix
        //: product")
        return tr("The floor is the larger of a same-size copy and the FLOPs at the ceiling %1")
            .arg(toQString(ceilingText(*r.compute, r.computeReason)));
    if (role == Qt::TextAlignmentRole && index.column() >= BestUsColumn && index.column() != BoundColumn
        && index.column() != SessionColumn)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    const QString x = QStringLiteral("x");
    switch (index.column()) {
    case ProblemColumn:
        return toQString(r.name);
    case VerdictColumn:
        return toQString(r.status == "failed" && !r.category.empty() ? "failed: " + r.category : r.status);
    case BestUsColumn:
        return fixedText(r.medianUs, 2);
    case SpeedupColumn:
        return fixedText(r.speedup, 2, x);
    case VsEagerColumn:
        return fixedText(r.vsEager, 2, x);
    case VsCompileColumn:
        return fixedText(r.vsCompile, 2, x);
    case PctOfSolColumn:
        return fixedText(r.pctOfSol, 1);
    case BoundColumn:
        return r.bound ? toQString(std::string(boundName(*r.bound))) : QStringLiteral("–");
    case CandidatesColumn:
        return r.candidates;
    case SecondsColumn:
        return fixedText(r.seconds, 1);
    case SessionColumn:
        return r.sessionId ? tr("session %1, iteration %2").arg(r.sessionId).arg(r.bestIteration) : QStringLiteral("–");
    default:
        return {};
    }
}

QVariant CampaignTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ProblemColumn:
        return tr("Problem");
    case VerdictColumn:
        return tr("Verdict");
    case BestUsColumn:
        return tr("Best µs");
    case SpeedupColumn:
        return tr("vs baseline");
    case VsEagerColumn:
        return tr("vs eager");
    case VsCompileColumn:
        return tr("vs torch.compile");
    case PctOfSolColumn:
        return tr("% SOL");
    case BoundColumn:
        return tr("Bound");
    case CandidatesColumn:
        return tr("Candidates");
    case SecondsColumn:
        return tr("Time s");
    case SessionColumn:
        //: where the row's figures come from: a stored session and its best iteration
        return tr("Figures from");
    default:
        return {};
    }
}

} // namespace kl::gui

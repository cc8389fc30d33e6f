#include "widgets/iteration_table_model.h"

#include "widgets/number_text.h"
#include "widgets/string_conversion.h"
#include "widgets/verdict_style.h"

#include <QCoreApplication>

namespace kl::gui {

QVariant iterationCell(const store::IterationRow& row, int column, int role)
{
    using C = IterationTableModel::Column;
    const Verdict verdict = verdictOf(row.status, row.category);
    if (role == IterationTableModel::IterationRole)
        return row.index;
    if (role == Qt::DecorationRole && column == C::ProposerColumn)
        return proposerIcon(proposerLabel(row));
    if (role == Qt::ForegroundRole && column == C::VerdictColumn)
        return verdictColor(verdict);
    if (role == Qt::BackgroundRole) {
        const QColor background = verdictBackground(verdict);
        return background.isValid() ? QVariant(background) : QVariant();
    }
    if (role == Qt::TextAlignmentRole) {
        switch (column) {
        case C::IterationColumn:
        case C::MedianColumn:
        case C::GbpsColumn:
        case C::PctOfCopyColumn:
        case C::SpeedupColumn:
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        if (column == C::FindingColumn && !row.topFindingMessage.empty())
            return toQString(row.topFindingRule + ": " + row.topFindingMessage);
        if (column == C::ProposerColumn && !row.hypothesis.empty())
            return toQString(row.hypothesis);
        return {};
    }
    if (role == IterationTableModel::SortRole) {
        switch (column) {
        case C::IterationColumn:
            return row.index;
        case C::MedianColumn:
            return row.medianUs.value_or(1e300);
        case C::GbpsColumn:
            return row.gbps.value_or(-1.0);
        case C::PctOfCopyColumn:
            return row.pctOfCopy.value_or(-1.0);
        case C::SpeedupColumn:
            return row.speedup.value_or(-1.0);
        default:
            return iterationCell(row, column, Qt::DisplayRole);
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
    case C::IterationColumn:
        return row.index;
    case C::ProposerColumn:
        return proposerLabel(row);
    case C::VerdictColumn:
        return toQString(row.category.empty() ? row.state : row.category);
    case C::MedianColumn:
        return fixedText(row.medianUs, 2);
    case C::GbpsColumn:
        return fixedText(row.gbps, 0);
    case C::PctOfCopyColumn:
        return fixedText(row.pctOfCopy, 1);
    case C::SpeedupColumn:
        return fixedText(row.speedup, 2, QStringLiteral("×"));
    case C::DecisionColumn:
        return row.lastDecision ? toQString(std::string(store::decisionName(*row.lastDecision))) : QString();
    case C::FindingColumn:
        return toQString(row.topFindingMessage);
    default:
        return {};
    }
}

QVariant iterationHeader(int column)
{
    using C = IterationTableModel::Column;
    switch (column) {
    case C::IterationColumn:
        //: history column: the iteration's number
        return QCoreApplication::translate("kl::gui::IterationTableModel", "Iter");
    case C::ProposerColumn:
        return QCoreApplication::translate("kl::gui::IterationTableModel", "Proposer");
    case C::VerdictColumn:
        //: history column: passed, wrong-result, compile error, ...
        return QCoreApplication::translate("kl::gui::IterationTableModel", "Verdict");
    case C::MedianColumn:
        return QCoreApplication::translate("kl::gui::IterationTableModel", "Median µs");
    case C::GbpsColumn:
        return QCoreApplication::translate("kl::gui::IterationTableModel", "GB/s");
    case C::PctOfCopyColumn:
        //: history column: bandwidth as % of a same-size device copy
        return QCoreApplication::translate("kl::gui::IterationTableModel", "% copy");
    case C::SpeedupColumn:
        return QCoreApplication::translate("kl::gui::IterationTableModel", "Speedup");
    case C::DecisionColumn:
        return QCoreApplication::translate("kl::gui::IterationTableModel", "Decision");
    case C::FindingColumn:
        return QCoreApplication::translate("kl::gui::IterationTableModel", "Top finding");
    default:
        return {};
    }
}

IterationTableModel::IterationTableModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

bool extendsRows(const SessionView* shown, const SessionView* next)
{
    // Two stores' sessions may share an id: the start and the rows' candidates tell them apart.
    if (!shown || !next || shown->session.id != next->session.id || shown->session.startedMs != next->session.startedMs
        || shown->session.problemHash != next->session.problemHash || next->rows.size() < shown->rows.size())
        return false;
    for (std::size_t i = 0; i < shown->rows.size(); ++i)
        if (shown->rows[i].index != next->rows[i].index || shown->rows[i].candidateId != next->rows[i].candidateId
            || shown->rows[i].startedMs != next->rows[i].startedMs)
            return false;
    return true;
}

bool sameCells(const store::IterationRow& a, const store::IterationRow& b)
{
    return a.index == b.index && a.proposer == b.proposer && a.proposerDetail == b.proposerDetail
        && a.hypothesis == b.hypothesis && a.state == b.state && a.status == b.status && a.category == b.category
        && a.medianUs == b.medianUs && a.gbps == b.gbps && a.pctOfCopy == b.pctOfCopy && a.speedup == b.speedup
        && a.topFindingRule == b.topFindingRule && a.topFindingMessage == b.topFindingMessage
        && a.lastDecision == b.lastDecision;
}

bool IterationTableModel::setSession(std::shared_ptr<const SessionView> session)
{
    if (!extendsRows(m_session.get(), session.get())) {
        beginResetModel();
        m_session = std::move(session);
        endResetModel();
        return false;
    }
    // A live refresh: rebuilding the whole model made the view re-read and re-measure every row.
    const std::shared_ptr<const SessionView> previous = m_session; // still the rows counted until the insertion
    const int kept = static_cast<int>(previous->rows.size());
    const int rows = static_cast<int>(session->rows.size());
    if (rows > kept)
        beginInsertRows({}, kept, rows - 1);
    m_session = std::move(session);
    if (rows > kept)
        endInsertRows();
    int first = -1, last = -1;
    for (int i = 0; i < kept; ++i)
        if (!sameCells(previous->rows[std::size_t(i)], m_session->rows[std::size_t(i)])) {
            first = first < 0 ? i : first;
            last = i;
        }
    if (first >= 0)
        emit dataChanged(index(first, 0), index(last, ColumnCount - 1));
    return true;
}

int IterationTableModel::rowOf(int iteration) const
{
    if (!m_session)
        return -1;
    const store::IterationRow* row = m_session->row(iteration);
    return row ? static_cast<int>(row - m_session->rows.data()) : -1;
}

int IterationTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_session ? 0 : static_cast<int>(m_session->rows.size());
}

int IterationTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant IterationTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    return iterationCell(m_session->rows[static_cast<std::size_t>(index.row())], index.column(), role);
}

QVariant IterationTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return iterationHeader(section);
}

} // namespace kl::gui

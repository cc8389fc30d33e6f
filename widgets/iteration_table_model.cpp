#include "widgets/iteration_table_model.h"

#include "widgets/number_text.h"
#include "widgets/string_conversion.h"
#include "widgets/verdict_style.h"

#include "core/report/size_figures.h"

#include <QCoreApplication>
#include <QStringList>

namespace kl::gui {

namespace {

// The PyTorch contenders of each timed size, one line each, for a cell's tooltip.
QString contendersTip(const figures::IterationFigures& f)
{
    QStringList lines;
    for (const figures::SizeFigures& size : f.sizes) {
        // An empty text means the size has no PyTorch reference: nothing to show.
        if (const std::string text = report::contendersText(size); !text.empty())
            lines << toQString(size.size + ": " + text);
    }
    if (f.sizes.size() > 1 && !lines.isEmpty())
        //: tooltip of the history's "vs eager" cell: how several main sizes make one figure
        lines << QCoreApplication::translate("kl::gui::IterationTableModel", "The cell: geometric mean over the sizes");
    return lines.join(QLatin1Char('\n'));
}

// Speed of light of the row's first size, as its other figures; nullptr when not timed.
const figures::SizeFigures* firstSize(const figures::IterationFigures* f)
{
    return f && !f->sizes.empty() ? &f->sizes.front() : nullptr;
}

// Each size's "% of SOL (bound; ceiling and why)", one line each, for the SOL cell's tooltip.
QString solTip(const figures::IterationFigures& f)
{
    QStringList lines;
    for (const figures::SizeFigures& size : f.sizes)
        if (const std::string text = report::solText(size); !text.empty())
            lines << toQString(size.size + ": " + text);
    if (!lines.isEmpty())
        //: tooltip of the history's SOL cell: what speed of light is
        lines << QCoreApplication::translate("kl::gui::IterationTableModel",
            "The floor is the larger of a same-size copy and the FLOPs at the ceiling of their precision");
    return lines.join(QLatin1Char('\n'));
}

QVariant figureCell(const figures::IterationFigures* f, int column, int role)
{
    using C = IterationTableModel::Column;
    if (role == IterationTableModel::SortRole) {
        if (column == C::GpuColumn)
            return f ? measuredOnText(*f) : QString();
        if (column == C::SolColumn) {
            const auto* first = firstSize(f);
            return first && first->pctOfSol ? *first->pctOfSol : -1.0;
        }
        const auto value = !f            ? std::nullopt
            : column == C::VsEagerColumn ? figures::speedupVsEager(*f)
                                         : figures::speedupVsCompile(*f);
        return value.value_or(-1.0);
    }
    if (!f)
        return {};
    if (role == Qt::ToolTipRole) {
        if (column == C::SolColumn)
            return solTip(*f);
        if (column != C::GpuColumn)
            return contendersTip(*f);
        //: tooltip of the history's GPU cell: %1 the runner endpoint, %2 the GPU model and index
        return QCoreApplication::translate("kl::gui::IterationTableModel", "Measured by %1 on %2")
            .arg(toQString(f->endpoint.empty() ? std::string("-") : f->endpoint),
                toQString(f->gpuModel.empty() ? std::string("-") : f->gpuModel)
                    + (f->gpu >= 0 ? QStringLiteral(" #%1").arg(f->gpu) : QString()));
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
    case C::VsEagerColumn:
        return f->sizes.empty() ? QString() : fixedText(figures::speedupVsEager(*f), 2, QStringLiteral("×"));
    case C::VsCompileColumn:
        return f->sizes.empty() ? QString() : fixedText(figures::speedupVsCompile(*f), 2, QStringLiteral("×"));
    case C::GpuColumn:
        return measuredOnText(*f);
    case C::SolColumn: {
        const auto* first = firstSize(f);
        if (!first || !first->pctOfSol)
            return fixedText(std::nullopt, 1);
        QString text = fixedText(first->pctOfSol, 1);
        if (first->solBound)
            text += QStringLiteral(" ") + toQString(std::string(boundName(*first->solBound)));
        return text;
    }
    default:
        return {};
    }
}

// Whether the figure columns read the same (compared field by field: a refresh of 10,000 rows
// must not format them all).
bool sameFigureCells(const figures::IterationFigures* a, const figures::IterationFigures* b)
{
    if (!a || !b)
        return a == b;
    if (a->endpoint != b->endpoint || a->gpuModel != b->gpuModel || a->gpu != b->gpu
        || a->sizes.size() != b->sizes.size())
        return false;
    for (std::size_t i = 0; i < a->sizes.size(); ++i) {
        const figures::SizeFigures& x = a->sizes[i];
        const figures::SizeFigures& y = b->sizes[i];
        if (x.size != y.size || x.eagerUs != y.eagerUs || x.torchCompileUs != y.torchCompileUs
            || x.speedupVsEager != y.speedupVsEager || x.speedupVsCompile != y.speedupVsCompile
            || x.torchCompileError != y.torchCompileError || x.pctOfSol != y.pctOfSol || x.solBound != y.solBound)
            return false;
    }
    return true;
}

bool isFigureColumn(int column)
{
    using C = IterationTableModel::Column;
    return column == C::VsEagerColumn || column == C::VsCompileColumn || column == C::GpuColumn
        || column == C::SolColumn;
}

} // namespace

QString measuredOnText(const figures::IterationFigures& f)
{
    QString model = toQString(f.gpuModel);
    if (f.endpoint.empty() && f.gpu >= 0) // a result from before endpoints were recorded
        model += QStringLiteral(" #%1").arg(f.gpu);
    if (f.endpoint.empty() || f.gpuModel.empty())
        return f.endpoint.empty() ? model : toQString(f.endpoint);
    return toQString(f.endpoint) + QStringLiteral(" · ") + model;
}

QVariant iterationCell(const store::IterationRow& row, const figures::IterationFigures* figures, int column, int role)
{
    using C = IterationTableModel::Column;
    if (isFigureColumn(column) && role != IterationTableModel::IterationRole && role != Qt::DecorationRole
        && role != Qt::ForegroundRole && role != Qt::BackgroundRole)
        return role == Qt::TextAlignmentRole && column != C::GpuColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                                                       : figureCell(figures, column, role);
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
            return iterationCell(row, figures, column, Qt::DisplayRole);
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
    case C::SolColumn:
        //: history column: % of speed of light (the copy or the FLOPs at their precision's ceiling) and which binds
        return QCoreApplication::translate("kl::gui::IterationTableModel", "% SOL");
    case C::SpeedupColumn:
        return QCoreApplication::translate("kl::gui::IterationTableModel", "Speedup");
    case C::VsEagerColumn:
        //: history column: the candidate's speedup over the PyTorch reference run eagerly, same job
        return QCoreApplication::translate("kl::gui::IterationTableModel", "vs eager");
    case C::VsCompileColumn:
        //: history column: the candidate's speedup over torch.compile of the PyTorch reference, same job
        return QCoreApplication::translate("kl::gui::IterationTableModel", "vs torch.compile");
    case C::GpuColumn:
        //: history column: the runner endpoint and GPU model that measured the iteration
        return QCoreApplication::translate("kl::gui::IterationTableModel", "GPU");
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

bool sameCells(const store::IterationRow& a, const figures::IterationFigures* aFigures, const store::IterationRow& b,
    const figures::IterationFigures* bFigures)
{
    if (!sameFigureCells(aFigures, bFigures))
        return false;
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
        if (!sameCells(previous->rows[std::size_t(i)], previous->figuresOf(previous->rows[std::size_t(i)].index),
                m_session->rows[std::size_t(i)], m_session->figuresOf(m_session->rows[std::size_t(i)].index))) {
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
    const store::IterationRow& row = m_session->rows[static_cast<std::size_t>(index.row())];
    return iterationCell(row, m_session->figuresOf(row.index), index.column(), role);
}

QVariant IterationTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    // Over its text, which starts at the left: centred over a wide column, the title of the top
    // finding sat right of a narrow pane's edge.
    if (orientation == Qt::Horizontal && role == Qt::TextAlignmentRole && section == FindingColumn)
        return int(Qt::AlignLeft | Qt::AlignVCenter);
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    return iterationHeader(section);
}

} // namespace kl::gui

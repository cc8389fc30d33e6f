#include "widgets/metrics_model.h"

#include "core/findings/metric_facts.h"
#include "core/findings/metric_sections.h"
#include "widgets/string_conversion.h"

#include <QColor>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace kl::gui {

namespace {

// The same metric (kernel, size, counter) in another iteration, where it was profiled.
std::optional<double> valueIn(const std::shared_ptr<const store::IterationDetail>& detail, const store::MetricKey& key)
{
    if (!detail || !detail->result)
        return std::nullopt;
    const auto it = detail->result->metrics.find(key);
    if (it == detail->result->metrics.end())
        return std::nullopt;
    return it->second;
}

QString readable(const QString& metric, double value)
{
    return QString::fromStdString(kl::readableValue(metric.toStdString(), value));
}

QString deltaText(double value, const std::optional<double>& other)
{
    if (!other)
        return QStringLiteral("–");
    if (*other == 0.0)
        return value == 0.0 ? QStringLiteral("0 %") : QStringLiteral("new");
    const double pct = (value - *other) / std::abs(*other) * 100.0;
    return (pct >= 0 ? QStringLiteral("+") : QString()) + QString::number(pct, 'f', 1) + QStringLiteral(" %");
}

QVariant deltaColor(const QString& metric, double value, const std::optional<double>& other)
{
    if (!other || *other == 0.0)
        return {};
    const double pct = (value - *other) / std::abs(*other) * 100.0;
    if (std::abs(pct) < 2.0)
        return QColor(0x6b, 0x6b, 0x6b); // within run-to-run noise of CUPTI counters
    const int direction = metricDirection(metric);
    if (direction == 0)
        return QColor(0x1f, 0x6f, 0xb4);
    return (pct > 0) == (direction > 0) ? QColor(0x1b, 0x7a, 0x35) : QColor(0xb0, 0x1c, 0x1c);
}

} // namespace

// Core's rules (core/findings/metric_facts.h), which `show` prints too.
QString metricUnit(const QString& metric) { return QString::fromStdString(kl::metricUnit(metric.toStdString())); }

int metricDirection(const QString& metric)
{
    switch (kl::metricDirection(metric.toStdString())) {
    case MetricDirection::HigherIsBetter:
        return +1;
    case MetricDirection::LowerIsBetter:
        return -1;
    case MetricDirection::Depends:
        break;
    }
    return 0;
}

MetricsModel::MetricsModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void MetricsModel::showSession(const std::shared_ptr<const SessionView>&) { }

void MetricsModel::showIteration(const std::shared_ptr<const IterationFocus>& focus)
{
    beginResetModel();
    m_rows.clear();
    m_pinnedBaseline = focus ? toQString(focus->pinnedBaseline) : QString();
    if (focus && focus->detail && focus->detail->result) {
        for (const auto& [key, value] : focus->detail->result->metrics) {
            const MetricPresentation shown = presentMetric(key.metric);
            m_rows.push_back({ toQString(key.kernel), toQString(key.caseLabel), toQString(key.metric),
                toQString(std::string(sectionTitle(shown.section))), toQString(shown.label), toQString(shown.guidance),
                static_cast<int>(shown.section), shown.order, value, valueIn(focus->compared, key),
                valueIn(focus->baseline, key) });
        }
        // Nsight Compute's order: per size, section by section, each in its report's order.
        std::stable_sort(m_rows.begin(), m_rows.end(), [](const Row& a, const Row& b) {
            return std::tie(a.size, a.sectionRank, a.order) < std::tie(b.size, b.sectionRank, b.order);
        });
    }
    endResetModel();
}

int MetricsModel::rowOfMetric(const QString& size, const QString& metric) const
{
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].size == size && m_rows[i].metric == metric)
            return static_cast<int>(i);
    return -1;
}

int MetricsModel::sizeCount() const
{
    int count = 0;
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (i == 0 || m_rows[i].size != m_rows[i - 1].size)
            ++count; // rows are sorted by size
    return count;
}

int MetricsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int MetricsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant MetricsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const std::size_t at = static_cast<std::size_t>(index.row());
    const Row& row = m_rows[at];
    if (role == RawValueRole)
        return row.value;
    if (role == MetricNameRole)
        return row.metric;
    if (role == Qt::ForegroundRole) {
        if (index.column() == VsParentColumn)
            return deltaColor(row.metric, row.value, row.parent);
        if (index.column() == VsBaselineColumn)
            return deltaColor(row.metric, row.value, row.baseline);
        return {};
    }
    if (role == Qt::TextAlignmentRole && index.column() >= ValueColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && (index.column() == MetricColumn || index.column() == SectionColumn)) {
        QString tip = row.kernel + QLatin1Char('/') + row.size + QLatin1Char('/') + row.metric;
        const QString better = toQString(std::string(directionText(kl::metricDirection(row.metric.toStdString()))));
        if (!better.isEmpty())
            tip += QStringLiteral(" (") + better + QLatin1Char(')');
        if (!row.guidance.isEmpty())
            tip += QLatin1Char('\n') + row.guidance;
        return tip;
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case SectionColumn: {
        // The title once per group, as a section heading reads.
        const bool first = at == 0 || m_rows[at - 1].section != row.section || m_rows[at - 1].size != row.size;
        return first ? row.section : QString();
    }
    case SizeColumn:
        return row.size;
    case MetricColumn:
        return row.label;
    case ValueColumn:
        return readable(row.metric, row.value);
    case BaselineColumn:
        return row.baseline ? readable(row.metric, *row.baseline) : QStringLiteral("–");
    case VsParentColumn:
        return deltaText(row.value, row.parent);
    case VsBaselineColumn:
        return deltaText(row.value, row.baseline);
    default:
        return {};
    }
}

QVariant MetricsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == BaselineColumn)
        return headerData(section, orientation, Qt::DisplayRole); // whole where the view cuts it
    if (orientation == Qt::Horizontal && role == Qt::TextAlignmentRole && section == BaselineColumn)
        return QVariant(Qt::AlignLeft | Qt::AlignVCenter); // a cut title keeps its start: "Baseline: ..."
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case SectionColumn:
        //: metrics table column: Nsight Compute's report section ("Memory Workload Analysis")
        return tr("Section");
    case SizeColumn:
        return tr("Size");
    case MetricColumn:
        //: metrics table column: the metric's label in Nsight Compute; the raw name is in the tooltip
        return tr("Metric");
    case BaselineColumn:
        //: metrics table column: the same metric in the baseline iteration; %1: the pinned one
        return m_pinnedBaseline.isEmpty() ? tr("Baseline") : tr("Baseline: %1").arg(m_pinnedBaseline);
    case ValueColumn:
        return tr("Value");
    case VsParentColumn:
        //: metrics table column: change against the compared (parent) iteration
        return tr("Δ parent");
    case VsBaselineColumn:
        return tr("Δ baseline");
    default:
        return {};
    }
}

} // namespace kl::gui

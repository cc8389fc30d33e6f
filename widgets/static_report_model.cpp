#include "widgets/static_report_model.h"

#include "core/report/static_severity.h"

#include "widgets/string_conversion.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace kl::gui {

namespace {

QString formatBytes(std::int64_t bytes)
{
    if (bytes < 1024)
        //: a byte count; B = bytes
        return StaticReportModel::tr("%1 B").arg(bytes);
    //: a size in KiB (1024 bytes)
    return StaticReportModel::tr("%1 KiB").arg(static_cast<double>(bytes) / 1024.0, 0, 'g', 4);
}

QString formatDims(const std::array<std::int64_t, 3>& dims)
{
    if (dims[1] == 1 && dims[2] == 1)
        return QString::number(dims[0]);
    return QString::number(dims[0]) + QStringLiteral("×") + QString::number(dims[1]) + QStringLiteral("×")
        + QString::number(dims[2]);
}

QString limiterName(const Occupancy& occupancy)
{
    switch (occupancy.limiter) {
    case OccupancyLimiter::Warps:
        //: what limits occupancy: the SM's warp slots
        return StaticReportModel::tr("warps");
    case OccupancyLimiter::Registers:
        return StaticReportModel::tr("registers");
    case OccupancyLimiter::SharedMemory:
        return StaticReportModel::tr("shared memory");
    case OccupancyLimiter::Blocks:
        //: what limits occupancy: the SM's maximum resident blocks
        return StaticReportModel::tr("blocks");
    case OccupancyLimiter::Barriers:
        return StaticReportModel::tr("barriers");
    case OccupancyLimiter::None:
        return {};
    }
    return {};
}

QString limitText(int limit) { return limit == Occupancy::kNoLimit ? QStringLiteral("–") : QString::number(limit); }

} // namespace

StaticReportModel::StaticReportModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void StaticReportModel::setReport(std::shared_ptr<const StaticReport> report)
{
    beginResetModel();
    m_report = std::move(report);
    endResetModel();
}

void StaticReportModel::clear() { setReport(nullptr); }

std::vector<OccupancyChart::KernelShape> StaticReportModel::kernelShapes() const
{
    std::vector<OccupancyChart::KernelShape> shapes;
    if (!m_report)
        return shapes;
    const bool severalSizes = m_report->launches.size() > 1;
    for (const StaticReport::PerLaunch& launch : m_report->launches) {
        OccupancyChart::KernelShape shape;
        shape.kernel = toQString(launch.kernel);
        if (severalSizes)
            shape.kernel += QStringLiteral(" @ ") + toQString(launch.sizes.label);
        shape.threadsPerBlock = static_cast<int>(launch.launch.threadsPerBlock());
        shape.registers = launch.resources.registers;
        shape.sharedBytes = launch.sharedBytes;
        shape.barriers = launch.resources.barriers;
        shapes.push_back(shape);
    }
    return shapes;
}

QString StaticReportModel::summary() const
{
    if (!m_report)
        return {};
    if (!m_report->ok())
        return toQString(m_report->firstProblem());
    if (m_report->launches.empty())
        return tr("No launches at the main sizes.");
    const StaticReport::PerLaunch& first = m_report->launches.front();
    //: status summary; %1 kernel, %2 registers per thread, %3 occupancy percent, %4 limiter, %5 waves
    return tr("%1: %2 registers, %3% occupancy (limited by %4), %5 waves")
        .arg(toQString(first.kernel))
        .arg(first.resources.registers)
        .arg(100.0 * first.occupancy.theoretical, 0, 'f', 0)
        .arg(limiterName(first.occupancy))
        .arg(first.waves, 0, 'f', 2);
}

int StaticReportModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() || !m_report ? 0 : static_cast<int>(m_report->launches.size());
}

int StaticReportModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant StaticReportModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const StaticReport::PerLaunch& launch = m_report->launches[static_cast<std::size_t>(index.row())];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        return display(launch, column);
    case RawValueRole:
        return raw(launch, column);
    case Qt::ToolTipRole:
        return toolTip(launch, column);
    case WarningRole:
        return severity(launch, column) > 0;
    case Qt::TextAlignmentRole:
        if (column == KernelColumn || column == SizeColumn || column == LimiterColumn)
            return QVariant::fromValue(Qt::Alignment(Qt::AlignLeft | Qt::AlignVCenter));
        return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::BackgroundRole:
        switch (severity(launch, column)) {
        case 1:
            return QBrush(QColor(0xff, 0xf1, 0xc7));
        case 2:
            return QBrush(QColor(0xfc, 0xd9, 0xd9));
        default:
            return {};
        }
    case Qt::ForegroundRole:
        return severity(launch, column) == 2 ? QVariant(QBrush(QColor(0x8b, 0x0d, 0x0d))) : QVariant();
    case Qt::FontRole:
        if (column == KernelColumn || severity(launch, column) == 2) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    default:
        return {};
    }
}

QVariant StaticReportModel::display(const StaticReport::PerLaunch& launch, int column) const
{
    const KernelResources& resources = launch.resources;
    switch (column) {
    case KernelColumn:
        return toQString(launch.kernel);
    case SizeColumn:
        return toQString(launch.sizes.label);
    case RegistersColumn:
        return resources.registers;
    case StaticSharedColumn:
        return formatBytes(resources.staticSharedBytes);
    case DynamicSharedColumn:
        return formatBytes(launch.launch.sharedBytes);
    case StackFrameColumn:
        return formatBytes(resources.stackFrameBytes);
    case SpillStoresColumn:
        return formatBytes(resources.spillStoreBytes);
    case SpillLoadsColumn:
        return formatBytes(resources.spillLoadBytes);
    case BarriersColumn:
        return resources.barriers;
    case ThreadsColumn:
        return formatDims(launch.launch.block);
    case GridColumn:
        return formatDims(launch.launch.grid);
    case BlocksPerSmColumn:
        return launch.occupancy.blocksPerSm;
    case OccupancyColumn:
        if (!launch.occupancy.error.empty())
            //: occupancy cell when the launch cannot run at all
            return tr("cannot run");
        return tr("%1%").arg(100.0 * launch.occupancy.theoretical, 0, 'f', 1);
    case LimiterColumn:
        return limiterName(launch.occupancy);
    case WavesColumn:
        return QString::number(launch.waves, 'f', 2);
    default:
        return {};
    }
}

QVariant StaticReportModel::raw(const StaticReport::PerLaunch& launch, int column) const
{
    const KernelResources& resources = launch.resources;
    switch (column) {
    case StaticSharedColumn:
        return qlonglong(resources.staticSharedBytes);
    case DynamicSharedColumn:
        return qlonglong(launch.launch.sharedBytes);
    case StackFrameColumn:
        return qlonglong(resources.stackFrameBytes);
    case SpillStoresColumn:
        return qlonglong(resources.spillStoreBytes);
    case SpillLoadsColumn:
        return qlonglong(resources.spillLoadBytes);
    case ThreadsColumn:
        return qlonglong(launch.launch.threadsPerBlock());
    case GridColumn:
        return qlonglong(launch.launch.blocks());
    case OccupancyColumn:
        return launch.occupancy.theoretical;
    case WavesColumn:
        return launch.waves;
    default:
        return display(launch, column);
    }
}

QVariant StaticReportModel::toolTip(const StaticReport::PerLaunch& launch, int column) const
{
    const KernelResources& resources = launch.resources;
    const Occupancy& occupancy = launch.occupancy;
    switch (column) {
    case KernelColumn:
        //: tooltip; %1 the symbol in the cubin, %2 the architecture
        return tr("Symbol: %1\nCompiled for %2").arg(toQString(resources.loweredName), toQString(resources.arch));
    case StaticSharedColumn:
    case DynamicSharedColumn:
        if (launch.needsSharedOptIn)
            //: tooltip; %1 bytes of shared memory per block
            return tr("%1 bytes per block in all: above the 48 KiB default, the launch must opt in")
                .arg(launch.sharedBytes);
        return tr("%1 bytes per block in all (static + dynamic)").arg(launch.sharedBytes);
    case StackFrameColumn:
        return resources.stackFrameBytes > 0
            ? tr("A stack frame lives in local memory (off-chip, cached) even without spills.")
            : QVariant();
    case SpillStoresColumn:
    case SpillLoadsColumn:
        return resources.spillStoreBytes + resources.spillLoadBytes > 0
            ? tr("Registers spilled to local memory: fewer live values, smaller tiles or __launch_bounds__ help.")
            : QVariant();
    case ThreadsColumn:
        return tr("Block %1").arg(formatDims(launch.launch.block));
    case GridColumn:
        //: tooltip; %1 grid dims, %2 total blocks
        return tr("Grid %1 = %2 blocks").arg(formatDims(launch.launch.grid)).arg(launch.launch.blocks());
    case BlocksPerSmColumn:
    case OccupancyColumn:
    case LimiterColumn:
        if (!occupancy.error.empty())
            return toQString(occupancy.error);
        //: tooltip of the occupancy cells: each limit on blocks per SM; – means no limit
        return tr("%1 of %2 warps per SM\nBlocks per SM allowed by warps %3, registers %4, shared memory %5, "
                  "blocks %6, barriers %7")
            .arg(occupancy.activeWarpsPerSm)
            .arg(occupancy.maxWarpsPerSm)
            .arg(limitText(occupancy.limitWarps), limitText(occupancy.limitRegisters),
                limitText(occupancy.limitSharedMemory), limitText(occupancy.limitBlocks),
                limitText(occupancy.limitBarriers));
    case WavesColumn:
        //: tooltip; %n whole waves
        return tr("%n wave(s) over all SMs; a fraction is a partly filled tail wave", nullptr,
            static_cast<int>(launch.wholeWaves));
    default:
        return {};
    }
}

int StaticReportModel::severity(const StaticReport::PerLaunch& launch, int column) const
{
    // core's classification (what `check` prints), with the findings' thresholds.
    std::optional<report::StaticFigure> figure;
    switch (column) {
    case SpillStoresColumn:
        figure = report::StaticFigure::SpillStores;
        break;
    case SpillLoadsColumn:
        figure = report::StaticFigure::SpillLoads;
        break;
    case StackFrameColumn:
        figure = report::StaticFigure::StackFrame;
        break;
    case OccupancyColumn:
    case BlocksPerSmColumn:
        figure = report::StaticFigure::Occupancy;
        break;
    case LimiterColumn:
        figure = report::StaticFigure::Limiter;
        break;
    case StaticSharedColumn:
    case DynamicSharedColumn:
        figure = report::StaticFigure::Shared;
        break;
    case WavesColumn:
        figure = report::StaticFigure::Waves;
        break;
    default:
        return 0;
    }
    switch (report::staticSeverity(launch, *figure)) {
    case report::Severity::Critical:
        return 2;
    case report::Severity::Warning:
        return 1;
    case report::Severity::None:
        break;
    }
    return 0;
}

QVariant StaticReportModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Vertical) {
        if (role != Qt::DisplayRole || !m_report || section < 0 || section >= rowCount())
            return QAbstractTableModel::headerData(section, orientation, role);
        const StaticReport::PerLaunch& launch = m_report->launches[static_cast<std::size_t>(section)];
        //: header of one launch; %1 kernel name, %2 size label
        return tr("%1 @ %2").arg(toQString(launch.kernel), toQString(launch.sizes.label));
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case RegistersColumn:
            return tr("Registers per thread (ptxas)");
        case StaticSharedColumn:
            return tr("Static shared memory per block (ptxas)");
        case DynamicSharedColumn:
            return tr("Dynamic shared memory per block (the launch rule)");
        case StackFrameColumn:
            return tr("Stack frame per thread: local memory");
        case BlocksPerSmColumn:
            return tr("Resident blocks per SM (theoretical)");
        case WavesColumn:
            return tr("Grid blocks / (blocks per SM × SMs)");
        default:
            return {};
        }
    }
    if (role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case KernelColumn:
        return tr("Kernel");
    case SizeColumn:
        //: the size set a launch was planned for (e.g. 8192x4096)
        return tr("Size");
    case RegistersColumn:
        return tr("Registers per thread");
    case StaticSharedColumn:
        return tr("Static shared memory");
    case DynamicSharedColumn:
        return tr("Dynamic shared memory");
    case StackFrameColumn:
        //: per-thread stack frame (local memory)
        return tr("Stack frame");
    case SpillStoresColumn:
        //: bytes of register spill stores per thread
        return tr("Spill stores");
    case SpillLoadsColumn:
        return tr("Spill loads");
    case BarriersColumn:
        //: named barriers the kernel uses
        return tr("Barriers");
    case ThreadsColumn:
        return tr("Threads per block");
    case GridColumn:
        //: the launch grid
        return tr("Grid");
    case BlocksPerSmColumn:
        return tr("Blocks per SM");
    case OccupancyColumn:
        return tr("Theoretical occupancy");
    case LimiterColumn:
        //: what limits occupancy
        return tr("Occupancy limiter");
    case WavesColumn:
        return tr("Waves");
    default:
        return {};
    }
}

} // namespace kl::gui

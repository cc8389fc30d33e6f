// Nsight Compute's sections and labels for the metrics our runner collects (runner/metric_sets.cpp).

#include "core/findings/metric_sections.h"

#include "core/model/number_text.h"

#include "core/findings/metric_facts.h"
#include "core/findings/stall_reasons.h"

#include <array>
#include <cmath>
#include <cstdio>

namespace kl {

namespace {

struct Known {
    std::string_view name;
    MetricSection section;
    std::string_view label;
    std::string_view guidance;
};

// Labels follow Nsight Compute's report; guidance is ours, one line, for a poor value.
constexpr std::array kKnown {
    Known { "gpu__time_duration.sum", MetricSection::SpeedOfLight, "Duration", "" },
    Known { "sm__throughput.avg.pct_of_peak_sustained_elapsed", MetricSection::SpeedOfLight, "Compute (SM) Throughput",
        "low with low memory throughput too: latency-bound, see Warp State" },
    Known { "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", MetricSection::SpeedOfLight,
        "Memory Throughput", "low for a memory-bound kernel: more bytes in flight, wider loads" },
    Known {
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", MetricSection::SpeedOfLight, "DRAM Throughput", "" },
    Known { "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", MetricSection::ComputeWorkload,
        "Tensor Pipe Utilization", "low in a matrix kernel: feed the tensor cores (larger tiles, async copies)" },
    Known { "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", MetricSection::ComputeWorkload,
        "Tensor Pipe (HMMA) Utilization", "" },
    Known { "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", MetricSection::ComputeWorkload,
        "FMA Pipe Utilization", "" },
    Known { "sm__inst_executed_pipe_tensor.sum", MetricSection::ComputeWorkload, "Tensor Instructions Executed", "" },
    Known { "smsp__issue_active.avg.per_cycle_active", MetricSection::ComputeWorkload, "Issue Slots Busy",
        "low: warps are stalled, see Warp State" },
    Known { "smsp__issue_active.avg.per_cycle_elapsed", MetricSection::ComputeWorkload, "Issue Slots Busy (elapsed)",
        "low: warps are stalled, see Warp State" },
    Known { "dram__bytes_read.sum", MetricSection::MemoryWorkload, "DRAM Read", "" },
    Known { "dram__bytes_write.sum", MetricSection::MemoryWorkload, "DRAM Written", "" },
    Known { "dram__bytes.sum.per_second", MetricSection::MemoryWorkload, "DRAM Bandwidth", "" },
    Known { "l1tex__t_sector_hit_rate.pct", MetricSection::MemoryWorkload, "L1/TEX Hit Rate", "" },
    Known { "lts__t_sector_hit_rate.pct", MetricSection::MemoryWorkload, "L2 Hit Rate",
        "low with reused data: tile so that a block's reuse fits in L2" },
    Known { "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio", MetricSection::MemoryWorkload,
        "Global Load Sectors/Request", "above 4 per 32-bit warp access: uncoalesced loads" },
    Known { "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio", MetricSection::MemoryWorkload,
        "Global Store Sectors/Request", "above 4 per 32-bit warp access: uncoalesced stores" },
    Known { "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", MetricSection::MemoryWorkload,
        "Shared Load Bank Conflicts", "pad or swizzle the shared array" },
    Known { "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", MetricSection::MemoryWorkload,
        "Shared Store Bank Conflicts", "pad or swizzle the shared array" },
    Known { "smsp__inst_executed_op_local_ld.sum", MetricSection::MemoryWorkload, "Local Loads (spills)",
        "non-zero: registers spill; fewer live values, or __launch_bounds__ / -maxrregcount" },
    Known { "smsp__inst_executed_op_local_st.sum", MetricSection::MemoryWorkload, "Local Stores (spills)",
        "non-zero: registers spill; fewer live values, or __launch_bounds__ / -maxrregcount" },
    Known { "launch__registers_per_thread", MetricSection::LaunchStatistics, "Registers Per Thread", "" },
    Known { "launch__block_size", MetricSection::LaunchStatistics, "Block Size", "" },
    Known { "launch__grid_size", MetricSection::LaunchStatistics, "Grid Size", "" },
    Known { "launch__shared_mem_per_block_dynamic", MetricSection::LaunchStatistics, "Dynamic Shared Memory Per Block",
        "" },
    Known { "launch__waves_per_multiprocessor", MetricSection::LaunchStatistics, "Waves Per SM",
        "a fraction past a whole number: the last wave leaves SMs idle" },
    Known { "sm__warps_active.avg.pct_of_peak_sustained_active", MetricSection::Occupancy, "Achieved Occupancy",
        "far under the theoretical occupancy: imbalanced blocks or a short tail" },
    Known { "smsp__average_warp_latency_per_inst_issued.ratio", MetricSection::WarpState, "Warp Cycles per Issue",
        "high: few eligible warps hide latency; see the stall reasons" },
};

constexpr std::string_view kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr std::string_view kStallSuffix = "_per_issue_active.ratio";

std::string format(double value, int decimals, std::string_view unit)
{
    std::string out = fixed(value, decimals);
    if (!unit.empty()) {
        out += ' ';
        out += unit;
    }
    return out;
}

// Three significant figures and a prefix from the list (each step a factor of `step`).
std::string scaled(double value, double step, std::initializer_list<std::string_view> units)
{
    auto unit = units.begin();
    while (std::abs(value) >= step && unit + 1 != units.end()) {
        value /= step;
        ++unit;
    }
    const double size = std::abs(value);
    const int decimals = size == std::floor(size) && unit == units.begin() ? 0 : size >= 100 ? 1 : 2;
    return format(value, decimals, *unit);
}

} // namespace

MetricPresentation presentMetric(std::string_view metric)
{
    for (std::size_t i = 0; i < kKnown.size(); ++i) {
        if (kKnown[i].name == metric)
            return { kKnown[i].section, std::string(kKnown[i].label), static_cast<int>(i),
                std::string(kKnown[i].guidance) };
    }
    if (metric.starts_with(kStallPrefix) && metric.ends_with(kStallSuffix)) {
        const std::string reason(
            metric.substr(kStallPrefix.size(), metric.size() - kStallPrefix.size() - kStallSuffix.size()));
        if (const StallReason* known = stallReason(reason)) {
            const int rank = static_cast<int>(kKnown.size() + (known - stallReasons().data()));
            return { MetricSection::WarpState, known->label, rank,
                known->directions.empty() ? std::string() : known->directions.front() };
        }
    }
    return { MetricSection::Other, std::string(metric), 1000, {} };
}

std::string_view sectionTitle(MetricSection section)
{
    switch (section) {
    case MetricSection::SpeedOfLight:
        return "Speed of Light";
    case MetricSection::ComputeWorkload:
        return "Compute Workload";
    case MetricSection::MemoryWorkload:
        return "Memory Workload";
    case MetricSection::LaunchStatistics:
        return "Launch Statistics";
    case MetricSection::Occupancy:
        return "Occupancy";
    case MetricSection::WarpState:
        return "Warp State";
    case MetricSection::Other:
        break;
    }
    return "Other";
}

std::string readableValue(std::string_view metric, double value)
{
    const std::string unit = metricUnit(metric);
    if (unit == "%")
        return format(value, 1, "%");
    if (unit == "ns")
        return scaled(value, 1000.0, { "ns", "µs", "ms", "s" });
    if (unit == "byte")
        return scaled(value, 1000.0, { "B", "KB", "MB", "GB", "TB" });
    if (unit == "byte/s")
        return scaled(value, 1000.0, { "B/s", "KB/s", "MB/s", "GB/s", "TB/s" });
    if (unit == "inst")
        return scaled(value, 1000.0, { "", "K", "M", "G" });
    if (unit == "cycle/inst")
        return format(value, 2, "cycles");
    if (unit == "inst/cycle")
        return format(value, 2, "inst/cycle");
    if (metric.ends_with(".sum"))
        return scaled(value, 1000.0, { "", "K", "M", "G" });
    const double size = std::abs(value);
    return format(value, size == std::floor(size) ? 0 : 2, "");
}

} // namespace kl

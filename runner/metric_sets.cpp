#include "runner/metric_sets.h"

#include <algorithm>

namespace kl::runner {

std::vector<std::string> metricsFor(protocol::MetricSet set)
{
    switch (set) {
    case protocol::MetricSet::None:
        return {};
    case protocol::MetricSet::Default:
        return {
            "gpu__time_duration.sum",
            "dram__bytes_read.sum",
            "dram__bytes_write.sum",
            "dram__bytes.sum.per_second",
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            "smsp__inst_executed_op_local_ld.sum",
            "smsp__inst_executed_op_local_st.sum",
            // Per elapsed cycle: ".per_cycle_active" needs counters that pushed this set to a second pass
            // on GH100 (a pass is ~80 ms of CUPTI's kernel replay per candidate, docs/measurements.md).
            "smsp__issue_active.avg.per_cycle_elapsed",
            "smsp__average_warp_latency_per_inst_issued.ratio",
        };
    case protocol::MetricSet::SpeedOfLight:
        return {
            "gpu__time_duration.sum",
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__bytes_read.sum",
            "dram__bytes_write.sum",
            "l1tex__t_sector_hit_rate.pct",
            "lts__t_sector_hit_rate.pct",
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
            // The compute side (core/findings/rules_compute.cpp): tensor-pipe and FMA-pipe utilisation and
            // tensor instructions executed. Here, not in the default set: each of them alone takes the
            // default set from 1 pass to 2 on GH100, and this set stays at 9 with them
            // (test_metric_passes).
            "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
            "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
            "sm__inst_executed_pipe_tensor.sum",
            "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
        };
    case protocol::MetricSet::Stalls: {
        std::vector<std::string> metrics { "gpu__time_duration.sum",
            "smsp__average_warp_latency_per_inst_issued.ratio" };
        for (const char* reason : { "barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss",
                 "lg_throttle", "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc",
                 "no_instruction", "not_selected", "selected", "short_scoreboard", "sleeping", "tex_throttle", "wait" })
            metrics.push_back(std::string("smsp__average_warps_issue_stalled_") + reason + "_per_issue_active.ratio");
        return metrics;
    }
    }
    return {};
}

double clampPercentage(const std::string& metric, double value)
{
    const bool percentage = metric.ends_with(".pct") || metric.find(".pct_of_peak") != std::string::npos;
    return percentage ? std::clamp(value, 0.0, 100.0) : value;
}

} // namespace kl::runner

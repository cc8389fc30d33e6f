// Units and directions of profiled metrics, by their Nsight Compute names.
#include "core/findings/metric_facts.h"

namespace kl {

namespace {

bool has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

} // namespace

std::string metricUnit(std::string_view metric)
{
    if (has(metric, "pct"))
        return "%";
    if (metric.ends_with(".per_second"))
        return "byte/s";
    if (metric.starts_with("gpu__time_duration"))
        return "ns";
    if (has(metric, "bytes"))
        return "byte";
    if (has(metric, "warps_issue_stalled") || has(metric, "warp_latency"))
        return "cycle/inst";
    if (has(metric, "per_cycle"))
        return "inst/cycle";
    if (has(metric, "inst_executed"))
        return "inst";
    return {};
}

MetricDirection metricDirection(std::string_view metric)
{
    if (metric.starts_with("gpu__time_duration") || has(metric, "stalled") || has(metric, "warp_latency")
        || has(metric, "op_local") || has(metric, "bank_conflicts"))
        return MetricDirection::LowerIsBetter;
    if (has(metric, "per_second") || has(metric, "throughput") || has(metric, "issue_active")
        || has(metric, "hit_rate"))
        return MetricDirection::HigherIsBetter;
    return MetricDirection::Depends;
}

std::string_view directionText(MetricDirection direction)
{
    switch (direction) {
    case MetricDirection::HigherIsBetter:
        return "higher is better";
    case MetricDirection::LowerIsBetter:
        return "lower is better";
    case MetricDirection::Depends:
        break;
    }
    return {};
}

} // namespace kl

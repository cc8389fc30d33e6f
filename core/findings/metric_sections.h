#pragma once
// Where a profiled metric sits in Nsight Compute's report and how a person reads it: its section
// (Speed of Light, Memory Workload, ...), a readable label ("L2 Hit Rate"), its value in readable
// units ("40.22 µs", "3.95 TB/s") and a line of guidance. The GUI's Metrics page shows this; the
// knowledge stays here, beside metric_facts.h, so that the CLI can say the same.
#include <string>
#include <string_view>

namespace kl {

// In the order Nsight Compute's details page lists them.
enum class MetricSection {
    SpeedOfLight,
    ComputeWorkload,
    MemoryWorkload,
    LaunchStatistics,
    Occupancy,
    WarpState,
    Other
};

struct MetricPresentation {
    MetricSection section = MetricSection::Other;
    std::string label; // the raw name when the metric is not known
    int order = 1000; // rank inside its section
    std::string guidance; // what to do when the value is poor; may be empty
};

MetricPresentation presentMetric(std::string_view metric);
// Nsight Compute's section names, shortened to fit a laptop's table: "Memory Workload".
std::string_view sectionTitle(MetricSection section);
// The value with a scaled unit: ns as ns/µs/ms, bytes as KB/MB/GB, bytes/s as GB/s or TB/s, counts
// as K/M/G, percentages with one decimal.
std::string readableValue(std::string_view metric, double value);

} // namespace kl

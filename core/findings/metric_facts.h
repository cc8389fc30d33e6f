#pragma once
// What a profiled metric is, from its Nsight Compute name, as both front ends say it: its unit, and
// which way is better for the kernel's speed. The GUI's Metrics table and `kernelloop-cli show` read
// these; neither keeps a rule of its own.
#include <string>
#include <string_view>

namespace kl {

enum class MetricDirection { HigherIsBetter, LowerIsBetter, Depends };

// "%", "byte/s", "ns", "byte", "cycle/inst", "inst/cycle", "inst", or empty when the name does not say.
std::string metricUnit(std::string_view metric);
MetricDirection metricDirection(std::string_view metric);
// "higher is better", "lower is better"; empty when it depends.
std::string_view directionText(MetricDirection direction);

} // namespace kl

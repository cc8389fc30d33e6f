#pragma once
// The metric sets a request may ask for (Nsight Compute's names on sm_90: docs/gpu-facts.md, "Metric names"): a
// cheap default (one pass on GH100: tests/runner/test_metric_passes), speed-of-light, and warp stall reasons.
#include "core/protocol/messages.h"

#include <string>
#include <vector>

namespace kl::runner {

std::vector<std::string> metricsFor(protocol::MetricSet set);

// Percentages from multi-pass collection can exceed 100 (an L2 hit rate of 101.35% was seen):
// clamped to [0, 100] for metrics whose name says they are percentages.
double clampPercentage(const std::string& metric, double value);

#ifdef KL_WITH_CUPTI
// The passes CUPTI's range profiler needs for `metrics` on `chip` ("GH100"), from the Profiler Host
// API alone: no device, no driver. 0 with `why` set when CUPTI refuses the list or the chip.
int hostPasses(const std::string& chip, const std::vector<std::string>& metrics, std::string& why);
#endif

} // namespace kl::runner

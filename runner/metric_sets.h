#pragma once
// The metric sets a request may ask for (GPU-NOTES.md, Nsight Compute's names on sm_90): a cheap
// default (about 2 passes on GH100), speed-of-light, and warp stall reasons.
#include "core/protocol/messages.h"

#include <string>
#include <vector>

namespace kl::runner {

std::vector<std::string> metricsFor(protocol::MetricSet set);

// Percentages from multi-pass collection can exceed 100 (an L2 hit rate of 101.35% was seen):
// clamped to [0, 100] for metrics whose name says they are percentages.
double clampPercentage(const std::string& metric, double value);

} // namespace kl::runner

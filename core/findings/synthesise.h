#pragma once
// Telemetry → findings: the rules of the seeds' metric→directive table, in the spirit of Nsight
// Compute's guided analysis. Every rule reads only what it needs and stays silent when a value is
// missing; thresholds come from FindingThresholds alone.
#include "core/findings/finding.h"
#include "core/findings/telemetry.h"
#include "core/findings/thresholds.h"

#include <string>
#include <vector>

namespace kl {

// All findings for one kernel, highest priority first (ties by id, so the order is stable).
std::vector<Finding> synthesise(const Telemetry& telemetry, const FindingThresholds& thresholds = defaultThresholds());

// Every id a rule can produce (stall.<reason> once per reason), for documentation and tests.
std::vector<std::string> findingIds();

} // namespace kl

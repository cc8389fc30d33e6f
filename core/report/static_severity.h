#pragma once
// How serious each figure of the static resource report is (spills, stack frame, occupancy and its
// limiter, shared-memory opt-in, waves), with the findings' thresholds: one classification for the
// GUI's report table and for `check`.
#include "core/compile/static_report.h"
#include "core/findings/thresholds.h"

#include <string>
#include <vector>

namespace kl::report {

enum class Severity { None, Warning, Critical };
const char* severityName(Severity severity); // "none", "warning", "critical"

enum class StaticFigure { SpillStores, SpillLoads, StackFrame, Occupancy, Limiter, Shared, Waves };

Severity staticSeverity(
    const StaticReport::PerLaunch& launch, StaticFigure figure, const FindingThresholds& thresholds = {});

// One line per figure that is not None, most serious first:
// "critical: ln_gelu at 8192x4096: 64 B of spill stores".
std::vector<std::string> staticSeverityLines(
    const StaticReport::PerLaunch& launch, const FindingThresholds& thresholds = {});

} // namespace kl::report

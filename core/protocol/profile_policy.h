#pragma once
// Which candidates get CUPTI counters when the loop asks only for promising ones
// (EvaluateOptions::profileMinSpeedup): decided on the runner from the job's own timing, so that
// the baseline it is compared with is the one timed on the same GPU in the same job.
#include "core/protocol/messages.h"

#include <optional>
#include <string>

namespace kl::protocol {

// The case's speedup over its job's baseline: the baseline kernel's, else (a problem with no kernel
// yet) PyTorch eager's, timed in the same job.
std::optional<double> speedupVsJobBaseline(const CaseTiming& timing);

// The candidate's speedup over its job's baseline: the geometric mean over the timed cases, as the
// loop aggregates sizes. None when a case has no baseline figure.
std::optional<double> speedupOverBaseline(const Timing& timing);

// Empty when the candidate is to be profiled; else the detail that says why not (both figures).
std::string profileSkipReason(const Timing& timing, double minSpeedup);

} // namespace kl::protocol

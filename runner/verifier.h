#pragma once
// Step 2 of evaluate (docs/runner-protocol.md): every case, every trial, fresh inputs, the
// reference and then the candidate, and the ordered checks. Stops at the first failure.
#include "core/protocol/messages.h"
#include "runner/device.h"
#include "runner/helper_kernels.h"
#include "runner/job_failure.h"
#include "runner/program.h"

#include <functional>
#include <optional>
#include <string>

namespace kl::runner {

using ProgressFunction = std::function<void(const char* phase, int done, int total)>;

struct VerificationOutcome {
    protocol::Verification verification;
    std::optional<JobFailure> failure; // the first failure, if any
};

VerificationOutcome verifyCandidate(const Device& device, const HelperKernels& helpers, LoadedModule& reference,
                                    LoadedModule& candidate, const protocol::EvaluateRequest& request,
                                    const ProgressFunction& progress);

} // namespace kl::runner

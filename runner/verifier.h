#pragma once
// Step 2 of evaluate (docs/runner-protocol.md): every case, every trial, fresh inputs, the
// reference and then the candidate, and the ordered checks. Stops at the first failure.
#include "core/protocol/messages.h"
#include "runner/case_memory.h"
#include "runner/device.h"
#include "runner/job_failure.h"
#include "runner/program.h"
#include "runner/python_reference.h"
#include "runner/reference_cache.h"
#include "runner/runner_kernels.h"

#include <functional>
#include <optional>
#include <string>

namespace kl::runner {

using ProgressFunction = std::function<void(const char* phase, int done, int total)>;

// Where verification's wall time went (milliseconds), for the phase report.
struct VerificationSplit {
    double prepare = 0.0; // inputs generated, outputs poisoned
    double reference = 0.0; // the reference's launches
    double candidate = 0.0; // the candidate's launches
    double checks = 0.0; // checksums, guards, comparison, reports
    double referenceTransfer = 0.0; // a PyTorch reference: copies through host shared memory
    double referenceWorker = 0.0; // a PyTorch reference: the worker's reply
    double referenceRestore = 0.0; // the reference's outputs written back from the runner's cache
    double referenceStore = 0.0; // the reference's outputs copied into the cache
    int referenceOnGpu = 0; // (case, trial)s whose PyTorch reference worked on the runner's buffers
    std::string referenceHostFallback; // why host copies stood in for the GPU path asked for
    int referenceHits = 0; // (case, trial)s whose reference outputs came from the cache
    int referenceRuns = 0; // (case, trial)s that ran the reference
};

struct VerificationOutcome {
    protocol::Verification verification;
    std::optional<JobFailure> failure; // the first failure, if any
    VerificationSplit split;
};

using ReferenceCache = ByteBoundedCache<ReferenceOutputs>;

// `reference` is null when the request has a Python reference; `worker` then computes it. With a
// `cache`, a (case, trial) whose reference outputs it holds restores them instead of running the
// reference, and one it lacks stores them (reference_cache.h).
VerificationOutcome verifyCandidate(const Device& device, const RunnerKernels& ownKernels, LoadedModule* reference,
    LoadedModule& candidate, const protocol::EvaluateRequest& request, const ProgressFunction& progress,
    PythonWorker* worker = nullptr, ReferenceCache* cache = nullptr);

} // namespace kl::runner

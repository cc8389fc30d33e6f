#pragma once
// A PyTorch reference, computed by the runner's Python worker (python_worker.h) on the case's own
// generated inputs, and timed there as a contender (eager, torch.compile).
#include "core/protocol/messages.h"
#include "runner/case_memory.h"
#include "runner/device.h"
#include "runner/python_worker.h"

namespace kl::runner {

// Where the reference's time went (milliseconds): the copies through host memory and the worker.
struct PythonReferenceSplit {
    double transfer = 0.0;
    double worker = 0.0;
};

// The reference's outputs of `testCase` into memory.referenceOutputs(). Throws JobFailure
// (bad-request: the reference failed, with its message) or CudaError from our own copies.
void computePythonReference(const Device& device, CaseMemory& memory, const protocol::Case& testCase,
    const protocol::PythonReference& reference, PythonWorker& worker, PythonReferenceSplit& split);

// Eager and torch.compile timed by the worker on the case's inputs (cold L2, CUDA events, median),
// into `timed` (eager, torchCompile, speedups against timed.candidate). Never throws for a
// contender that fails: torchCompileError says why.
void timePythonContenders(const Device& device, CaseMemory& memory, const protocol::Case& testCase,
    const protocol::PythonReference& reference, PythonWorker& worker, std::size_t flushBytes,
    protocol::CaseTiming& timed);

} // namespace kl::runner

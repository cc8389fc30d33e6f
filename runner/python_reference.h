#pragma once
// A PyTorch reference, computed by the runner's Python worker (python_worker.h) on the case's own
// generated inputs, and timed there as a contender (eager, torch.compile).
//
// Two ways for the tensors (issue 27): on the GPU, the worker opens the runner's own device buffers
// through CUDA IPC, reads the inputs in place and writes the reference's outputs into the runner's
// reference-output buffers, so nothing crosses the host; by the host path, each tensor's data region is
// copied through a file in /dev/shm both ways (seconds per trial on a multi-gigabyte problem). The host
// path stays as the fallback and says so when it stands in for the GPU one.
#include "core/protocol/messages.h"
#include "runner/case_memory.h"
#include "runner/device.h"
#include "runner/python_worker.h"

#include <map>
#include <set>
#include <string>

namespace kl::runner {

// The GPU path (CUDA IPC) unless $KL_REFERENCE_ON_GPU=0 (host copies, to compare the two).
bool referenceOnGpuWanted();

// Where the reference's time went (milliseconds): the copies through host memory (or opening the
// runner's buffers on the GPU path) and the worker; `hostFallback` says why the host path stood in for
// the GPU path that was asked for.
struct PythonReferenceSplit {
    double transfer = 0.0;
    double worker = 0.0;
    bool onGpu = false;
    std::string hostFallback;
};

// The reference's outputs of `testCase` into memory.referenceOutputs(). Throws JobFailure
// (bad-request: the reference failed, with its message) or CudaError from our own copies.
void computePythonReference(const Device& device, CaseMemory& memory, const protocol::Case& testCase,
    const protocol::PythonReference& reference, PythonWorker& worker, PythonReferenceSplit& split);

// How the contenders are repeated: as the candidate (adaptive: warm-up time, then the median's interval)
// or a fixed count (the protocol before issue 27, kept to compare).
struct ContenderBudget {
    bool adaptive = true;
    double warmupMs = 5.0;
    int minReps = 20;
    int maxReps = 2000;
    double halfWidth = 0.005;
    double timeCapMs = 100.0;
    int fixedWarmup = 5;
    int fixedReps = 50;
};

// Whether torch.compile is timed ($KL_CONTENDERS=eager: eager alone).
bool compileContenderWanted();

// Eager and torch.compile timed by the worker on the case's inputs (cold L2, CUDA events, median),
// into `timed` (eager, torchCompile, speedups against timed.candidate); where the time went into
// `phasesMs` (time_contenders_*). Never throws for a contender that fails: torchCompileError says why.
void timePythonContenders(const Device& device, CaseMemory& memory, const protocol::Case& testCase,
    const protocol::PythonReference& reference, PythonWorker& worker, std::size_t flushBytes,
    const ContenderBudget& budget, protocol::CaseTiming& timed, std::map<std::string, double>& phasesMs,
    std::string& note);

// torch.compile's compilation for the request's timed sizes, sent to the worker without waiting (it
// compiles while the runner loads and verifies); once per (source, size) and runner: `warmed` holds
// what was sent. Returns how many sizes were sent.
int warmCompiledContenders(
    const protocol::EvaluateRequest& request, PythonWorker& worker, std::set<std::string>& warmed);

} // namespace kl::runner

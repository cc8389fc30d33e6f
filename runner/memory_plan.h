#pragma once
// Whether a job fits the GPU, decided before anything is launched (issue 27). A real-size KernelBench
// problem moves gigabytes per call; without a plan it fails half-way, after minutes, on whichever
// allocation comes last. The plan adds up what each phase would allocate (case memory with its
// guards, the reference's outputs, scratch, the reference cache's copy, the L2 flush, the same-size
// copy, the PyTorch worker's own tensors) and takes the larger phase as the peak. Phases run one after
// the other and free their memory, so the peak, not the sum, is what must fit. No CUDA here: the
// arithmetic is tested on the CPU (tests/runner/test_memory_plan.cpp).
#include "core/protocol/messages.h"

#include <cstddef>
#include <optional>
#include <string>

namespace kl::runner {

// What the runner knows before the job: which of its long-lived allocations already exist, how the
// reference's outputs are computed and kept.
struct MemoryPlanContext {
    std::size_t flushBytes = 0; // the timer's L2 flush buffer this job uses
    bool flushAllocated = false; // already held by the runner (then not new)
    bool leanProfile = true; // the profiled case keeps its timing memory, without the reference's outputs
    std::size_t referenceCacheCapacity = 0; // 0: off
    bool referenceCacheOnDevice = true;
    bool referenceOnGpu = false; // a PyTorch reference working on the runner's buffers (no device copies)
    std::size_t headroomBytes = 256ull << 20; // contexts, modules, a reference's temporaries
};

// The bytes one phase would allocate at its peak, by what they are for.
struct PhaseMemory {
    std::string phase; // "verify" or "time"
    std::string caseLabel; // the case at the peak
    std::size_t inputs = 0;
    std::size_t outputs = 0;
    std::size_t referenceOutputs = 0;
    std::size_t scratch = 0;
    std::size_t referenceCache = 0;
    std::size_t flush = 0;
    std::size_t copy = 0; // the same-size copy's source and target
    std::size_t worker = 0; // the PyTorch worker's tensors (inputs moved to the device, results, flush)
    std::size_t keptCase = 0; // the profiled case's memory, kept from an earlier timed case
    std::size_t total() const;
};

struct MemoryPlan {
    PhaseMemory peak; // the larger phase
    std::size_t headroom = 0;
    std::size_t needed() const { return peak.total() + headroom; }
    // "needs 25.8 GB at its peak (verify of main: inputs 6.4 GB, ...)".
    std::string describe() const;
};

MemoryPlan planJobMemory(const protocol::EvaluateRequest& request, const MemoryPlanContext& context);

// Null when the plan fits `freeBytes` (what cuMemGetInfo says, plus what the runner could release);
// else the out-of-memory detail, naming the sizes.
std::optional<std::string> memoryShortfall(const MemoryPlan& plan, std::size_t freeBytes, std::size_t totalBytes);

// "6.44 GB", "512 MB", "12 kB", "0 B" (decimal, three significant figures).
std::string formatBytes(std::size_t bytes);

} // namespace kl::runner

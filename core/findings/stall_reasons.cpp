#include "core/findings/stall_reasons.h"

#include "core/findings/finding.h"

namespace kl {

const std::vector<StallReason>& stallReasons()
{
    using namespace hint;
    // Meanings follow Nsight Compute's Kernel Profiling Guide (warp scheduler states); the
    // wording and the directions are ours.
    static const std::vector<StallReason> reasons {
        { "long_scoreboard", "Stall Long Scoreboard",
            "waiting for data from the L1TEX path: global, local, surface or texture memory",
            { "put more independent loads in flight per thread before their first use (unroll, prefetch)",
                "use wider loads (16-byte vectors) so each instruction moves more bytes",
                "check for local memory (spills or a stack frame) feeding this dependency" },
            { kMoreBytesInFlight, kWiderVectors, kMoreWorkPerThread } },
        { "barrier", "Stall Barrier",
            "waiting at a block-wide barrier (__syncthreads) for the other warps of the block",
            { "give warps equal work between barriers", "use fewer barriers, or warp-level shuffles for reductions",
                "smaller blocks wait for fewer warps at each barrier" },
            { kFewerBarriers, kFewerThreads } },
        { "membar", "Stall Membar", "waiting on a memory barrier (__threadfence or a fence of atomics)",
            { "drop fences that are not needed, or narrow their scope (block instead of device)" }, {} },
        { "short_scoreboard", "Stall Short Scoreboard",
            "waiting for an MIO result that stays in the SM: shared memory, special functions (MUFU), dynamic branches",
            { "remove shared-memory bank conflicts", "keep values in registers instead of shared memory",
                "use cheaper math for transcendentals where accuracy allows" },
            { kPadShared, kMoreIlp } },
        { "mio_throttle", "Stall MIO Throttle",
            "held back because the MIO instruction queue was full: too many shared-memory or special-function "
            "instructions",
            { "issue fewer, wider shared-memory accesses", "remove shared-memory bank conflicts",
                "move work from special functions to FMA-based approximations" },
            { kWiderVectors, kPadShared } },
        { "lg_throttle", "Stall LG Throttle",
            "held back because the queue for local and global memory instructions was full",
            { "combine narrow loads and stores into wider vectors", "remove local memory (spills, stack arrays)",
                "interleave memory instructions with arithmetic" },
            { kWiderVectors, kStaticIndexing } },
        { "tex_throttle", "Stall TEX Throttle", "held back because the texture unit's queue was full",
            { "use fewer texture or surface fetches, or plain global loads", "reuse fetched values" },
            { kReuseOnChip } },
        { "math_pipe_throttle", "Stall Math Pipe Throttle",
            "waiting for a busy execution pipe: the kernel is limited by one math pipe",
            { "balance the instruction mix across pipes (FP32, FP16x2, integer, tensor cores)",
                "use packed half2 or tensor-core instructions where the maths allows" },
            {} },
        { "wait", "Stall Wait", "waiting a fixed number of cycles for a fixed-latency dependency",
            { "give each thread more independent work (ILP) so dependent instructions are further apart" },
            { kMoreIlp, kMoreWorkPerThread } },
        { "not_selected", "Stall Not Selected",
            "eligible, but another warp was issued: there are more ready warps than the scheduler needs",
            { "not a problem in itself; fewer threads or more work per thread can free registers" },
            { kMoreWorkPerThread } },
        { "no_instruction", "Stall No Instruction",
            "waiting for an instruction fetch: instruction cache misses, often from very long unrolled code",
            { "unroll less", "avoid large code paths that only some warps take" }, { kLessUnrolling } },
        { "branch_resolving", "Stall Branch Resolving",
            "waiting for a branch target to be computed or the warp's program counter to update",
            { "use fewer or uniform branches; prefer predication for short conditionals" }, {} },
        { "dispatch_stall", "Stall Dispatch", "held back by the dispatcher after being selected (a pipeline conflict)",
            { "usually rare; if dominant, profile the instruction mix" }, {} },
        { "drain", "Stall Drain", "waiting, after EXIT, for the warp's memory writes to drain",
            { "expected at the end of store-heavy kernels; more work per warp amortises it" }, { kMoreWorkPerThread } },
        { "imc_miss", "Stall IMC Miss", "waiting for an immediate-constant cache miss",
            { "index constant memory uniformly across a warp", "keep constants few and reused" }, {} },
        { "misc", "Stall Misc", "stalled for a miscellaneous hardware reason", { "rarely actionable" }, {} },
        { "sleeping", "Stall Sleeping", "sleeping: all threads in __nanosleep or blocked",
            { "check spin-waits and sleep lengths" }, {} },
        { "gmma", "Stall GMMA",
            "waiting to issue warpgroup MMA (wgmma) instructions until the warpgroup's dependencies resolve",
            { "pipeline more stages of operands ahead of the MMAs", "overlap loads of the next tile with the MMAs" },
            { kMoreBytesInFlight } },
        { "selected", "Selected", "issuing an instruction (not a stall)", {}, {}, false },
    };
    return reasons;
}

const StallReason* stallReason(const std::string& name)
{
    for (const auto& r : stallReasons()) {
        if (r.name == name)
            return &r;
    }
    return nullptr;
}

} // namespace kl

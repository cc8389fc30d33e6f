#include "runner/memory_plan.h"

#include "core/verify/patterns.h"

#include <algorithm>
#include <cstdio>

namespace kl::runner {

namespace {

std::size_t dataBytes(const protocol::Buffer& buffer)
{
    return static_cast<std::size_t>(std::max<std::int64_t>(buffer.elements(), 0)) * dtypeSize(buffer.dtype);
}

// As CaseMemory allocates it: every tensor with a guard either side.
std::size_t allocationBytes(const protocol::Buffer& buffer) { return dataBytes(buffer) + 2 * verify::kGuardBytes; }

std::size_t scratchBytes(const protocol::Program& program)
{
    std::size_t total = 0;
    for (const protocol::Scratch& scratch : program.scratch)
        total += static_cast<std::size_t>(std::max<std::int64_t>(scratch.elements, 0)) * dtypeSize(scratch.dtype);
    return total;
}

struct CaseBytes {
    std::size_t inputs = 0, outputs = 0, referenceOutputs = 0, scratch = 0;
    std::size_t inputData = 0, outputData = 0; // data regions alone (what the worker sees)
    std::size_t total() const { return inputs + outputs + referenceOutputs + scratch; }
};

CaseBytes caseBytes(const protocol::Case& testCase, bool withReference)
{
    CaseBytes bytes;
    for (const protocol::Buffer& buffer : testCase.buffers) {
        if (buffer.role == PlannedBuffer::Role::Output) {
            bytes.outputs += allocationBytes(buffer);
            bytes.outputData += dataBytes(buffer);
            if (withReference)
                bytes.referenceOutputs += allocationBytes(buffer);
        } else {
            bytes.inputs += allocationBytes(buffer);
            bytes.inputData += dataBytes(buffer);
        }
    }
    bytes.scratch = scratchBytes(testCase.programs.candidate);
    if (testCase.programs.baseline)
        bytes.scratch += scratchBytes(*testCase.programs.baseline);
    if (withReference)
        bytes.scratch += scratchBytes(testCase.programs.reference);
    return bytes;
}

void addCase(PhaseMemory& phase, const CaseBytes& bytes)
{
    phase.inputs = bytes.inputs;
    phase.outputs = bytes.outputs;
    phase.referenceOutputs = bytes.referenceOutputs;
    phase.scratch = bytes.scratch;
}

// The verify phase of one case: its memory with the reference's outputs, the cache's copy of them, and
// the worker: by the host path its own device copies of the inputs and outputs plus the reference's
// result; on the runner's buffers the result alone. torch.compile's warm-up (eager and compiled results
// on inputs of its own) may run in the worker at the same time.
PhaseMemory verifyPhase(
    const protocol::EvaluateRequest& request, const protocol::Case& testCase, const MemoryPlanContext& context)
{
    const CaseBytes bytes = caseBytes(testCase, true);
    PhaseMemory phase;
    phase.phase = "verify";
    phase.caseLabel = testCase.label;
    addCase(phase, bytes);
    if (context.referenceCacheCapacity > 0 && context.referenceCacheOnDevice
        && bytes.referenceOutputs <= context.referenceCacheCapacity)
        phase.referenceCache = bytes.referenceOutputs;
    if (request.pythonReference) {
        const std::size_t reference
            = context.referenceOnGpu ? bytes.outputData : bytes.inputData + 2 * bytes.outputData;
        const std::size_t warm = bytes.inputData + 2 * bytes.outputData;
        phase.worker = std::max(reference, warm);
    }
    return phase;
}

// The same-size copy: half the case's bytes read, half written, rounded as the timer rounds them.
std::size_t copyBytes(double bytes)
{
    const auto half = static_cast<std::size_t>(std::max(bytes, 0.0) / 2.0) / 4 * 4;
    return half >= 4 ? 2 * half : 0;
}

} // namespace

std::size_t PhaseMemory::total() const
{
    return inputs + outputs + referenceOutputs + scratch + referenceCache + flush + copy + worker + keptCase;
}

MemoryPlan planJobMemory(const protocol::EvaluateRequest& request, const MemoryPlanContext& context)
{
    MemoryPlan plan;
    plan.headroom = context.headroomBytes;
    for (const protocol::Case& testCase : request.cases) {
        PhaseMemory phase = verifyPhase(request, testCase, context);
        if (phase.total() > plan.peak.total() || plan.peak.phase.empty())
            plan.peak = std::move(phase);
    }
    if (!request.options.time)
        return plan;

    // Timing: one timed case after another, each freed after it except the profiled one (the first timed
    // case), whose memory the lean profile keeps.
    const bool python = request.pythonReference.has_value();
    std::size_t kept = 0;
    bool first = true;
    for (const protocol::Case& testCase : request.cases) {
        if (!testCase.timed)
            continue;
        const CaseBytes bytes = caseBytes(testCase, !context.leanProfile || python);
        PhaseMemory phase;
        phase.phase = "time";
        phase.caseLabel = testCase.label;
        addCase(phase, bytes);
        phase.keptCase = kept;
        phase.flush = context.flushAllocated ? 0 : context.flushBytes;
        phase.copy = copyBytes(testCase.bytes);
        if (python) // eager's and torch.compile's results, the worker's flush, by the host path the inputs
            phase.worker = 2 * bytes.outputData + context.flushBytes + (context.referenceOnGpu ? 0 : bytes.inputData);
        if (phase.total() > plan.peak.total())
            plan.peak = std::move(phase);
        if (first && context.leanProfile)
            kept = bytes.total();
        first = false;
    }
    return plan;
}

std::string formatBytes(std::size_t bytes)
{
    static const char* units[] = { "B", "kB", "MB", "GB", "TB" };
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1000.0 && unit < 4) {
        value /= 1000.0;
        ++unit;
    }
    char text[32];
    if (unit == 0)
        std::snprintf(text, sizeof text, "%zu B", bytes);
    else
        std::snprintf(text, sizeof text,
            value >= 100.0      ? "%.0f %s"
                : value >= 10.0 ? "%.1f %s"
                                : "%.2f %s",
            value, units[unit]);
    return text;
}

std::string MemoryPlan::describe() const
{
    std::string parts = "inputs " + formatBytes(peak.inputs) + ", outputs " + formatBytes(peak.outputs);
    auto add = [&parts](const char* what, std::size_t bytes) {
        if (bytes > 0)
            parts += std::string(", ") + what + " " + formatBytes(bytes);
    };
    add("reference outputs", peak.referenceOutputs);
    add("scratch", peak.scratch);
    add("reference cache", peak.referenceCache);
    add("L2 flush", peak.flush);
    add("same-size copy", peak.copy);
    add("PyTorch worker", peak.worker);
    add("profiled case kept", peak.keptCase);
    add("headroom", headroom);
    return "needs " + formatBytes(needed()) + " at its peak (" + peak.phase + " of " + peak.caseLabel + ": " + parts
        + ")";
}

std::optional<std::string> memoryShortfall(const MemoryPlan& plan, std::size_t freeBytes, std::size_t totalBytes)
{
    if (plan.needed() <= freeBytes)
        return std::nullopt;
    return "the job " + plan.describe() + " but the GPU has " + formatBytes(freeBytes) + " free of "
        + formatBytes(totalBytes) + "; nothing was launched";
}

} // namespace kl::runner

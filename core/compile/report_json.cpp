// JSON forms of the compile result and the static report (snake_case, like the runner protocol).
#include "core/compile/static_report.h"

#include <nlohmann/json.hpp>

namespace kl {

using nlohmann::json;

namespace {

json limit(int blocks) { return blocks == Occupancy::kNoLimit ? json(nullptr) : json(blocks); }

json diagnosticJson(const CompilerDiagnostic& d)
{
    json j { { "file", d.file }, { "line", d.line }, { "column", d.column }, { "severity", d.severity },
        { "message", d.message }, { "kind", compileErrorKindName(d.kind) } };
    if (d.ptxLine > 0)
        j["ptx_line"] = d.ptxLine;
    return j;
}

} // namespace

json kernelResourcesJson(const KernelResources& k)
{
    return { { "name", k.name }, { "lowered_name", k.loweredName }, { "arch", k.arch }, { "registers", k.registers },
        { "barriers", k.barriers }, { "static_shared_bytes", k.staticSharedBytes },
        { "constant_bytes", k.constantBytes }, { "stack_frame_bytes", k.stackFrameBytes },
        { "spill_store_bytes", k.spillStoreBytes }, { "spill_load_bytes", k.spillLoadBytes },
        { "cumulative_stack_bytes", k.cumulativeStackBytes } };
}

json occupancyJson(const Occupancy& o)
{
    json j { { "blocks_per_sm", o.blocksPerSm }, { "active_warps_per_sm", o.activeWarpsPerSm },
        { "max_warps_per_sm", o.maxWarpsPerSm }, { "theoretical", o.theoretical },
        { "limiter", occupancyLimiterName(o.limiter) }, { "allocated_shared_bytes", o.allocatedSharedBytes },
        { "limits",
            { { "warps", limit(o.limitWarps) }, { "registers", limit(o.limitRegisters) },
                { "shared_memory", limit(o.limitSharedMemory) }, { "blocks", limit(o.limitBlocks) },
                { "barriers", limit(o.limitBarriers) } } } };
    if (!o.error.empty())
        j["error"] = o.error;
    return j;
}

json compileResultJson(const CompileResult& r)
{
    json diagnostics = json::array();
    for (const auto& d : r.diagnostics)
        diagnostics.push_back(diagnosticJson(d));
    json kernels = json::array();
    for (const auto& k : r.kernels)
        kernels.push_back(kernelResourcesJson(k));
    return { { "ok", r.ok }, { "kind", compileErrorKindName(r.kind) }, { "summary", r.summary },
        { "diagnostics", diagnostics }, { "kernels", kernels }, { "compile_ms", r.compileMillis },
        { "nvrtc_version", r.nvrtcVersion }, { "options", r.options }, { "cubin_bytes", r.cubin.size() },
        { "ptx_bytes", r.ptx.size() } };
}

json staticReportJson(const StaticReport& report)
{
    json launches = json::array();
    for (const auto& l : report.launches) {
        launches.push_back({ { "kernel", l.kernel }, { "size", l.sizes.label }, { "sizes", l.sizes.values },
            { "grid", l.launch.grid }, { "block", l.launch.block }, { "threads_per_block", l.launch.threadsPerBlock() },
            { "blocks", l.launch.blocks() },
            { "dynamic_shared_bytes", l.launch.sharedBytes + l.resources.launchSharedBytes },
            { "shared_bytes", l.sharedBytes }, { "needs_shared_opt_in", l.needsSharedOptIn },
            { "registers", l.resources.registers }, { "occupancy", occupancyJson(l.occupancy) }, { "waves", l.waves },
            { "whole_waves", l.wholeWaves } });
    }
    const auto& d = report.device;
    return { { "problem", report.problem }, { "candidate", report.candidate }, { "arch", report.arch },
        { "device",
            { { "name", d.name },
                { "compute_capability", std::to_string(d.computeMajor) + "." + std::to_string(d.computeMinor) },
                { "sm_count", d.smCount }, { "max_warps_per_sm", d.maxThreadsPerSm / d.warpSize },
                { "registers_per_sm", d.registersPerSm }, { "shared_per_sm", d.sharedPerSm },
                { "shared_per_block_opt_in", d.sharedPerBlockOptin } } },
        { "tunables", report.tunables }, { "ok", report.ok() }, { "first_error", report.firstProblem() },
        { "compile", compileResultJson(report.compile) }, { "launches", launches } };
}

} // namespace kl

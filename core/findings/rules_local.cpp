// Local memory: spills and stack frames from ptxas (static), local loads and stores from CUPTI.
// A stack frame is local memory even with zero spills, so the two are separate findings.
#include "core/findings/rules.h"

namespace kl::rules {

namespace {

using S = Finding::Severity;

void spills(Context& c)
{
    const auto& t = c.t;
    const auto bytes = t.spillStores + t.spillLoads;
    if (bytes <= 0)
        return;
    const auto severity = static_cast<double>(bytes) >= c.th.spillBytesCritical ? S::Critical : S::Warning;
    auto& f = add(c, "local-memory.spills", severity, 0.5,
        "registers spill: " + std::to_string(t.spillStores) + " bytes stored, " + std::to_string(t.spillLoads)
            + " bytes loaded per thread (" + std::to_string(t.registers) + " registers)",
        "The compiler ran out of registers and keeps values in local memory, which goes through L1 "
        "and L2 like global memory: extra traffic and long-scoreboard stalls.");
    f.evidence["spill_store_bytes"] = static_cast<double>(t.spillStores);
    f.evidence["spill_load_bytes"] = static_cast<double>(t.spillLoads);
    if (t.registers > 0)
        f.evidence["registers"] = t.registers;
    f.directions = { "the register cap is too tight: relax __launch_bounds__'s minimum blocks or use fewer "
                     "threads per block (1024 threads cap registers at 64)",
        "shrink per-thread arrays and tiles",
        "index per-thread arrays with compile-time constants (fully unrolled loops)" };
    f.tunerHints = { hint::kSmallerTiles, hint::kFewerThreads, hint::kStaticIndexing };
}

void stackFrame(Context& c)
{
    const auto& t = c.t;
    // With spills the frame holds the spill area; only a frame beyond it is a separate cause.
    if (t.stackFrame <= 0 || t.stackFrame <= t.spillStores)
        return;
    auto& f = add(c, "local-memory.stack-frame", S::Warning, 0.3,
        std::to_string(t.stackFrame) + "-byte stack frame"
            + (t.spillStores == 0 ? std::string(" without spills") : std::string(" beyond the spills"))
            + ": a local array or variable lives in local memory",
        "Arrays indexed with run-time values, variables whose address is taken, and calls that are "
        "not inlined live on the stack, in local memory, even when nothing spills.");
    f.evidence["stack_frame_bytes"] = static_cast<double>(t.stackFrame);
    f.evidence["spill_store_bytes"] = static_cast<double>(t.spillStores);
    f.directions = { "index per-thread arrays only with compile-time constants (#pragma unroll the loops)",
        "do not take the address of locals or pass local arrays to non-inlined functions",
        "printf, recursion and indirect calls also need a stack" };
    f.tunerHints = { hint::kStaticIndexing };
}

void traffic(Context& c)
{
    const auto loads = c.t.metric(metric::kLocalLoads);
    const auto stores = c.t.metric(metric::kLocalStores);
    const double executed = loads.value_or(0) + stores.value_or(0);
    if (!(executed > 0))
        return;
    const auto all = positive(c.t.metric(metric::kInstructions));
    const double share = all ? executed / *all : 0.0;
    const auto severity = !all || share >= c.th.localInstructionShareWarning ? S::Warning : S::Info;
    std::string title = "local memory traffic: " + count(loads.value_or(0)) + " loads and " + count(stores.value_or(0))
        + " stores executed";
    if (all)
        title += " (" + num(share * 100, 1) + "% of instructions)";
    auto& f = add(c, "local-memory.traffic", severity, all ? share * 10 : 0.3, title,
        "The profile shows local-memory instructions at run time: spills or stack arrays are on the "
        "kernel's path, not just in the binary.");
    f.evidence["local_load_instructions"] = loads.value_or(0);
    f.evidence["local_store_instructions"] = stores.value_or(0);
    if (all)
        f.evidence["local_instruction_share"] = share;
    if (const auto b = c.t.metric(metric::kLocalLoadBytes))
        f.evidence["local_load_bytes"] = *b;
    if (const auto b = c.t.metric(metric::kLocalStoreBytes))
        f.evidence["local_store_bytes"] = *b;
    f.directions = { "remove spills (see local-memory.spills) and run-time indexed local arrays",
        "keep per-thread arrays small and indexed with constants" };
    f.tunerHints = { hint::kStaticIndexing, hint::kSmallerTiles };
}

} // namespace

void localMemoryRules(Context& c)
{
    spills(c);
    stackFrame(c);
    traffic(c);
}

} // namespace kl::rules

// Occupancy and grid shape: how many warps each SM holds, what limits them, and whether the grid
// fills the GPU evenly.
#include "core/findings/rules.h"

#include <cmath>

namespace kl::rules {

namespace {

using S = Finding::Severity;

struct LimiterAdvice {
    const char* id;
    std::string because;
    std::vector<std::string> directions;
    std::vector<std::string> hints;
};

LimiterAdvice adviceFor(const Telemetry& t)
{
    const auto& l = t.occupancyLimiter;
    if (l == "registers")
        return { "occupancy.register-limited", "registers (" + std::to_string(t.registers) + "/thread)",
            { "keep fewer values live per thread: smaller per-thread tiles, recompute cheap values",
                "cap registers with __launch_bounds__(THREADS, MIN_BLOCKS_PER_SM), then check for spills",
                "fewer threads per block lets the allocator fit another block per SM" },
            { hint::kFewerRegisters, hint::kSmallerTiles, hint::kFewerThreads } };
    if (l == "shared memory")
        return { "occupancy.shared-memory-limited",
            "shared memory (" + std::to_string(t.staticShared + t.dynamicShared) + " bytes/block)",
            { "use less shared memory per block: smaller tiles or fewer pipeline stages",
                "reuse one shared buffer across phases instead of one per phase",
                "keep per-thread data in registers when it is not shared" },
            { hint::kLessSharedMemory, hint::kSmallerTiles } };
    if (l == "warps")
        return { "occupancy.warp-limited", "the block size (" + std::to_string(t.threadsPerBlock) + " threads)",
            { "pick a block size whose warp count divides the SM's 64 warps (e.g. 256 or 512 threads)" },
            { hint::kFewerThreads } };
    if (l == "blocks")
        return { "occupancy.block-limited",
            "the blocks-per-SM limit (blocks of " + std::to_string(t.threadsPerBlock) + " threads)",
            { "blocks are too small to fill an SM at its block limit: use at least 64 threads per block",
                "give each block more rows or tiles" },
            { hint::kMoreThreads, hint::kMoreRowsPerBlock } };
    return { "occupancy.low", "an unknown limit", { "check registers, shared memory and block size" }, {} };
}

void theoretical(Context& c)
{
    const auto& t = c.t;
    const double occ = t.theoreticalOccupancy;
    if (!(occ > 0) || !std::isfinite(occ) || occ >= c.th.occupancyLow)
        return;
    auto severity = occ < c.th.occupancyCritical ? S::Critical : S::Warning;
    // At the memory roofline more warps would not help: say so, but quietly.
    const bool saturated = t.pctOfCopy && *t.pctOfCopy >= c.th.bandwidthGoodPct && notComputeBound(t, c.th);
    if (saturated)
        severity = S::Info;
    auto advice = adviceFor(t);
    std::string title = "occupancy " + num(occ * 100) + "%: limited by " + advice.because;
    if (t.blocksPerSm > 0)
        title += ", " + std::to_string(t.blocksPerSm) + " block" + (t.blocksPerSm == 1 ? "" : "s") + "/SM";
    auto& f = add(c, advice.id, severity, 1.0 - occ, title,
        "Few resident warps leave the scheduler little to switch to while warps wait on memory or "
        "barriers; latency then shows up as run time."
            + std::string(saturated ? " The kernel is already near the copy ceiling, so this matters little." : ""));
    f.evidence["theoretical_occupancy_pct"] = occ * 100;
    if (t.registers > 0)
        f.evidence["registers"] = t.registers;
    if (t.threadsPerBlock > 0)
        f.evidence["threads_per_block"] = t.threadsPerBlock;
    if (t.blocksPerSm > 0)
        f.evidence["blocks_per_sm"] = t.blocksPerSm;
    if (t.staticShared + t.dynamicShared > 0)
        f.evidence["shared_bytes_per_block"] = static_cast<double>(t.staticShared + t.dynamicShared);
    f.directions = std::move(advice.directions);
    f.tunerHints = std::move(advice.hints);
}

void achieved(Context& c)
{
    const auto pct = c.t.percent(metric::kAchievedOccupancy);
    const double theo = c.t.theoreticalOccupancy;
    if (!pct || !(theo > 0) || !std::isfinite(theo))
        return;
    const double ach = *pct / 100.0;
    const double ratio = ach / theo;
    if (ratio >= c.th.achievedOccupancyRatio || (theo - ach) * 100 < c.th.achievedOccupancyGapPct)
        return;
    auto& f = add(c, "occupancy.achieved-below-theoretical", S::Warning, 1.0 - ratio,
        "achieved occupancy " + num(*pct) + "% of a theoretical " + num(theo * 100) + "%",
        "Warps are resident for less time than the launch allows: blocks finish unevenly, the last "
        "wave is partial, or the grid is too small to keep every SM full.");
    f.evidence["achieved_occupancy_pct"] = *pct;
    f.evidence["theoretical_occupancy_pct"] = theo * 100;
    f.directions = { "balance the work per warp and per block (e.g. rows of equal length per block)",
        "more, smaller blocks so SMs refill while others drain",
        "see waves.tail-effect and grid.too-few-blocks if they fire" };
    f.tunerHints = { hint::kMoreBlocks };
}

void grid(Context& c)
{
    const auto& t = c.t;
    if (t.gridBlocks <= 0 || t.smCount <= 0)
        return;
    const double blocks = static_cast<double>(t.gridBlocks);
    if (t.gridBlocks < t.smCount) {
        auto& f = add(c, "grid.too-few-blocks", S::Critical, 1.0 - blocks / t.smCount,
            std::to_string(t.gridBlocks) + " blocks for " + std::to_string(t.smCount)
                + " SMs: " + std::to_string(t.smCount - t.gridBlocks) + " SMs idle",
            "An SM without a block does nothing; the kernel can use at most this share of the GPU.");
        f.evidence["grid_blocks"] = blocks;
        f.evidence["sm_count"] = t.smCount;
        f.directions = { "split the work into more blocks (fewer rows or a smaller tile per block)",
            "split long rows or the reduction dimension across blocks" };
        f.tunerHints = { hint::kMoreBlocks, hint::kSmallerTiles };
        return;
    }
    if (t.blocksPerSm <= 0)
        return;
    const double perWave = static_cast<double>(t.smCount) * t.blocksPerSm;
    const double waves = blocks / perWave;
    if (waves < c.th.fullWaveFactor) {
        auto& f = add(c, "grid.too-few-blocks", S::Warning, 1.0 - waves,
            "less than one wave: " + std::to_string(t.gridBlocks) + " blocks for " + num(perWave) + " resident slots ("
                + num(waves * 100) + "%)",
            "Every SM has work, but fewer blocks than it could hold: fewer warps to hide latency "
            "than the occupancy calculation promises.");
        f.evidence["grid_blocks"] = blocks;
        f.evidence["blocks_per_wave"] = perWave;
        f.evidence["waves"] = waves;
        f.directions = { "more, smaller blocks: fewer rows or a smaller tile per block",
            "or more work per thread with fewer threads per block, raising blocks per SM" };
        f.tunerHints = { hint::kMoreBlocks, hint::kSmallerTiles };
        return;
    }
    const double full = std::ceil(waves);
    const double last = waves - std::floor(waves);
    const double loss = last > 0 ? (1.0 - last) / full : 0.0;
    if (loss < c.th.tailLossShare)
        return;
    auto& f = add(c, "waves.tail-effect", S::Warning, loss,
        "tail effect: " + num(waves, 2) + " waves of " + num(perWave) + " blocks; the last wave fills "
            + num(last * 100) + "% of the GPU",
        "The partial last wave runs with most SMs idle; about " + num(loss * 100)
            + "% of the run time is spent at that lower occupancy.");
    f.evidence["waves"] = waves;
    f.evidence["last_wave_fraction"] = last;
    f.evidence["blocks_per_wave"] = perWave;
    f.evidence["estimated_loss"] = loss;
    f.directions = { "make the grid a multiple of SMs × blocks per SM (" + num(perWave) + " here), or much larger",
        "use more, smaller blocks, or a persistent grid-stride loop over the work" };
    f.tunerHints = { hint::kMoreBlocks };
}

} // namespace

void occupancyRules(Context& c)
{
    theoretical(c);
    achieved(c);
    grid(c);
}

} // namespace kl::rules

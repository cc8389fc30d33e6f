// lines.*: where in the source the samples fall (the runner's PC sampling), in the words of
// Nsight Compute's source page: the hottest line, its dominant warp state, and what to try.
#include "core/findings/rules.h"
#include "core/lines/line_heat.h"

namespace kl::rules {

namespace {

using S = Finding::Severity;

// A line holding this share of the samples is worth naming; from the second value on, a warning.
constexpr double kHotLineShare = 0.25;
constexpr double kHotLineWarning = 0.50;
// Dropped samples above this share make the line figures doubtful.
constexpr double kDroppedShare = 0.10;

void directionsFor(Finding& f, const std::string& stall)
{
    if (stall == "long_scoreboard") {
        f.directions = { "start the loads this line waits for earlier (prefetch into registers, unroll so several "
                         "independent loads are in flight)",
            "if each load's address comes from the load before (a chain), restructure so warps have other work "
            "meanwhile or stage the data in shared memory" };
        f.tunerHints = { hint::kMoreIlp, hint::kMoreBytesInFlight };
    } else if (stall == "mio_throttle" || stall == "short_scoreboard") {
        f.directions = { "look for shared-memory bank conflicts on this line: pad the shared array (one extra column) "
                         "or swizzle the index so the 32 lanes of a warp hit 32 banks" };
        f.tunerHints = { hint::kPadShared };
    } else if (stall == "lg_throttle") {
        f.directions = { "fewer, wider global accesses on this line (vector loads of 16 bytes)" };
        f.tunerHints = { hint::kWiderVectors };
    } else if (stall == "barrier") {
        f.directions = { "fewer __syncthreads around this line, or more even work between them" };
        f.tunerHints = { hint::kFewerBarriers };
    } else if (stall == "math_pipe_throttle") {
        f.directions = { "the arithmetic of this line saturates its pipe: cheaper maths (fewer conversions, "
                         "intrinsics) or a different pipe" };
    }
}

} // namespace

void lineRules(Context& c)
{
    if (!c.t.lineSamples || c.t.lineSamples->status != lines::SamplingStatus::Ok)
        return;
    const lines::PcSampling& s = *c.t.lineSamples;
    if (s.totalSamples > 0 && static_cast<double>(s.droppedSamples) / s.totalSamples > kDroppedShare) {
        const double dropped = static_cast<double>(s.droppedSamples) / s.totalSamples;
        auto& f = add(c, "lines.samples-dropped", S::Info, 0.0, num(100 * dropped) + "% of PC samples were dropped",
            "the hardware buffer overflowed while sampling, so the line figures below undercount some lines");
        f.evidence = { { "dropped_samples", static_cast<double>(s.droppedSamples) },
            { "total_samples", static_cast<double>(s.totalSamples) } };
    }
    const lines::LineHeat heat = lines::lineHeat(s);
    if (heat.lines.empty() || heat.lines.front().share < kHotLineShare)
        return;
    const lines::HotLine& hot = heat.lines.front();
    const std::string stall = hot.dominantStall();
    std::string title = num(100 * hot.share) + "% of samples on line " + std::to_string(hot.line);
    if (!stall.empty())
        title += ", " + stall + " (" + num(100 * hot.dominantShare()) + "% of the line's)";
    auto& f = add(c, "lines.hot-line", hot.share >= kHotLineWarning ? S::Warning : S::Info, hot.share, title,
        "the warp " + lines::stallMeaning(stall) + " on this line more than anywhere else in the kernel");
    f.evidence = { { "line", hot.line }, { "share", hot.share }, { "samples", static_cast<double>(hot.samples) },
        { "stall_share", hot.dominantShare() } };
    directionsFor(f, stall);
}

} // namespace kl::rules

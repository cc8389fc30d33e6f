// What the warps wait for (stall reasons) and what the timing says about launches and noise.
#include "core/findings/rules.h"
#include "core/findings/stall_reasons.h"

#include <algorithm>

namespace kl::rules {

namespace {

using S = Finding::Severity;

} // namespace

void stallRules(Context& c)
{
    struct Share {
        const StallReason* reason;
        double ratio;
    };
    std::vector<Share> present;
    double sum = 0.0;
    for (const auto& reason : stallReasons()) {
        const auto ratio = c.t.metric(metric::stallRatio(reason.name));
        if (!ratio || *ratio < 0)
            continue;
        sum += *ratio;
        if (reason.isStall)
            present.push_back({ &reason, *ratio });
    }
    if (present.empty())
        return;
    // Cycles between two issued instructions of a warp; every reason's ratio is a part of it.
    // Without the metric the sum of the reasons (selected included) stands in for it.
    const auto latency = positive(c.t.metric(metric::kWarpLatency));
    const double total = latency ? *latency : sum;
    if (!(total > 0))
        return;
    std::stable_sort(present.begin(), present.end(), [](const Share& a, const Share& b) { return a.ratio > b.ratio; });
    int reported = 0;
    for (const auto& [reason, ratio] : present) {
        const double share = std::min(1.0, ratio / total);
        if (reported >= c.th.stallReasonsMax || share < c.th.stallShareMin)
            break;
        ++reported;
        auto& f = add(c, "stall." + reason->name, share >= c.th.stallShareWarning ? S::Warning : S::Info, share,
            reason->label + ": " + num(share * 100) + "% of the cycles between issues (" + num(ratio, 1) + " of "
                + num(total, 1) + ")",
            "Warps were " + reason->meaning + ". It is the " + (reported == 1 ? "largest" : "next largest")
                + " share of the time between two instructions of a warp.");
        f.evidence["cycles_per_issue"] = ratio;
        f.evidence["share_of_stalls"] = share;
        f.evidence["warp_cycles_per_issue"] = total;
        f.directions = reason->directions;
        f.tunerHints = reason->tunerHints;
    }
}

void timingRules(Context& c)
{
    const auto median = positive(c.t.medianUs);
    const auto graph = positive(c.t.graphMedianUs);
    if (median && *median < c.th.tinyKernelUs) {
        auto& f = add(c, "launch.tiny-kernel", S::Warning, 1.0 - *median / c.th.tinyKernelUs,
            "tiny kernel: median " + num(*median, 2) + " µs",
            "At a few microseconds launch overhead and ramp-up are a large part of the time; the kernel "
            "cannot reach the device's ceilings.");
        f.evidence["median_us"] = *median;
        f.directions = { "do more work per launch: fuse with neighbouring operators or batch calls",
            "in the application, replay with CUDA graphs" };
        f.tunerHints = { hint::kFuseLaunches };
    }
    if (median && graph && *median / *graph >= c.th.graphSpeedupRatio) {
        const double ratio = *median / *graph;
        auto& f = add(c, "launch.graph-faster", S::Warning, 1.0 - 1.0 / ratio,
            "graph replay " + num(ratio, 1) + "× faster than plain launches (" + num(*graph, 2) + " vs "
                + num(*median, 2) + " µs)",
            "Launch overhead, not the kernel, sets the plain-launch time: the kernel is launch-bound.");
        f.evidence["median_us"] = *median;
        f.evidence["graph_median_us"] = *graph;
        f.evidence["ratio"] = ratio;
        f.directions = { "fuse launches or do more work per launch", "use CUDA graphs where the kernel is called" };
        f.tunerHints = { hint::kFuseLaunches };
    }
    const auto cv = positive(c.t.cv);
    if (cv && *cv >= c.th.noisyCv) {
        auto& f = add(c, "timing.noisy", *cv >= c.th.noisyCvWarning ? S::Warning : S::Info, 0.0,
            "noisy timing: coefficient of variation " + num(*cv * 100, 1) + "%",
            "Run-to-run spread this large hides differences under about " + num(*cv * 200)
                + "%; compare candidates with care.");
        f.evidence["cv"] = *cv;
        f.directions = { "repeat with more repetitions or a longer time budget",
            "check for other work on the GPU and for clock changes" };
    }
}

} // namespace kl::rules

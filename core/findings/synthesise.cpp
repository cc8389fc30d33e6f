#include "core/findings/synthesise.h"

#include "core/findings/rules.h"
#include "core/findings/stall_reasons.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kl {

namespace rules {

std::optional<double> positive(std::optional<double> value)
{
    if (value && std::isfinite(*value) && *value > 0)
        return value;
    return std::nullopt;
}

std::optional<Roofline> roofline(const Telemetry& t, const FindingThresholds& th)
{
    const auto flops = positive(t.flops), bytes = positive(t.bytes), copy = positive(t.copyGbps);
    if (!flops || !bytes || !copy || !(t.peakTflops > 0) || !std::isfinite(t.peakTflops))
        return std::nullopt;
    Roofline r;
    r.intensity = *flops / *bytes;
    r.ridge = t.peakTflops * 1e12 / (*copy * 1e9);
    if (r.intensity * th.ridgeBalanceFactor < r.ridge)
        r.bound = Bound::Memory;
    else if (r.intensity > r.ridge * th.ridgeBalanceFactor)
        r.bound = Bound::Compute;
    else
        r.bound = Bound::Balanced;
    return r;
}

bool notComputeBound(const Telemetry& t, const FindingThresholds& th)
{
    const auto r = roofline(t, th);
    return !r || r->bound != Bound::Compute;
}

std::string num(double value, int decimals)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

std::string count(double value)
{
    if (value >= 1e9)
        return num(value / 1e9, 1) + "G";
    if (value >= 1e6)
        return num(value / 1e6, 1) + "M";
    if (value >= 1e4)
        return num(value / 1e3, 1) + "k";
    return num(value);
}

Finding& add(
    Context& c, std::string id, Finding::Severity severity, double impact, std::string title, std::string explanation)
{
    Finding f;
    f.id = std::move(id);
    f.severity = severity;
    f.title = std::move(title);
    f.explanation = std::move(explanation);
    const double rank = severity == Finding::Severity::Critical ? 2.0
        : severity == Finding::Severity::Warning                ? 1.0
                                                                : 0.0;
    f.priority = rank + std::clamp(std::isfinite(impact) ? impact : 0.0, 0.0, 0.999);
    c.out.push_back(std::move(f));
    return c.out.back();
}

} // namespace rules

std::vector<Finding> synthesise(const Telemetry& telemetry, const FindingThresholds& thresholds)
{
    std::vector<Finding> findings;
    rules::Context context { telemetry, thresholds, findings };
    rules::occupancyRules(context);
    rules::localMemoryRules(context);
    rules::memoryRules(context);
    rules::computeRules(context);
    rules::stallRules(context);
    rules::timingRules(context);
    rules::lineRules(context);
    std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
        return a.priority != b.priority ? a.priority > b.priority : a.id < b.id;
    });
    return findings;
}

std::vector<std::string> findingIds()
{
    std::vector<std::string> ids { "occupancy.register-limited", "occupancy.shared-memory-limited",
        "occupancy.warp-limited", "occupancy.block-limited", "occupancy.low", "occupancy.achieved-below-theoretical",
        "waves.tail-effect", "grid.too-few-blocks", "local-memory.spills", "local-memory.stack-frame",
        "local-memory.traffic", "roofline.memory-bound", "roofline.balanced", "roofline.compute-bound",
        "bandwidth.under-ceiling", "bandwidth.at-ceiling", "compute.under-ceiling", "compute.no-tensor-instructions",
        "compute.tensor-pipe", "dram.low-throughput", "memory.excess-dram-traffic", "cache.l2-hit-rate-low",
        "shared.bank-conflicts", "throughput.latency-bound", "launch.tiny-kernel", "launch.graph-faster",
        "timing.noisy", "lines.hot-line", "lines.samples-dropped" };
    for (const auto& reason : stallReasons()) {
        if (reason.isStall)
            ids.push_back("stall." + reason.name);
    }
    return ids;
}

} // namespace kl

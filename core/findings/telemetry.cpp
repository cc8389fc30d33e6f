#include "core/findings/telemetry.h"

#include <algorithm>
#include <cmath>

namespace kl {

std::optional<double> Telemetry::metric(const std::string& name) const
{
    const auto it = metrics.find(name);
    if (it == metrics.end() || !std::isfinite(it->second))
        return std::nullopt;
    return it->second;
}

std::optional<double> Telemetry::percent(const std::string& name) const
{
    const auto value = metric(name);
    if (!value)
        return std::nullopt;
    return std::clamp(*value, 0.0, 100.0);
}

std::string metric::stallRatio(const std::string& reason)
{
    return "smsp__average_warps_issue_stalled_" + reason + "_per_issue_active.ratio";
}

double peakFp32Tflops(int smCount, double smClockMhz, const std::string& computeCapability)
{
    // FP32 lanes per SM by compute capability (CUDA C++ Programming Guide, arithmetic throughput).
    static const std::map<std::string, int> lanes { { "7.0", 64 }, { "7.5", 64 }, { "8.0", 64 }, { "8.6", 128 },
        { "8.7", 128 }, { "8.9", 128 }, { "9.0", 128 }, { "10.0", 128 }, { "12.0", 128 } };
    const auto it = lanes.find(computeCapability);
    if (it == lanes.end() || smCount <= 0 || !(smClockMhz > 0))
        return 0.0;
    return smCount * it->second * 2.0 * smClockMhz * 1e6 / 1e12;
}

void deriveRates(Telemetry& t, std::optional<double> copyMedianUs, double deviceCopyGbps)
{
    if (t.bytes && copyMedianUs && *copyMedianUs > 0)
        t.copyGbps = *t.bytes / *copyMedianUs / 1e3;
    else if (deviceCopyGbps > 0)
        t.copyGbps = deviceCopyGbps;
    const bool timed = t.medianUs && *t.medianUs > 0;
    if (!t.gbps && t.bytes && timed)
        t.gbps = *t.bytes / *t.medianUs / 1e3;
    if (!t.tflops && t.flops && timed)
        t.tflops = *t.flops / *t.medianUs / 1e6;
    if (!t.pctOfCopy && t.gbps && t.copyGbps && *t.copyGbps > 0)
        t.pctOfCopy = 100.0 * *t.gbps / *t.copyGbps;
}

} // namespace kl

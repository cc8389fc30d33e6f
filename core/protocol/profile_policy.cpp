#include "core/protocol/profile_policy.h"

#include <cmath>
#include <cstdio>

namespace kl::protocol {

std::optional<double> speedupOverBaseline(const Timing& timing)
{
    double logSum = 0.0;
    int count = 0;
    for (const CaseTiming& c : timing.cases) {
        if (!c.speedupVsBaseline || !(*c.speedupVsBaseline > 0.0))
            return std::nullopt;
        logSum += std::log(*c.speedupVsBaseline);
        ++count;
    }
    if (count == 0)
        return std::nullopt;
    return std::exp(logSum / count);
}

std::string profileSkipReason(const Timing& timing, double minSpeedup)
{
    if (!(minSpeedup > 0.0))
        return {};
    const auto speedup = speedupOverBaseline(timing);
    if (!speedup || *speedup >= minSpeedup)
        return {}; // no baseline to judge by: profiled, as before the policy
    char text[160];
    std::snprintf(text, sizeof text, "not profiled: %.2fx the baseline, under the %.2fx asked", *speedup, minSpeedup);
    return text;
}

} // namespace kl::protocol

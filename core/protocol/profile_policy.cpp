#include "core/protocol/profile_policy.h"

#include "core/model/geometric_mean.h"

#include <cstdio>

namespace kl::protocol {

std::optional<double> speedupVsJobBaseline(const CaseTiming& timing)
{
    return timing.speedupVsBaseline ? timing.speedupVsBaseline : timing.speedupVsEager;
}

std::optional<double> speedupOverBaseline(const Timing& timing)
{
    std::vector<std::optional<double>> speedups;
    for (const CaseTiming& c : timing.cases)
        speedups.push_back(speedupVsJobBaseline(c));
    return geometricMean(speedups);
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

#include "core/lines/pc_sampling.h"

namespace kl::lines {

namespace {

constexpr std::string_view kCuptiPrefixes[] = { "smsp__pcsamp_warps_issue_stalled_", "smsp__pcsamp_" };

} // namespace

std::int64_t PcSample::samples() const
{
    std::int64_t sum = 0;
    for (const auto& [stall, n] : stalls)
        if (!isNotIssuedSubset(stall))
            sum += n;
    return sum;
}

std::int64_t PcSampling::sampledInCandidate() const
{
    std::int64_t sum = 0;
    for (const PcSample& pc : pcs)
        sum += pc.samples();
    return sum;
}

std::string_view samplingStatusName(SamplingStatus status)
{
    switch (status) {
    case SamplingStatus::Ok:
        return "ok";
    case SamplingStatus::Unavailable:
        return "unavailable";
    case SamplingStatus::Skipped:
        return "skipped";
    }
    return "skipped";
}

std::string stallName(std::string_view cuptiName)
{
    for (const std::string_view prefix : kCuptiPrefixes)
        if (cuptiName.starts_with(prefix))
            return std::string(cuptiName.substr(prefix.size()));
    return std::string(cuptiName);
}

bool isNotIssuedSubset(std::string_view stall) { return stall.ends_with("_not_issued"); }

} // namespace kl::lines

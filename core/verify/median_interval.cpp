#include "core/verify/median_interval.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kl::verify {

double MedianInterval::relativeHalfWidth() const
{
    if (!known || median <= 0.0)
        return std::numeric_limits<double>::infinity();
    return (high - low) / 2.0 / median;
}

MedianInterval medianInterval(std::vector<double> samples, double confidence)
{
    MedianInterval m;
    const int n = static_cast<int>(samples.size());
    if (n == 0)
        return m;
    std::sort(samples.begin(), samples.end());
    m.median = n % 2 ? samples[static_cast<std::size_t>(n / 2)]
                     : 0.5 * (samples[static_cast<std::size_t>(n / 2 - 1)] + samples[static_cast<std::size_t>(n / 2)]);
    // P(B <= k - 1) for B ~ Binomial(n, 1/2) is the chance that the true median lies below x_(k);
    // the largest k with that tail <= (1 - confidence) / 2 is the lower rank (log space: 2^-n underflows).
    const double tail = (1.0 - confidence) / 2.0;
    const double logHalf = -static_cast<double>(n) * std::log(2.0);
    double cdf = 0.0;
    int rank = 0;
    for (int k = 1; k <= n / 2; ++k) {
        cdf += std::exp(std::lgamma(n + 1.0) - std::lgamma(k) - std::lgamma(n - k + 2.0) + logHalf); // P(B = k-1)
        if (cdf > tail)
            break;
        rank = k;
    }
    if (rank < 1)
        return m; // too few samples for this confidence
    m.lowRank = rank;
    m.highRank = n + 1 - rank;
    m.low = samples[static_cast<std::size_t>(m.lowRank - 1)];
    m.high = samples[static_cast<std::size_t>(m.highRank - 1)];
    m.known = true;
    return m;
}

std::string_view stopReasonName(StopReason reason)
{
    switch (reason) {
    case StopReason::Interval:
        return "interval";
    case StopReason::MaxReps:
        return "max-reps";
    case StopReason::TimeCap:
        return "time-cap";
    }
    return "interval";
}

std::optional<StopReason> shouldStop(const std::vector<double>& samples, double elapsedMs, const StopRule& rule)
{
    const int n = static_cast<int>(samples.size());
    if (n >= std::max(rule.maxReps, 1))
        return StopReason::MaxReps;
    if (n >= std::max(rule.minReps, 1) && medianInterval(samples).relativeHalfWidth() <= rule.relativeHalfWidth)
        return StopReason::Interval;
    if (n >= 1 && elapsedMs >= rule.timeCapMs)
        return StopReason::TimeCap;
    return std::nullopt;
}

} // namespace kl::verify

#include "core/verify/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kl::verify {

double quantile(const std::vector<double>& sorted, double q)
{
    if (sorted.empty())
        return 0.0;
    const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(position));
    const std::size_t above = std::min(below + 1, sorted.size() - 1);
    const double fraction = position - static_cast<double>(below);
    return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

SampleSummary summarize(std::vector<double> samples)
{
    SampleSummary summary;
    if (samples.empty())
        return summary;
    std::sort(samples.begin(), samples.end());
    const auto n = static_cast<double>(samples.size());
    summary.count = static_cast<std::int64_t>(samples.size());
    summary.median = quantile(samples, 0.5);
    summary.p20 = quantile(samples, 0.2);
    summary.p80 = quantile(samples, 0.8);
    summary.min = samples.front();
    summary.max = samples.back();
    summary.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
    double squares = 0.0;
    for (double s : samples)
        squares += (s - summary.mean) * (s - summary.mean);
    summary.stddev = samples.size() > 1 ? std::sqrt(squares / (n - 1.0)) : 0.0;
    summary.cv = summary.mean > 0.0 ? summary.stddev / summary.mean : 0.0;
    return summary;
}

} // namespace kl::verify

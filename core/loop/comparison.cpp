#include "core/loop/comparison.h"

#include "core/verify/statistics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace kl {

// verify::quantile(sorted, 0.5) without sorting: the same two order statistics (nth_element, then the
// least above it) and the same interpolation, so the same value to the bit. The bootstrap takes 4,000
// medians a comparison: sorted, that was ~0.1 s per result on the loop's thread (issue 14).
namespace {
double medianInPlace(std::vector<double>& v)
{
    if (v.empty())
        return 0.0;
    const double position = 0.5 * static_cast<double>(v.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(position));
    const double fraction = position - static_cast<double>(below);
    const auto at = v.begin() + static_cast<std::ptrdiff_t>(below);
    std::nth_element(v.begin(), at, v.end());
    const double low = *at;
    const double high = below + 1 < v.size() ? *std::min_element(at + 1, v.end()) : low;
    return low + (high - low) * fraction;
}
} // namespace

double median(std::vector<double> v) { return medianInPlace(v); }

double geometricMean(const std::vector<double>& values)
{
    if (values.empty())
        return 0.0;
    double logSum = 0.0;
    for (double v : values)
        logSum += std::log(v);
    return std::exp(logSum / double(values.size()));
}

namespace {

double normalisedMedian(const std::vector<double>& samples, double baseline)
{
    return median(samples) / (baseline > 0 ? baseline : 1.0);
}

// The median of one bootstrap resample of `v` (drawn with replacement), `scratch` reused between calls.
double resampledMedian(const std::vector<double>& v, std::mt19937_64& rng, std::vector<double>& scratch)
{
    std::uniform_int_distribution<std::size_t> pick(0, v.size() - 1);
    scratch.resize(v.size());
    for (auto& x : scratch)
        x = v[pick(rng)];
    return medianInPlace(scratch);
}

double percentile(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    return verify::quantile(v, p);
}

} // namespace

Comparison compareTimings(const std::vector<SizeTiming>& candidate, const std::vector<SizeTiming>& incumbent,
    double minGain, int resamples, std::uint64_t seed)
{
    Comparison c;
    const std::size_t n = std::min(candidate.size(), incumbent.size());
    if (n == 0)
        return c;
    std::mt19937_64 rng(seed);
    std::vector<std::vector<double>> boot(n); // per size, bootstrap speedups
    for (std::size_t s = 0; s < n; ++s) {
        const auto& a = candidate[s];
        const auto& b = incumbent[s];
        SizeComparison sc;
        sc.label = a.label;
        if (a.samplesUs.empty() || b.samplesUs.empty()) {
            c.sizes.push_back(sc);
            continue;
        }
        sc.speedup
            = normalisedMedian(b.samplesUs, b.baselineMedianUs) / normalisedMedian(a.samplesUs, a.baselineMedianUs);
        boot[s].reserve(std::size_t(resamples));
        const double bBase = b.baselineMedianUs > 0 ? b.baselineMedianUs : 1.0;
        const double aBase = a.baselineMedianUs > 0 ? a.baselineMedianUs : 1.0;
        std::vector<double> scratch;
        for (int r = 0; r < resamples; ++r) {
            // Drawn in the order the sorted version drew them: the same resamples, the same interval.
            const double before = resampledMedian(b.samplesUs, rng, scratch) / bBase;
            boot[s].push_back(before / (resampledMedian(a.samplesUs, rng, scratch) / aBase));
        }
        sc.low = percentile(boot[s], 0.025);
        sc.high = percentile(boot[s], 0.975);
        c.losesOnSomeSize = c.losesOnSomeSize || sc.high < 1.0;
        c.sizes.push_back(sc);
    }
    std::vector<double> point;
    for (const auto& sc : c.sizes)
        point.push_back(sc.speedup);
    c.speedup = geometricMean(point);
    if (std::all_of(boot.begin(), boot.end(), [](const auto& b) { return !b.empty(); })) {
        std::vector<double> joint(static_cast<std::size_t>(resamples));
        for (int r = 0; r < resamples; ++r) {
            std::vector<double> at;
            for (std::size_t s = 0; s < n; ++s)
                at.push_back(boot[s][std::size_t(r)]);
            joint[std::size_t(r)] = geometricMean(at);
        }
        c.low = percentile(joint, 0.025);
        c.high = percentile(joint, 0.975);
    } else {
        c.low = c.high = c.speedup;
    }
    c.faster = c.low > 1.0 + minGain;
    c.slower = c.high < 1.0;
    return c;
}

std::string Comparison::summary() const
{
    char buf[160];
    // An interval wholly above 1 (as printed) is a measured gain, too small to count: "within noise"
    // there contradicted the interval shown beside it (issue 28).
    const bool aboveOne = low >= 1.0005;
    std::snprintf(buf, sizeof buf, "%.3fx [%.3f, %.3f]%s", speedup, low, high,
        faster         ? " faster"
            : slower   ? " slower"
            : aboveOne ? " faster, under the gain that counts"
                       : " within noise");
    std::string s = buf;
    if (losesOnSomeSize && !slower)
        s += ", loses on some size";
    return s;
}

} // namespace kl

#pragma once
// "Faster" means faster beyond the measured noise. Each job times the problem's baseline beside
// the candidate, so times are first normalised by that job's baseline median (which cancels clock
// drift between jobs); then a bootstrap over the timing samples gives an interval for the
// speedup of a candidate over the incumbent, per main size and as a geometric mean.
#include <cstdint>
#include <string>
#include <vector>

namespace kl {

struct SizeTiming {
    std::string label;
    std::vector<double> samplesUs; // the candidate's timed runs at this size
    double baselineMedianUs = 0.0; // the problem's baseline, same job
};

struct SizeComparison {
    std::string label;
    double speedup = 1.0; // incumbent median / candidate median (normalised); > 1: candidate faster
    double low = 1.0; // 95% bootstrap interval
    double high = 1.0;
};

struct Comparison {
    std::vector<SizeComparison> sizes;
    double speedup = 1.0; // geometric mean over sizes
    double low = 1.0;
    double high = 1.0;
    bool faster = false; // low > 1 + minGain
    bool slower = false; // high < 1
    bool losesOnSomeSize = false; // some size's interval lies below 1
    std::string summary() const;
};

// candidate and incumbent must list the same sizes in the same order.
Comparison compareTimings(const std::vector<SizeTiming>& candidate, const std::vector<SizeTiming>& incumbent,
    double minGain = 0.01, int resamples = 2000, std::uint64_t seed = 7);

double median(std::vector<double> values);
double geometricMean(const std::vector<double>& values);

} // namespace kl

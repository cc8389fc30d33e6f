#pragma once
// When a timing has repeated enough: a distribution-free confidence interval of the median from
// order statistics (the number of samples below the true median is Binomial(n, 1/2)), and the rule
// the runner's adaptive protocol stops on. No assumption of normal samples: a run with a few slow
// outliers (a clock dip, a context switch of the host thread) widens the interval only as far as the
// ranks move, so it does not make the rule repeat forever.
#include <optional>
#include <string_view>
#include <vector>

namespace kl::verify {

struct MedianInterval {
    double median = 0.0;
    double low = 0.0; // the lowRank-th smallest sample (1-based)
    double high = 0.0; // the highRank-th smallest
    int lowRank = 0;
    int highRank = 0;
    bool known = false; // false below 6 samples: no two ranks give 95%
    double relativeHalfWidth() const; // (high - low) / 2 / median; infinity when unknown
};

// The narrowest symmetric rank interval [x_(l), x_(n+1-l)] whose coverage of the true median is at
// least `confidence` (exact binomial tail).
MedianInterval medianInterval(std::vector<double> samples, double confidence = 0.95);

enum class StopReason { Interval, MaxReps, TimeCap };
std::string_view stopReasonName(StopReason reason); // "interval", "max-reps", "time-cap"

struct StopRule {
    double relativeHalfWidth = 0.005; // of the median's interval, e.g. 0.005 = +-0.5%
    int minReps = 20;
    int maxReps = 2000;
    double timeCapMs = 200.0;
};

// Whether to stop after `samples` (taken over `elapsedMs`); nullopt: repeat more.
std::optional<StopReason> shouldStop(const std::vector<double>& samples, double elapsedMs, const StopRule& rule);

} // namespace kl::verify

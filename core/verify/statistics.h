#pragma once
// Summaries of timing samples: the figures the runner reports and the tuner compares.
#include <cstdint>
#include <vector>

namespace kl::verify {

struct SampleSummary {
    std::int64_t count = 0;
    double median = 0.0;
    double p20 = 0.0;
    double p80 = 0.0;
    double min = 0.0;
    double max = 0.0;
    double mean = 0.0;
    double stddev = 0.0; // sample standard deviation (n - 1)
    double cv = 0.0; // stddev / mean
};

// Quantile q in [0, 1] of sorted samples, interpolating linearly between neighbours (NumPy's default).
double quantile(const std::vector<double>& sorted, double q);

// All zeros for no samples.
SampleSummary summarize(std::vector<double> samples);

} // namespace kl::verify

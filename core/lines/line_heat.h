#pragma once
// Where in the source a kernel spends its samples: the PC samples summed per source line, hottest
// first, each with its warp states (dominant first). What the editor margin, the hot-lines list,
// `show --lines`, the findings and the prompt all show.
#include "core/lines/pc_sampling.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kl::lines {

struct StallCount {
    std::string stall; // "long_scoreboard"
    std::int64_t samples = 0;
    bool operator==(const StallCount&) const = default;
};

struct HotLine {
    std::string file;
    int line = 0;
    std::int64_t samples = 0;
    double share = 0.0; // of the candidate's samples, 0..1
    std::vector<StallCount> stalls; // most samples first; "_not_issued" subsets left out
    std::vector<std::uint64_t> pcOffsets; // the sampled instructions of this line, ascending
    std::string dominantStall() const; // empty without samples
    double dominantShare() const; // of this line's samples, 0..1
};

struct LineHeat {
    std::int64_t samples = 0; // in the candidate's kernels
    std::int64_t unmappedSamples = 0; // at PCs without line info (line 0)
    std::vector<HotLine> lines; // hottest first; ties by line number
    const HotLine* line(int number, std::string_view file = {}) const;
};

// Lines of `file` only when it is given (compared by the last path component: the runner reports
// the name NVRTC was given, which may carry a folder).
LineHeat lineHeat(const PcSampling& sampling, std::string_view file = {});

// The text of a 1-based line of `source`, spaces at both ends trimmed; empty when out of range.
std::string sourceLine(const std::string& source, int line);

// A warp state's meaning for an engineer, one short clause ("the warp waits for a global or
// local memory load"); a generic clause for a state it does not know.
std::string stallMeaning(std::string_view stall);

// "line 48: 62% of samples, long_scoreboard 71% (waits for a global or local memory load) — j = next[j];"
std::string hotLineText(const HotLine& line, const std::string& source);

// The smallest share of the kernel's samples a line needs to be named in the prompt. A line under
// 1%, even if its cost vanished, could not move the kernel's time by 1%: below what the timing
// resolves (p20..p80 spreads of about 1%) and far below the loop's smallest counted gain
// (StopPolicy::minGain, 5%). On the H200's pointer_chase the lines after the planted loop hold 7
// and 6 of 18032 samples (exit drain, the final store): noise to the model. Not higher: the body of
// a hot loop can be spread over several lines of a few percent each.
constexpr double kPromptLineMinShare = 0.01;

// hotLineText of the hottest `count` lines holding at least `minShare` of the samples, for the
// prompt's measured state; none when the phase did not sample (its status is not ok) or no sample
// maps to a line.
std::vector<std::string> hotLineTexts(
    const PcSampling& sampling, const std::string& source, std::size_t count, double minShare = kPromptLineMinShare);

// What the sampling phase cost and what CUPTI counted, for the engineer weighing `--metrics lines`
// against its time: "sampling phase: 976.9 ms, 1 run; CUPTI counted 18032 samples (0 in other
// kernels, 0 dropped)". The runner's own wall time of the phase (its "ms").
std::string samplingCostText(const PcSampling& sampling);

// The hottest `count` lines as `show --lines` prints them, with the phase's totals first
// ("12345 samples at 2^10 cycles, 0 dropped", then samplingCostText); a line saying why when there are none.
std::string hotLinesReport(
    const PcSampling& sampling, const std::string& source, std::size_t count, std::string_view file = {});

} // namespace kl::lines

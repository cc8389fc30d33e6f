#pragma once
// The runner's PC-sampling phase as a value: per-PC warp-state samples of one main size, each PC
// mapped to its source file and line (docs/runner-protocol.md, "pc_sampling"). The runner's reply
// decodes into it (core/protocol/pc_sampling_json.h); everything else reads this.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kl::lines {

// One sampled instruction: where it is (function, byte offset in it, source file and line; line 0
// when the cubin has no line info for it) and its samples by warp state ("long_scoreboard", ...).
struct PcSample {
    std::string function;
    std::uint64_t pcOffset = 0;
    std::string file;
    int line = 0;
    std::map<std::string, std::int64_t> stalls;
    // Samples of this PC: every state except the "_not_issued" subsets CUPTI reports beside them.
    std::int64_t samples() const;
    bool operator==(const PcSample&) const = default;
};

enum class SamplingStatus { Ok, Unavailable, Skipped };
std::string_view samplingStatusName(SamplingStatus status); // "ok", "unavailable", "skipped"

struct PcSampling {
    SamplingStatus status = SamplingStatus::Skipped;
    // unavailable: "insufficient-privileges", "unsupported-device", "another-profiler", "not-built",
    // "no-samples"; ok with dropped samples: "samples-dropped"
    std::string reason;
    std::string detail; // what CUPTI said
    std::string caseLabel; // the main size sampled
    int periodLog2 = 0; // one sample every 2^periodLog2 cycles per SM
    int runs = 0; // launch sequences run while sampling
    std::int64_t totalSamples = 0; // as CUPTI counts them: user kernels, others, and dropped
    std::int64_t droppedSamples = 0;
    std::int64_t otherSamples = 0; // in kernels not of the candidate's module
    bool hardwareBufferFull = false;
    double milliseconds = 0.0; // the phase's wall time in the runner
    std::vector<PcSample> pcs;

    std::int64_t sampledInCandidate() const; // the sum over pcs
    bool operator==(const PcSampling&) const = default;
};

// A warp state's name as the findings and the prompt use it: CUPTI's
// "smsp__pcsamp_warps_issue_stalled_long_scoreboard" → "long_scoreboard"; short names unchanged.
std::string stallName(std::string_view cuptiName);
bool isNotIssuedSubset(std::string_view stall); // "..._not_issued"

} // namespace kl::lines

#pragma once
// When the loop stops: at a target speedup, at an iteration or wall-time budget, or after
// `patience` consecutive iterations that each gained less than `minGain` (all configurable).
#include <optional>
#include <string>
#include <vector>

namespace kl {

struct StopPolicy {
    int maxIterations = 20;      // iterations after the baseline; 0: no limit
    double maxWallSeconds = 0.0; // 0: no limit
    double targetSpeedup = 0.0;  // vs the baseline; 0: none
    int patience = 2;            // consecutive iterations under minGain; 0: never stop for this
    double minGain = 0.05;       // relative gain of an iteration's best over the best before it
};

struct LoopProgress {
    int iterations = 0;         // finished, baseline not counted
    double wallSeconds = 0.0;
    double bestSpeedup = 1.0;   // vs baseline
    std::vector<double> gains;  // per finished iteration: best after / best before − 1 (0 if none)
    bool proposerExhausted = false;
};

// The reason to stop now, in words for the summary ("target 2.5x reached"), or nullopt.
std::optional<std::string> stopReason(const StopPolicy& policy, const LoopProgress& progress);

} // namespace kl

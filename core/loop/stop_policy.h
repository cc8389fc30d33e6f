#pragma once
// When the loop stops: at a target speedup, at an iteration or wall-time budget, after `patience`
// consecutive measured rounds that each gained less than `minGain`, or after `maxFailedRounds`
// consecutive rounds in which the proposer gave nothing to run (all configurable).
#include <optional>
#include <string>
#include <vector>

namespace kl {

struct StopPolicy {
    int maxIterations = 20; // iterations after the baseline; 0: no limit
    double maxWallSeconds = 0.0; // 0: no limit
    double targetSpeedup = 0.0; // vs the baseline; 0: none
    int patience = 2; // consecutive measured rounds under minGain; 0: never stop for this
    double minGain = 0.05; // relative gain of an iteration's best over the best before it
    // Consecutive rounds whose every proposal failed before reaching the runner (an endpoint
    // fault, a reply without a usable kernel); 0: never stop for this. They are not gains or
    // losses, so they do not count toward `patience`.
    int maxFailedRounds = 3;
    // Rounds in a row, before any kernel has passed (a problem with no kernel yet), in which nothing
    // passed verification; 0: never stop for this.
    int maxRoundsWithoutKernel = 6;
};

// What one round gave, as far as the stop rules care.
struct RoundTally {
    double gain = 0.0; // best after / best before − 1 (0 if no new best)
    bool measured = false; // a candidate passed verification and was timed
    int proposals = 0; // what the proposer returned
    int proposerFailures = 0; // of them, failures of the proposer itself ("proposer.<kind>")
    std::string lastFailure; // the last such category, e.g. "proposer.http-5xx"
    bool withoutKernel = false; // no kernel has passed yet, and none passed in this round
    int cycle = -1; // Proposer::cycle() of the round's proposals
};

struct LoopProgress {
    int iterations = 0; // finished rounds, baseline not counted, failed rounds included
    double wallSeconds = 0.0;
    double bestSpeedup = 1.0; // vs baseline
    // per measured cycle only (a round, or a hybrid's model rewrite with its tuner rounds): best after /
    // best before − 1 (0 if none)
    std::vector<double> gains;
    int lastCycle = -1; // the cycle gains.back() belongs to
    int failedRounds = 0; // consecutive rounds up to now in which the proposer gave nothing to run
    std::string lastFailure; // the category of the latest proposer failure
    bool proposerExhausted = false;
    int roundsWithoutKernel = 0; // consecutive rounds before the first passing kernel
    std::string lastKernelFailure; // why the last of them failed
};

// Counts a finished round: the budget always, patience only when it measured a candidate (its gain
// joins its cycle's; cycle 0 is not counted), the failure limit when every proposal failed at the
// proposer (anything that ran resets it).
void recordRound(LoopProgress& progress, const RoundTally& round);

// The reason to stop now, in words for the summary ("target 2.5x reached"), or nullopt.
std::optional<std::string> stopReason(const StopPolicy& policy, const LoopProgress& progress);

} // namespace kl

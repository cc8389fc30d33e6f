#include "core/loop/stop_policy.h"

#include <cstdio>

namespace kl {

void recordRound(LoopProgress& p, const RoundTally& round)
{
    ++p.iterations;
    if (round.measured && round.cycle != 0) {
        if (round.cycle > 0 && round.cycle == p.lastCycle && !p.gains.empty())
            p.gains.back() = (1.0 + p.gains.back()) * (1.0 + round.gain) - 1.0; // the same cycle: compounded
        else
            p.gains.push_back(round.gain);
        p.lastCycle = round.cycle;
    }
    if (round.withoutKernel) {
        ++p.roundsWithoutKernel;
        if (!round.lastFailure.empty())
            p.lastKernelFailure = round.lastFailure;
    } else {
        p.roundsWithoutKernel = 0;
    }
    if (round.proposals > 0 && round.proposerFailures == round.proposals) {
        ++p.failedRounds;
        p.lastFailure = round.lastFailure;
    } else {
        p.failedRounds = 0;
    }
}

std::optional<std::string> stopReason(const StopPolicy& policy, const LoopProgress& p)
{
    char buf[200];
    if (p.proposerExhausted)
        return std::string("the proposer has nothing left to try");
    if (policy.targetSpeedup > 0 && p.bestSpeedup >= policy.targetSpeedup) {
        std::snprintf(buf, sizeof buf, "target %.2fx reached (%.2fx)", policy.targetSpeedup, p.bestSpeedup);
        return std::string(buf);
    }
    if (policy.maxIterations > 0 && p.iterations >= policy.maxIterations) {
        std::snprintf(buf, sizeof buf, "iteration budget of %d spent", policy.maxIterations);
        return std::string(buf);
    }
    if (policy.maxWallSeconds > 0 && p.wallSeconds >= policy.maxWallSeconds) {
        std::snprintf(buf, sizeof buf, "time budget of %.0f s spent", policy.maxWallSeconds);
        return std::string(buf);
    }
    if (policy.maxFailedRounds > 0 && p.failedRounds >= policy.maxFailedRounds) {
        std::snprintf(buf, sizeof buf, "%d consecutive rounds gave no candidate to run (the last: %s)", p.failedRounds,
            p.lastFailure.empty() ? "a proposer failure" : p.lastFailure.c_str());
        return std::string(buf);
    }
    if (policy.maxRoundsWithoutKernel > 0 && p.roundsWithoutKernel >= policy.maxRoundsWithoutKernel) {
        std::snprintf(buf, sizeof buf, "no kernel passed verification in %d rounds (the last: %s)",
            p.roundsWithoutKernel, p.lastKernelFailure.empty() ? "no candidate" : p.lastKernelFailure.c_str());
        return std::string(buf);
    }
    if (policy.patience > 0 && int(p.gains.size()) >= policy.patience) {
        bool stalled = true;
        for (std::size_t i = p.gains.size() - std::size_t(policy.patience); i < p.gains.size(); ++i)
            stalled = stalled && p.gains[i] < policy.minGain;
        if (stalled) {
            std::snprintf(buf, sizeof buf, "%d consecutive measured rounds gained less than %.0f%%", policy.patience,
                policy.minGain * 100);
            return std::string(buf);
        }
    }
    return std::nullopt;
}

} // namespace kl

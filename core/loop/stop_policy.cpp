#include "core/loop/stop_policy.h"

#include <cstdio>

namespace kl {

std::optional<std::string> stopReason(const StopPolicy& policy, const LoopProgress& p)
{
    char buf[160];
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
    if (policy.patience > 0 && int(p.gains.size()) >= policy.patience) {
        bool stalled = true;
        for (std::size_t i = p.gains.size() - std::size_t(policy.patience); i < p.gains.size(); ++i)
            stalled = stalled && p.gains[i] < policy.minGain;
        if (stalled) {
            std::snprintf(buf, sizeof buf, "%d consecutive iterations gained less than %.0f%%", policy.patience,
                          policy.minGain * 100);
            return std::string(buf);
        }
    }
    return std::nullopt;
}

} // namespace kl

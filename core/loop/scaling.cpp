#include "core/loop/scaling.h"

#include <cmath>

namespace kl {

void ScalingTally::addRound(bool anyPassed, std::optional<double> best)
{
    ++m_rounds;
    if (anyPassed)
        ++m_passedRounds;
    if (anyPassed && best && *best > 0.0) {
        ++m_timedRounds;
        m_logSpeedups += std::log(*best);
    }
}

std::optional<double> ScalingTally::passAtK() const
{
    if (m_rounds == 0)
        return std::nullopt;
    return double(m_passedRounds) / m_rounds;
}

std::optional<double> ScalingTally::speedupAtK() const
{
    if (m_timedRounds == 0)
        return std::nullopt;
    return std::exp(m_logSpeedups / m_timedRounds);
}

} // namespace kl

#pragma once
// Test-time scaling figures of a session (k candidates per round): pass@k, the share of rounds in
// which at least one candidate passed verification, and speedup@k, the geometric mean, over the
// rounds that had a correct candidate, of the best one's speedup over the round's incumbent (below
// 1 when even the best of k was slower). Rounds without a correct candidate count only in pass@k.
#include <optional>

namespace kl {

class ScalingTally {
public:
    // One round: whether any candidate passed, and the best speedup over the incumbent among those that did.
    void addRound(bool anyPassed, std::optional<double> bestSpeedupOverIncumbent);
    int rounds() const { return m_rounds; }
    std::optional<double> passAtK() const;
    std::optional<double> speedupAtK() const;

private:
    int m_rounds = 0;
    int m_passedRounds = 0;
    int m_timedRounds = 0;
    double m_logSpeedups = 0.0;
};

} // namespace kl

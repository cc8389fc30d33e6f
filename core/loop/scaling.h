#pragma once
// Test-time scaling figures of a session (k candidates per round): pass@k, the share of rounds in
// which at least one candidate passed verification, and speedup@k, the geometric mean over rounds
// of the best passing candidate's speedup over the round's incumbent. A round without a correct
// candidate counts 1 in speedup@k (the loop keeps the incumbent), and 0 in pass@k.
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
    double m_logSpeedups = 0.0;
};

} // namespace kl

#pragma once
// Deciding a round: of the candidates that passed, the one faster than the incumbent beyond the noise
// by the highest lower bound of its speedup is kept; every other is reverted, with the reason the
// proposer is told. A problem with no kernel yet keeps the fastest that passed, with nothing to
// compare it with. Pure: the caller stores the decisions and moves the incumbent.
#include "core/store/records.h"

#include <cstddef>
#include <optional>
#include <vector>

namespace kl {

struct EvaluatedCandidate;
struct Incumbent;

struct RoundDecision {
    std::optional<std::size_t> kept; // the batch's new best
    double gain = 0.0; // its speedup over the incumbent, minus one (0 for a first kernel)
    std::vector<store::DecisionRecord> decisions; // one per batch entry, in order
};

// Sets each passed outcome's comparison with `incumbent` (null: no kernel yet) and `kept` on the winner.
RoundDecision decideRound(std::vector<EvaluatedCandidate>& batch, const Incumbent* incumbent, double noiseGain);

} // namespace kl

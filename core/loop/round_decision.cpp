// The round's decision: keep the surest gain beyond the noise, revert the rest, say why.
#include "core/loop/round_decision.h"

#include "core/loop/proposer_briefing.h"
#include "core/loop/tuning_session.h"

namespace kl {

RoundDecision decideRound(std::vector<EvaluatedCandidate>& batch, const Incumbent* incumbent, double noiseGain)
{
    const bool first = incumbent == nullptr;
    EvaluatedCandidate* winner = nullptr;
    Comparison winning;
    for (auto& e : batch) {
        auto& o = e.outcome;
        if (o.category != "passed" || e.timings.empty())
            continue;
        if (first) { // nothing to compare with: the fastest kernel that passed starts the incumbent line
            if (!winner || o.medianUs.value_or(0.0) < winner->outcome.medianUs.value_or(0.0))
                winner = &e;
            continue;
        }
        const auto c = e.vsIncumbent ? *e.vsIncumbent : compareTimings(e.timings, incumbent->timings, noiseGain);
        o.comparison = c.summary();
        o.losesOnSomeSize = c.losesOnSomeSize;
        o.speedupOverBest = c.speedup;
        if (c.faster && (!winner || c.low > winning.low)) {
            winner = &e;
            winning = c;
        }
    }
    RoundDecision decision;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        auto& o = batch[i].outcome;
        store::DecisionRecord d;
        if (&batch[i] == winner) {
            d.kind = store::DecisionRecord::Kind::AutoKeep;
            d.reason = first ? std::string("the first kernel to pass verification; PyTorch eager is its baseline")
                             : "new best: " + o.comparison + " over the previous best";
            o.kept = true;
            decision.kept = i;
        } else {
            d.kind = store::DecisionRecord::Kind::AutoRevert;
            d.reason = o.category != "passed" ? o.category + ": " + o.detail
                                              : "not faster beyond the noise: " + o.comparison;
        }
        decision.decisions.push_back(std::move(d));
    }
    if (winner && !first)
        decision.gain = winning.speedup - 1.0;
    return decision;
}

} // namespace kl

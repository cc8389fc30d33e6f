#include "core/loop/continue_from_here.h"

namespace kl {

void ContinueFromHere::ask(int iterationIndex)
{
    if (iterationIndex > 0)
        m_asked.store(iterationIndex);
}

void ContinueFromHere::remember(const EvaluatedCandidate& e)
{
    if (e.outcome.index > 0 && e.outcome.candidateId)
        m_recorded[e.outcome.index] = Incumbent { e.proposal, e.outcome, e.timings, e.statics };
}

std::optional<int> ContinueFromHere::adopt(Incumbent& best)
{
    const int index = m_asked.exchange(0);
    const auto chosen = m_recorded.find(index);
    if (index <= 0 || chosen == m_recorded.end())
        return std::nullopt;
    const Incumbent& from = chosen->second;
    const int previous = best.outcome.index;
    if (from.outcome.category == "passed" && !from.timings.empty()) {
        best = from; // its figures are the bar now
    } else {
        // Not measured: the base the proposer edits and the parent in the tree; the bar stays the best's timings.
        best.proposal = from.proposal;
        best.outcome.index = from.outcome.index;
        best.outcome.candidateId = from.outcome.candidateId;
        best.outcome.sourceHash = from.outcome.sourceHash;
        best.outcome.tunables = from.outcome.tunables;
        best.statics = from.statics;
    }
    return best.outcome.index != previous ? std::optional<int>(previous) : std::nullopt;
}

} // namespace kl

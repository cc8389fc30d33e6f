#pragma once
// "Continue from here" in a running loop: the engineer picks an iteration the loop recorded, and from
// the next round on it is what the proposer builds on and the stored parent of the next proposals (a
// fork in the proposal tree). A measured iteration also becomes the bar the next candidates must beat;
// one that was not measured (failed, refused) is only the base. No Qt.
#include "core/loop/proposer_briefing.h"
#include "core/loop/tuning_session.h"

#include <atomic>
#include <map>
#include <optional>

namespace kl {

class ContinueFromHere {
public:
    // Any thread, while the loop runs; the last request before a round wins.
    void ask(int iterationIndex);
    // The loop's thread: an iteration it may return to (one with a stored candidate).
    void remember(const EvaluatedCandidate& e);
    // At a round's start: `best` becomes the asked iteration (as above). The index `best` had, when it
    // changed; none when nothing was asked, or an iteration this loop did not record.
    std::optional<int> adopt(Incumbent& best);

private:
    std::atomic<int> m_asked { 0 }; // 0: none asked
    std::map<int, Incumbent> m_recorded; // by iteration index
};

} // namespace kl

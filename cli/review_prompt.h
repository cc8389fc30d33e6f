#pragma once
// Review mode in a terminal: each proposal is shown (hypothesis, tunables, a diff of the source
// against the current best) and waits for a decision typed at the prompt.
#include "core/loop/tuning_session.h"

#include <atomic>
#include <iosfwd>

namespace kl::cli {

class ReviewPrompt : public ReviewGate {
public:
    // `quit` sets `cancel`, which ends the session cleanly after the refusal is stored.
    ReviewPrompt(std::istream& in, std::ostream& out, std::atomic<bool>* cancel = nullptr);
    ReviewDecision review(const Proposal& proposal, const ProposalContext& context) override;

private:
    std::istream& m_in;
    std::ostream& m_out;
    std::atomic<bool>* m_cancel;
};

} // namespace kl::cli

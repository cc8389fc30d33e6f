#pragma once
// Review mode answered from another thread (the window's review panel): the loop's thread waits on a
// promise until answer() fulfils it, or until close() does (stopping, closing the window, a destroyed
// panel), with the same refusal the CLI's review prompt stores when the engineer quits, so the loop
// thread can never hang. The decision itself is stored by the loop, exactly as for the CLI.
#include "core/loop/tuning_session.h"

#include <future>
#include <mutex>
#include <optional>
#include <string>

namespace kl::session {

class AnsweredReview : public ReviewGate {
public:
    // Called on the loop's thread; blocks until answer() or close().
    ReviewDecision review(const Proposal& proposal, const ProposalContext& context) override;

    // From any thread. False when no proposal is waiting (a second answer is ignored).
    bool answer(ReviewDecision decision);
    // Answers a waiting proposal, and every later one, with a rejection giving `reason`.
    void close(const std::string& reason);
    bool waiting() const;

    // What the CLI's review prompt answers when the engineer quits.
    static ReviewDecision stopped(const std::string& reason = "the engineer stopped the session");

private:
    mutable std::mutex m_mutex;
    std::optional<std::promise<ReviewDecision>> m_pending;
    std::optional<std::string> m_closed;
};

} // namespace kl::session

#pragma once
// The proposer a session runs: the recipe's proposer, with the engineer's controls between rounds.
// It pauses before the next proposal (pause after the current candidate) and hands the loop the
// engineer's own candidates first (Evaluate of the editor's kernel into the running session).
// "Continue from here" is the loop's own (TuningSession::continueFrom). Thread-safe: the controls
// come from another thread than the loop's (the window's, a campaign's).
#include "core/propose/proposer.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace kl::session {

class EngineerProposer : public Proposer {
public:
    // `tokens` is told each proposal's LLM tokens (called on the loop's thread, after its text). `hold` is
    // told each time holding() changes: true when the loop stops at the pause, false when it goes on
    // (resumed or cancelled); called under the proposer's lock, in order, on the loop's thread or the
    // thread that resumes it: it must not call the proposer back.
    explicit EngineerProposer(std::function<void(std::int64_t)> tokens = {}, std::function<void(bool)> hold = {});
    // The recipe's proposer (null: only the engineer's candidates). Set before the loop runs.
    void setInner(std::unique_ptr<Proposer> inner) { m_inner = std::move(inner); }

    std::string kind() const override;
    std::vector<Proposal> propose(const ProposalContext& context, int count, const std::atomic<bool>* cancel) override;
    void warmUp(const Problem& problem, const Candidate& start) override;
    bool writesKernels() const override { return m_inner && m_inner->writesKernels(); }
    int cycle() const override { return m_inner ? m_inner->cycle() : -1; }
    std::vector<Proposal> anticipate(const ProposalContext& context, int count, int guesses) const override;

    void setPaused(bool paused);
    bool paused() const;
    // Paused and waiting: the candidate in flight has finished and no proposal is asked for (a pause
    // asked for while a round runs is not yet held).
    bool holding() const;
    void wake(); // after the cancel flag is set: a paused loop notices it
    // The engineer's candidate, run before the next proposal; `tunables` already applied (complete).
    void addCandidate(Candidate candidate, TunableValues tunables);

private:
    void setHolding(bool holding, bool paused); // under m_mutex: tells `hold` when holding() changes

    std::unique_ptr<Proposer> m_inner;
    std::function<void(std::int64_t)> m_tokens;
    std::function<void(bool)> m_hold;
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    bool m_paused = false;
    bool m_holding = false;
    std::deque<Proposal> m_engineer;
};

} // namespace kl::session

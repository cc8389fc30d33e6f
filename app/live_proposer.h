#pragma once
// The proposer a live session runs: the recipe's proposer, with the engineer's controls between
// rounds. It pauses before the next proposal (pause after the current candidate), hands the loop
// the engineer's own candidates first ("Evaluate" of the editor's kernel into the open session),
// and lets the next proposals start from an iteration the engineer chose ("Continue from here")
// until the loop keeps a new best. Thread-safe: the controls come from the GUI thread.
#include "core/propose/proposer.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

namespace kl::gui {

class LiveProposer : public Proposer {
public:
    // `tokens` is told each proposal's LLM tokens (called on the loop's thread).
    explicit LiveProposer(std::function<void(std::int64_t)> tokens = {});
    // The recipe's proposer (null: only the engineer's candidates). Set before the loop runs.
    void setInner(std::unique_ptr<Proposer> inner) { m_inner = std::move(inner); }

    std::string kind() const override;
    std::vector<Proposal> propose(const ProposalContext& context, int count, const std::atomic<bool>* cancel) override;
    void warmUp(const Problem& problem, const Candidate& start) override
    {
        if (m_inner)
            m_inner->warmUp(problem, start);
    }

    bool writesKernels() const override { return m_inner && m_inner->writesKernels(); }
    int cycle() const override { return m_inner ? m_inner->cycle() : -1; }

    void setPaused(bool paused);
    bool paused() const;
    void wake(); // after the cancel flag is set: a paused loop notices it
    void addHumanCandidate(Candidate candidate, TunableValues tunables);
    void continueFrom(Candidate candidate, TunableValues tunables);

private:
    struct Fork {
        Candidate candidate;
        TunableValues tunables;
        std::optional<std::string> incumbentHash; // the loop's best when it was chosen
    };
    std::unique_ptr<Proposer> m_inner;
    std::function<void(std::int64_t)> m_tokens;
    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    bool m_paused = false;
    std::deque<Proposal> m_human;
    std::optional<Fork> m_fork;
};

} // namespace kl::gui

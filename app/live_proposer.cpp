#include "app/live_proposer.h"

#include "core/loop/stored_forms.h"
#include "core/model/hash.h"

namespace kl::gui {

LiveProposer::LiveProposer(std::function<void(std::int64_t)> tokens)
    : m_tokens(std::move(tokens))
{
}

std::string LiveProposer::kind() const { return m_inner ? m_inner->kind() : std::string("human"); }

std::vector<Proposal> LiveProposer::propose(const ProposalContext& context, int count, const std::atomic<bool>* cancel)
{
    ProposalContext ctx = context;
    {
        std::unique_lock lock(m_mutex);
        // Paused: wait here, before the next proposal (the current candidate has finished).
        m_changed.wait(lock, [&] { return !m_paused || (cancel && cancel->load()); });
        if (cancel && cancel->load())
            return {};
        if (!m_human.empty()) {
            std::vector<Proposal> mine;
            while (!m_human.empty() && int(mine.size()) < std::max(1, count)) {
                mine.push_back(std::move(m_human.front()));
                m_human.pop_front();
            }
            return mine;
        }
        if (m_fork) {
            if (!m_fork->incumbentHash)
                m_fork->incumbentHash = context.bestSourceHash;
            if (*m_fork->incumbentHash != context.bestSourceHash) {
                m_fork.reset(); // the loop kept a new best since: it is the base again
            } else {
                ctx.best = m_fork->candidate;
                ctx.bestTunables = m_fork->tunables;
                ctx.bestSourceHash = contentHash(m_fork->candidate.source);
            }
        }
    }
    if (!m_inner)
        return {};
    auto proposals = m_inner->propose(ctx, count, cancel);
    if (m_tokens) {
        std::int64_t tokens = 0;
        for (const auto& p : proposals)
            tokens += exchangeTokens(p.exchanges);
        if (tokens > 0)
            m_tokens(tokens);
    }
    return proposals;
}

void LiveProposer::setPaused(bool paused)
{
    {
        std::lock_guard lock(m_mutex);
        m_paused = paused;
    }
    m_changed.notify_all();
}

bool LiveProposer::paused() const
{
    std::lock_guard lock(m_mutex);
    return m_paused;
}

void LiveProposer::wake()
{
    { // under the lock: a loop between its check and its wait would miss the notification
        std::lock_guard lock(m_mutex);
    }
    m_changed.notify_all();
}

void LiveProposer::addHumanCandidate(Candidate candidate, TunableValues tunables)
{
    {
        std::lock_guard lock(m_mutex);
        m_human.push_back(Proposal { std::move(candidate), std::move(tunables), "human",
            "a hand-written candidate from the editor", {}, {}, {}, {} });
    }
    m_changed.notify_all();
}

void LiveProposer::continueFrom(Candidate candidate, TunableValues tunables)
{
    std::lock_guard lock(m_mutex);
    // The incumbent at the next proposal is the one to compare with (the loop may be mid-round now).
    m_fork = Fork { std::move(candidate), std::move(tunables), std::nullopt };
}

} // namespace kl::gui

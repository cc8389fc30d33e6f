// The recipe's proposer behind the engineer's controls: pause, and the engineer's candidates first.
#include "core/session/engineer_proposer.h"

#include "core/loop/store_records.h"

#include <algorithm>

namespace kl::session {

EngineerProposer::EngineerProposer(std::function<void(std::int64_t)> tokens, std::function<void(bool)> hold)
    : m_tokens(std::move(tokens))
    , m_hold(std::move(hold))
{
}

void EngineerProposer::setHolding(bool holding, bool paused)
{
    const bool was = m_holding && m_paused;
    m_holding = holding;
    m_paused = paused;
    if (m_hold && was != (m_holding && m_paused))
        m_hold(m_holding && m_paused);
}

std::string EngineerProposer::kind() const { return m_inner ? m_inner->kind() : std::string("human"); }

void EngineerProposer::warmUp(const Problem& problem, const Candidate& start)
{
    if (m_inner)
        m_inner->warmUp(problem, start);
}

std::vector<Proposal> EngineerProposer::anticipate(const ProposalContext& context, int count, int guesses) const
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_engineer.empty()) // the next round is the engineer's: nothing to guess
            return {};
    }
    return m_inner ? m_inner->anticipate(context, count, guesses) : std::vector<Proposal> {};
}

std::vector<Proposal> EngineerProposer::propose(
    const ProposalContext& context, int count, const std::atomic<bool>* cancel)
{
    {
        std::unique_lock lock(m_mutex);
        // Paused: wait here, before the next proposal (the current candidate has finished).
        setHolding(true, m_paused);
        m_changed.wait(lock, [&] { return !m_paused || (cancel && cancel->load()); });
        setHolding(false, m_paused);
        if (cancel && cancel->load())
            return {};
        if (!m_engineer.empty()) {
            std::vector<Proposal> mine;
            while (!m_engineer.empty() && int(mine.size()) < std::max(1, count)) {
                mine.push_back(std::move(m_engineer.front()));
                m_engineer.pop_front();
            }
            return mine;
        }
    }
    if (!m_inner)
        return {};
    auto proposals = m_inner->propose(context, count, cancel);
    if (m_tokens) {
        std::int64_t tokens = 0;
        for (const auto& p : proposals)
            tokens += exchangeTokens(p.exchanges);
        if (tokens > 0)
            m_tokens(tokens);
    }
    return proposals;
}

void EngineerProposer::setPaused(bool paused)
{
    {
        std::lock_guard lock(m_mutex);
        setHolding(m_holding, paused);
    }
    m_changed.notify_all();
}

bool EngineerProposer::paused() const
{
    std::lock_guard lock(m_mutex);
    return m_paused;
}

bool EngineerProposer::holding() const
{
    std::lock_guard lock(m_mutex);
    return m_holding && m_paused;
}

void EngineerProposer::wake()
{
    { // under the lock: a loop between its check and its wait would miss the notification
        std::lock_guard lock(m_mutex);
    }
    m_changed.notify_all();
}

void EngineerProposer::addCandidate(Candidate candidate, TunableValues tunables)
{
    {
        std::lock_guard lock(m_mutex);
        m_engineer.push_back(Proposal { std::move(candidate), std::move(tunables), "human",
            "a hand-written candidate from the editor", {}, {}, {}, {} });
    }
    m_changed.notify_all();
}

} // namespace kl::session

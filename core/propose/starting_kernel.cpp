#include "core/propose/starting_kernel.h"

namespace kl {

StartingKernel::StartingKernel(
    std::unique_ptr<Proposer> next, Candidate start, std::string origin, std::string hypothesis)
    : m_next(std::move(next))
    , m_start(std::move(start))
    , m_origin(std::move(origin))
    , m_hypothesis(std::move(hypothesis))
{
}

void StartingKernel::warmUp(const Problem& problem, const Candidate& start)
{
    (void)start; // the problem's (no kernel): the one to start from is ours
    m_next->warmUp(problem, m_start);
}

std::vector<Proposal> StartingKernel::propose(
    const ProposalContext& context, int count, const std::atomic<bool>* cancel)
{
    if (!m_given) {
        m_given = true;
        Proposal p;
        p.candidate = m_start;
        p.tunables = m_start.defaults();
        p.proposer = m_origin;
        p.hypothesis = m_hypothesis;
        return { p };
    }
    return m_next->propose(context, count, cancel);
}

std::vector<Proposal> StartingKernel::anticipate(const ProposalContext& context, int count, int guesses) const
{
    if (!m_given)
        return {};
    return m_next->anticipate(context, count, guesses);
}

} // namespace kl

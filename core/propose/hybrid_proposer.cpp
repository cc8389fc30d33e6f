#include "core/propose/hybrid_proposer.h"

#include "core/model/hash.h"

namespace kl {

namespace {
bool hasSpace(const Candidate& c)
{
    for (const auto& t : c.tunables)
        if (t.values.size() > 1)
            return true;
    return false;
}
} // namespace

HybridProposer::HybridProposer(std::unique_ptr<Proposer> writer, std::unique_ptr<Proposer> tuner, int tunerRounds)
    : m_writer(std::move(writer))
    , m_tuner(std::move(tuner))
    , m_tunerRounds(tunerRounds)
{
}

bool HybridProposer::tunersTurn(const ProposalContext& context) const
{
    const auto bestHash = context.bestSourceHash.empty() ? contentHash(context.best.source) : context.bestSourceHash;
    return (bestHash != m_sweptHash && hasSpace(context.best)) || m_tunerLeft > 0 || m_writerDry;
}

std::vector<Proposal> HybridProposer::anticipate(const ProposalContext& context, int count, int guesses) const
{
    return tunersTurn(context) ? m_tuner->anticipate(context, count, guesses) : std::vector<Proposal> {};
}

std::vector<Proposal> HybridProposer::propose(
    const ProposalContext& context, int count, const std::atomic<bool>* cancel)
{
    const auto bestHash = context.bestSourceHash.empty() ? contentHash(context.best.source) : context.bestSourceHash;
    if (bestHash != m_sweptHash && hasSpace(context.best)) {
        m_sweptHash = bestHash;
        m_tunerLeft = m_tunerRounds;
    }
    if (m_tunerLeft > 0 || m_writerDry) {
        --m_tunerLeft;
        auto proposals = m_tuner->propose(context, count, cancel);
        if (!proposals.empty()) {
            if (m_writerDry)
                ++m_cycle;
            return proposals;
        }
        m_tunerLeft = 0; // this source's space is swept
        if (m_writerDry)
            return {};
    }
    ++m_cycle;
    auto proposals = m_writer->propose(context, count, cancel);
    if (proposals.empty() && !(cancel && cancel->load())) {
        m_writerDry = true;
        return m_tuner->propose(context, count, cancel);
    }
    return proposals;
}

} // namespace kl

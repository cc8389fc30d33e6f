#pragma once
// The LLM writes structure, the tuner sweeps what it declared. Whenever the best candidate is a
// source the tuner has not swept yet (the baseline at the start, then every LLM rewrite that wins),
// the tuner proposes for a few rounds over its tunables; otherwise the LLM proposes. Either may
// run dry (a small space, a spent token budget): then the other carries on.
#include "core/propose/proposer.h"

#include <memory>
#include <string>

namespace kl {

class HybridProposer : public Proposer {
public:
    HybridProposer(std::unique_ptr<Proposer> writer, std::unique_ptr<Proposer> tuner, int tunerRounds);

    std::string kind() const override { return m_writer->kind() + "+" + m_tuner->kind(); }
    std::vector<Proposal> propose(const ProposalContext& context, int count, const std::atomic<bool>* cancel) override;
    void warmUp(const Problem& problem, const Candidate& start) override
    {
        if (!start.source.empty())
            m_tuner->warmUp(problem, start);
    }
    bool writesKernels() const override { return m_writer->writesKernels(); }
    // The writer's requests so far (each opens a cycle); once the writer has run dry, every tuner
    // round is a cycle of its own.
    int cycle() const override { return m_cycle; }
    // The tuner's guesses when the next round is the tuner's; none before the writer's turn.
    std::vector<Proposal> anticipate(const ProposalContext& context, int count, int guesses) const override;

private:
    bool tunersTurn(const ProposalContext& context) const;
    std::unique_ptr<Proposer> m_writer;
    std::unique_ptr<Proposer> m_tuner;
    int m_tunerRounds;
    int m_tunerLeft = 0;
    std::string m_sweptHash; // the best source the tuner was last given rounds for
    bool m_writerDry = false;
    int m_cycle = 0;
};

} // namespace kl

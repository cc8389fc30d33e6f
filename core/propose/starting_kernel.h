#pragma once
// A session that starts from a kernel nobody in the loop wrote (torch.compile's, or a file the
// engineer names) on a problem with no kernel yet: round 1 proposes that kernel as it is, timed
// against PyTorch eager in its job; from round 2 the proposer it wraps carries on from whatever the
// loop kept (the tuner sweeps the kernel's tunables, a model rewrites it).
#include "core/propose/proposer.h"

#include <memory>
#include <string>

namespace kl {

class StartingKernel : public Proposer {
public:
    // `origin` names where the kernel came from ("inductor", "human"): the stored proposer detail.
    StartingKernel(std::unique_ptr<Proposer> next, Candidate start, std::string origin, std::string hypothesis);

    std::string kind() const override { return m_next->kind(); }
    bool writesKernels() const override { return true; }
    int cycle() const override { return m_given ? m_next->cycle() : 0; }
    void warmUp(const Problem& problem, const Candidate& start) override;
    std::vector<Proposal> propose(const ProposalContext& context, int count, const std::atomic<bool>* cancel) override;
    std::vector<Proposal> anticipate(const ProposalContext& context, int count, int guesses) const override;

private:
    std::unique_ptr<Proposer> m_next;
    Candidate m_start;
    std::string m_origin;
    std::string m_hypothesis;
    bool m_given = false;
};

} // namespace kl

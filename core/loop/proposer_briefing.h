#pragma once
// What the proposer is told before each round: the incumbent it starts from (the best so far, or the
// iteration "continue from here" chose), the device's facts and ceilings, every iteration so far
// (failures and refusals included), the engineer's steering, and the best verified kernels of similar
// problems from earlier sessions. A value in, a ProposalContext out: no store, no runner.
#include "core/compile/occupancy.h"
#include "core/loop/comparison.h"
#include "core/loop/loop_values.h"
#include "core/model/problem.h"
#include "core/propose/proposer.h"
#include "core/protocol/messages.h"

#include <optional>
#include <string>
#include <vector>

namespace kl {

namespace store {
class Store;
} // namespace store

// The best candidate so far (or the one "continue from here" chose), what the next round starts from.
struct Incumbent {
    Proposal proposal;
    IterationOutcome outcome;
    std::vector<SizeTiming> timings;
    StaticSummary statics;
};

// What the proposer is told of an iteration (ProposalContext::history).
EvaluatedProposal historyEntry(const IterationOutcome& outcome, std::string rejection = {});

// The runner's description over the architecture's limits (the measured values where it gives them).
DeviceLimits limitsOf(const protocol::DeviceDescription& device, const std::string& arch);

class ProposerBriefing {
public:
    explicit ProposerBriefing(const Problem& problem);

    void setDevice(const protocol::DeviceDescription& device, const DeviceLimits& limits);
    // The best verified candidates of other sessions of problems of this name (at most three), as
    // external memory for an LLM; none of session `sessionId`.
    void readExamples(const store::Store& store, std::int64_t sessionId);
    // The baseline kernel's outcome once measured; without one, PyTorch eager's time comes from each
    // best's own job.
    void setBaseline(const IterationOutcome& baseline) { m_baseline = baseline.medianUs; }

    void addToHistory(EvaluatedProposal entry) { m_history.push_back(std::move(entry)); }
    const std::vector<EvaluatedProposal>& history() const { return m_history; }
    void addSteering(std::string text) { m_steering.push_back(std::move(text)); }

    // Round `round`'s context from `best`, with `remaining` rounds left in the budget; the history so
    // far unless `withHistory` is false (the caller adds its own).
    ProposalContext context(const Incumbent& best, int round, int remaining, bool withHistory = true) const;

private:
    const Problem& m_problem;
    protocol::DeviceDescription m_device;
    DeviceLimits m_limits;
    std::optional<std::optional<double>> m_baseline; // set: a baseline kernel was measured (its median)
    std::vector<EvaluatedProposal> m_history;
    std::vector<std::string> m_steering;
    std::vector<RetrievedExample> m_examples;
};

} // namespace kl

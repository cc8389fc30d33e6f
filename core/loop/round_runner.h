#pragma once
// The rounds of one loop, one at a time: round 0 measures the baseline; each round after it asks the
// proposer for its k proposals, refuses or reviews each, queues the rest on the pool (compiled side by
// side where no review waits between them), reads their results in the order proposed while the next
// round's guesses compile, and closes the round: the decision, the new incumbent, pass@k's tally, and
// every iteration told. It keeps the incumbent the rounds build on. The session around it
// (TuningSession) decides when to stop. No Qt.
#include "core/loop/loop_events.h"
#include "core/loop/proposer_briefing.h"
#include "core/loop/scaling.h"
#include "core/loop/stop_policy.h"
#include "core/loop/tuning_session.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kl {

class CandidatePipeline;
class ContinueFromHere;
class IterationRecorder;
class LookAhead;
struct PendingCandidate;
namespace pool {
class TurnOrder;
} // namespace pool
namespace store {
struct DecisionRecord;
} // namespace store

class RoundRunner {
public:
    // What the rounds use, all the session's (TuningSession's) and outliving this; `gate` and
    // `lookAhead` may be null. `remainingAfter(rounds)`: the budget's rounds left after `rounds`.
    RoundRunner(const Problem& problem, const LoopConfig& config, CandidatePipeline& pipeline,
        IterationRecorder& recorder, ProposerBriefing& briefing, LoopEvents& events, ContinueFromHere& continueFromHere,
        ReviewGate* gate, LookAhead* lookAhead, std::function<int(int)> remainingAfter);
    ~RoundRunner();

    // Round 0: the baseline kernel's job (the proposer warms up meanwhile). The session's final status
    // when it cannot go on, else none.
    std::optional<std::string> measureBaseline(
        Proposer& proposer, LoopSummary& summary, const std::atomic<bool>* cancel);
    // No kernel yet: PyTorch eager, timed in every job, is the baseline; the first candidate to pass
    // becomes the incumbent. Instead of measureBaseline.
    void startWithoutKernel(Proposer& proposer);

    enum class End { Next, Exhausted, Cancelled };
    // Round `round` (>= 1), with `remaining` rounds left in the budget.
    End run(Proposer& proposer, int round, int remaining, LoopProgress& progress, LoopSummary& summary,
        const std::atomic<bool>* cancel);
    // The loop's guesses stop here (the session's end drops them).
    void dropLookAhead() { m_lookAhead = nullptr; }

    // The incumbent (null: the baseline did not pass); a placeholder while no kernel has passed.
    const Incumbent* incumbent() const { return m_best.get(); }
    // No kernel has passed yet (a problem without a baseline kernel): the incumbent is a placeholder with
    // no source and no timings, and the first candidate to pass becomes the incumbent.
    bool noIncumbentYet() const;
    const std::optional<IterationOutcome>& baseline() const { return m_baseline; }
    const ScalingTally& scaling() const { return m_scaling; }

private:
    using Pending = std::vector<std::unique_ptr<PendingCandidate>>;
    // Before the loop waits for pending[next] (while it runs): round `nextRound`'s likely proposals,
    // from what has arrived (`arrived`), compile ahead (look_ahead.h).
    void lookAhead(const Proposer& proposer, int nextRound, const std::vector<EvaluatedCandidate>& arrived,
        const Pending& pending, std::size_t next);
    void collect(
        Proposer& proposer, int round, Pending& pending, std::vector<EvaluatedCandidate>& batch, LoopSummary& summary);
    Pending compileTogether(
        const std::vector<Proposal>& proposals, int round, pool::TurnOrder& order, const std::atomic<bool>* cancel);
    bool review(Proposal& proposal, const ProposalContext& context, int round, const std::function<void()>& collect);
    IterationOutcome refusedOutcome(const Proposal& proposal, int round) const;
    void refuse(IterationOutcome& outcome, const Proposal& proposal, const store::DecisionRecord* decision,
        const std::string& rejection);
    void close(std::vector<EvaluatedCandidate>& batch, int round, RoundTally& tally);
    double decide(std::vector<EvaluatedCandidate>& batch); // the round's gain over the previous best
    const Incumbent* bar() const { return noIncumbentYet() ? nullptr : m_best.get(); } // what candidates must beat
    void phase(int round, LoopPhase phase, const std::string& detail = {});

    const Problem& m_problem;
    const LoopConfig& m_config;
    CandidatePipeline& m_pipeline;
    IterationRecorder& m_recorder;
    ProposerBriefing& m_briefing;
    LoopEvents& m_events;
    ContinueFromHere& m_continueFromHere;
    ReviewGate* m_gate;
    LookAhead* m_lookAhead;
    std::function<int(int)> m_remainingAfter;
    std::unique_ptr<Incumbent> m_best;
    std::optional<IterationOutcome> m_baseline;
    ScalingTally m_scaling;
};

} // namespace kl

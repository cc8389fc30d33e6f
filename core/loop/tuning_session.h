#pragma once
// One tuning session: propose → compile → verify → benchmark → profile → synthesise → decide,
// every step stored. The CLI drives it directly; the GUI runs it on a worker thread. Observers
// receive immutable values through one event stream (loop_events.h); a review gate lets the engineer accept, reject,
// steer or replace every proposal through one API. This class owns a session's parts and runs its rounds
// until a stop rule fires; each other idea has its own class: starting the runners (measuring_setup.h),
// one candidate through compile, runner and record (CandidatePipeline), one round (RoundRunner), what
// one iteration writes (IterationRecorder), what the proposer is told (ProposerBriefing), a round's
// decision (round_decision.h), compiling the next round ahead (LookAhead), "continue from here"
// (ContinueFromHere) and adding a candidate to a stored session (SessionAppend).
#include "core/compile/compiler.h"
#include "core/compile/static_report.h"
#include "core/findings/finding.h"
#include "core/loop/comparison.h"
#include "core/loop/iteration_recorder.h"
#include "core/loop/loop_events.h"
#include "core/loop/loop_values.h"
#include "core/loop/proposer_briefing.h"
#include "core/loop/scaling.h"
#include "core/loop/stop_policy.h"
#include "core/model/problem.h"
#include "core/propose/proposer.h"
#include "core/protocol/messages.h"
#include "core/runnerclient/evaluate_job.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kl {

class CandidatePipeline;
class ContinueFromHere;
class RunnerClient;
class LookAhead;
class RoundRunner;
struct MeasuringSetup;
namespace pool {
class RunnerPool;
struct PooledResult;
class TurnOrder;
} // namespace pool
namespace store {
class Store;
struct DecisionRecord;
} // namespace store
using Clock = std::chrono::steady_clock;

// An outcome with what the decision and the next proposal need.
struct EvaluatedCandidate {
    Proposal proposal;
    IterationOutcome outcome;
    std::vector<SizeTiming> timings;
    StaticSummary statics;
    // Against the incumbent of its round, worked out as its result arrives (while the GPU runs the next
    // job) rather than when the round is decided: the incumbent does not change within a round.
    std::optional<Comparison> vsIncumbent;
};

struct ReviewDecision {
    enum class Kind { Accept, Reject, Steer, Replace };
    Kind kind = Kind::Accept;
    std::string reason; // reject: told to the proposer
    std::string steering; // steer: free text for the next proposal (the proposal is not run)
    std::optional<Candidate> replacement; // replace: the engineer's edited candidate
    TunableValues replacementTunables;
};

class ReviewGate {
public:
    virtual ~ReviewGate() = default;
    // Blocks until the engineer decides. Called on the loop's thread.
    virtual ReviewDecision review(const Proposal& proposal, const ProposalContext& context) = 0;
};

class TuningSession {
public:
    // One runner (a pool of one, borrowing it).
    TuningSession(const Problem& problem, store::Store& store, RunnerClient& runner, LoopConfig config);
    // A pool of runners: the k candidates of a round are compiled one after another and each is queued
    // as soon as it is ready, so they run side by side on the pool's GPUs while the next compiles.
    TuningSession(const Problem& problem, store::Store& store, pool::RunnerPool& runners, LoopConfig config);
    ~TuningSession();

    // Every observer subscribes here (the CLI's output, the GUI's live session); see loop_events.h.
    LoopEvents& events() { return *m_events; }
    const std::shared_ptr<LoopEvents>& eventStream() const { return m_events; } // for proposers' streamed text
    // Publishes into `events` instead of its own stream (before run()): a session runner's, which its
    // observers and its proposer's streamed text share before the loop exists.
    void setEventStream(std::shared_ptr<LoopEvents> events) { m_events = std::move(events); }
    void setReviewGate(ReviewGate* gate) { m_gate = gate; }

    // Runs until a stop rule fires or `cancel` is set. Throws kl::Error("runner.no-device") when
    // the runner has no GPU, before anything is stored.
    LoopSummary run(Proposer& proposer, const std::atomic<bool>* cancel = nullptr);

    // One hand-written candidate through the same pipeline, recorded as proposer "human" in a
    // session of its own (with the baseline measured first, for the speedup).
    LoopSummary evaluateOne(
        const Candidate& candidate, const TunableValues& tunables, const std::atomic<bool>* cancel = nullptr);

    // One hand-written candidate into stored session `sessionId` of this problem, as its next
    // iteration (proposer "human", its parent the session's best so far), timed against the
    // baseline in the same job: the engineer's "Evaluate" into the open session, and `kernelloop-cli
    // evaluate --session N`. The session's status stays; its summary counts the candidate (and names
    // it best when it is faster). Throws "store.unknown-session", "session.other-problem",
    // "session.running" (a live loop records it: hand it to that loop's proposer) and, like run(),
    // "runner.no-device" before anything is stored (session_append.h).
    LoopSummary evaluateInto(std::int64_t sessionId, const Candidate& candidate, const TunableValues& tunables,
        const std::atomic<bool>* cancel = nullptr);

    // "Continue from here": from the next round on, iteration `index` of this session is the incumbent
    // the proposer starts from and the stored parent of the next proposals (a fork in the proposal
    // tree). A measured iteration also becomes the bar the next candidates must beat; one that was not
    // measured (failed, refused) is only the base. Safe from any thread while run() runs; the last
    // request before a round wins. An index this loop has not recorded is ignored.
    void continueFrom(int iterationIndex);

    const protocol::DeviceDescription& device() const { return m_device; }
    // Adds rounds to a running session's budget (no effect on a session without one). Safe from
    // any thread: the GUI's "extend budget" calls it while the loop runs.
    void extendBudget(int rounds);

private:
    void prepare(const std::string& proposerName); // the runners started, the stored session created
    void startMeasuring(); // the runners, the reference and baseline compiled, the problem row: m_setup, m_pipeline
    int remainingAfter(int rounds) const; // rounds left in the budget after `rounds` (1000: no limit)
    StopPolicy currentStop() const;
    LoopSummary finish(LoopSummary summary, std::string status, Clock::time_point start);

    const Problem& m_problem;
    store::Store& m_store;
    std::unique_ptr<pool::RunnerPool> m_ownPool; // the single runner's pool
    pool::RunnerPool* m_pool = nullptr;
    LoopConfig m_config;
    IterationRecorder m_recorder;
    ProposerBriefing m_briefing;
    std::shared_ptr<LoopEvents> m_events = std::make_shared<LoopEvents>();
    ReviewGate* m_gate = nullptr;
    std::atomic<int> m_extraRounds { 0 };
    std::unique_ptr<ContinueFromHere> m_continueFromHere; // "continue from here" (continue_from_here.h)
    protocol::DeviceDescription m_device;
    std::int64_t m_sessionId = 0;
    std::unique_ptr<MeasuringSetup> m_setup; // once the runners started
    std::unique_ptr<CandidatePipeline> m_pipeline; // on m_setup
    std::unique_ptr<RoundRunner> m_rounds; // run()'s
    // Last: its threads use the members above and are joined first (one session's run() at a time).
    std::unique_ptr<LookAhead> m_lookAhead;
    bool m_finished = false; // finish() ran: the stored session has its status
    bool m_created = false; // prepare() created the stored session (evaluateInto adds to one it leaves as it is)
};

} // namespace kl

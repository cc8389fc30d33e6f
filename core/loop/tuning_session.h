#pragma once
// One tuning session: propose → compile → verify → benchmark → profile → synthesise → decide,
// every step stored. The CLI drives it directly; the GUI runs it on a worker thread. Observers
// receive immutable values; a review gate lets the engineer accept, reject, steer or replace
// every proposal through one API.
#include "core/compile/compiler.h"
#include "core/compile/static_report.h"
#include "core/findings/finding.h"
#include "core/loop/comparison.h"
#include "core/loop/scaling.h"
#include "core/loop/stop_policy.h"
#include "core/model/problem.h"
#include "core/propose/proposer.h"
#include "core/protocol/messages.h"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kl {

class RunnerClient;
namespace store {
class Store;
struct DecisionRecord;
}
using Clock = std::chrono::steady_clock;

enum class LoopMode { Auto, Review };

struct LoopConfig {
    StopPolicy stop;
    LoopMode mode = LoopMode::Auto;
    int candidatesPerIteration = 1;    // k proposals evaluated per iteration
    protocol::EvaluateOptions evaluate; // trials, repetitions, metric set
    std::chrono::milliseconds jobTimeout { 120'000 };
    double noiseGain = 0.01;           // a new best must be faster by this beyond the noise interval
    bool useCache = true;
    std::string label;                 // the session's name in listings
    std::string proposerDetail;        // "tuner:auto", "llm:openai/gpt-4o"
};

enum class LoopPhase { Propose, Review, Compile, Verify, Benchmark, Profile, Synthesise, Decide, Finished };
const char* loopPhaseName(LoopPhase phase);

// One evaluated (or refused) proposal, as observers and summaries see it.
struct IterationOutcome {
    int index = 0;          // iteration index in the store (the baseline is 1)
    int round = 0;          // loop round (0: the baseline)
    std::string proposer;   // "baseline", "tuner", "llm", "human"
    std::string hypothesis;
    std::string fileName;
    std::string sourceHash;
    TunableValues tunables;
    std::string status;     // "ok", "failed", "error"
    std::string category;   // "passed", runner category, "compile.<kind>", "plan.*", "proposer.*", "rejected"
    std::string detail;
    std::optional<double> medianUs; // first main size
    std::optional<double> gbps;
    std::optional<double> pctOfCopy;
    std::optional<double> speedup;  // vs baseline, geometric mean over main sizes, same job
    std::map<std::string, double> speedupBySize;
    std::vector<Finding> findings;
    std::string comparison;         // vs the incumbent, e.g. "1.42x [1.39, 1.45] faster"
    std::optional<double> speedupOverBest;  // vs the incumbent of its round (passed candidates)
    std::optional<double> predictedSpeedup; // what the proposer expected over the incumbent
    bool kept = false;              // became the best
    bool fromCache = false;
    bool losesOnSomeSize = false;
    std::map<std::string, double> phasesMs; // compile, verify, time, profile, total
    std::optional<std::int64_t> candidateId;
};

struct LoopSummary {
    std::int64_t sessionId = 0;
    std::string stopReason;
    int rounds = 0;
    int evaluated = 0;      // candidates that reached the runner or the cache
    int passed = 0;
    double wallSeconds = 0.0;
    double candidatesPerMinute = 0.0;
    std::optional<IterationOutcome> baseline;
    std::optional<IterationOutcome> best;
    bool cancelled = false;
    // Test-time scaling over the rounds after the baseline (see ScalingTally): pass@k and speedup@k.
    int candidatesPerRound = 1;
    std::optional<double> passAtK;
    std::optional<double> speedupAtK;
    std::int64_t tokens = 0; // LLM tokens over every exchange of the session
};
nlohmann::json toJson(const LoopSummary& summary); // what the store keeps as the session's summary

// An outcome with what the decision and the next proposal need.
struct EvaluatedCandidate {
    Proposal proposal;
    IterationOutcome outcome;
    std::vector<SizeTiming> timings;
    StaticSummary statics;
};

class LoopObserver {
public:
    virtual ~LoopObserver() = default;
    virtual void phaseChanged(int /*round*/, LoopPhase /*phase*/, const std::string& /*detail*/) { }
    virtual void iterationFinished(const IterationOutcome& /*outcome*/) { }
    virtual void proposerText(const std::string& /*text*/) { } // streamed LLM text
};

struct ReviewDecision {
    enum class Kind { Accept, Reject, Steer, Replace };
    Kind kind = Kind::Accept;
    std::string reason;   // reject: told to the proposer
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
    TuningSession(const Problem& problem, store::Store& store, RunnerClient& runner, LoopConfig config);
    ~TuningSession();

    void setObserver(LoopObserver* observer) { m_observer = observer; }
    void setReviewGate(ReviewGate* gate) { m_gate = gate; }

    // Runs until a stop rule fires or `cancel` is set. Throws kl::Error("runner.no-device") when
    // the runner has no GPU, before anything is stored.
    LoopSummary run(Proposer& proposer, const std::atomic<bool>* cancel = nullptr);

    // One hand-written candidate through the same pipeline, recorded as proposer "human" in a
    // session of its own (with the baseline measured first, for the speedup).
    LoopSummary evaluateOne(const Candidate& candidate, const TunableValues& tunables,
                            const std::atomic<bool>* cancel = nullptr);

    const protocol::DeviceDescription& device() const { return m_device; }

private:
    struct Incumbent;
    void prepare(const std::string& proposerName);
    EvaluatedCandidate evaluate(const Proposal& proposal, int round, std::optional<std::int64_t> parentId,
                                const std::atomic<bool>* cancel);
    ProposalContext context(int round, int remaining) const;
    void phase(int round, LoopPhase phase, const std::string& detail = {});
    double decide(std::vector<EvaluatedCandidate>& batch); // the round's gain over the previous best
    void recordRefusal(IterationOutcome& outcome, const Proposal& proposal, const store::DecisionRecord* decision);
    LoopSummary finish(LoopSummary summary, const std::string& status, Clock::time_point start);
    void record(IterationOutcome& outcome, const Proposal& proposal, std::optional<std::int64_t> parentId,
                const struct EvaluationArtifacts& artifacts);

    const Problem& m_problem;
    store::Store& m_store;
    RunnerClient& m_runner;
    LoopConfig m_config;
    LoopObserver* m_observer = nullptr;
    ReviewGate* m_gate = nullptr;

    protocol::DeviceDescription m_device;
    DeviceLimits m_limits;
    std::int64_t m_sessionId = 0;
    std::string m_problemHash;
    std::unique_ptr<Incumbent> m_best;
    std::optional<IterationOutcome> m_baseline;
    std::vector<EvaluatedProposal> m_history;
    std::vector<std::string> m_steering;
    ScalingTally m_scaling;
    std::vector<RetrievedExample> m_examples; // from earlier sessions, for proposers that learn from them
    std::map<std::string, std::int64_t> m_candidateIds; // source hash + tunables → candidate row
    struct Reference;
    std::unique_ptr<Reference> m_reference; // compiled reference and baseline, reused by every job
};

} // namespace kl

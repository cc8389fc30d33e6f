#pragma once
// The loop's own values: its mode and configuration, its phases, one iteration's outcome and the
// session's summary. Observers and front ends receive these; none points into live loop state.
#include "core/findings/finding.h"
#include "core/loop/stop_policy.h"
#include "core/model/candidate.h"
#include "core/protocol/messages.h"
#include "core/store/records.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kl {

enum class LoopMode { Auto, Review };

struct LoopConfig {
    StopPolicy stop;
    LoopMode mode = LoopMode::Auto;
    int candidatesPerIteration = 1; // k proposals evaluated per iteration
    protocol::EvaluateOptions evaluate; // trials, repetitions, metric set
    // 0: profile every candidate. f > 0: only candidates within f of the incumbent's speedup over the
    // baseline (the runner times first and skips CUPTI for the rest): only a new best's counters steer
    // the tuner, and the profile is most of a job. The baseline and the engineer's candidates always.
    double profileWithin = 0.0;
    std::chrono::milliseconds jobTimeout { 120'000 };
    double noiseGain = 0.01; // a new best must be faster by this beyond the noise interval
    // Threads that compile the next round's likely candidates while this round's jobs run
    // (core/loop/compile_ahead.h); -1: CompileAhead::widthForThisHost(), 0: none.
    int compileAhead = -1;
    bool useCache = true;
    std::string label; // the session's name in listings
    std::string proposerDetail; // "tuner:auto", "llm:openai/gpt-4o"
};

enum class LoopPhase { Propose, Review, Compile, Verify, Benchmark, Profile, Synthesise, Decide, Finished };
const char* loopPhaseName(LoopPhase phase);

// One evaluated (or refused) proposal, as observers and summaries see it.
struct IterationOutcome {
    int index = 0; // iteration index in the store (the baseline is 1)
    int round = 0; // loop round (0: the baseline)
    std::string proposer; // "baseline", "tuner", "llm", "human"
    std::string hypothesis;
    std::string fileName;
    std::string sourceHash;
    TunableValues tunables;
    std::string status; // "ok", "failed", "error"
    std::string category; // "passed", runner category, "compile.<kind>", "plan.*", "proposer.*", "rejected"
    std::string detail;
    std::optional<double> medianUs; // first main size
    std::optional<double> gbps;
    std::optional<double> pctOfCopy;
    std::optional<double> pctOfSol; // first main size: speed of light (copy or FLOPs ÷ the precision's ceiling)
    std::optional<Bound> solBound;
    std::optional<double> speedup; // vs baseline, geometric mean over main sizes, same job
    std::map<std::string, double> speedupBySize;
    std::vector<Finding> findings;
    std::string comparison; // vs the incumbent, e.g. "1.42x [1.39, 1.45] faster"
    std::optional<double> speedupOverBest; // vs the incumbent of its round (passed candidates)
    std::optional<double> predictedSpeedup; // what the proposer expected over the incumbent
    bool kept = false; // became the best
    bool fromCache = false;
    bool losesOnSomeSize = false;
    std::map<std::string, double> phasesMs; // compile, verify, time, profile, total
    std::optional<std::int64_t> candidateId;
    std::string endpoint; // the runner endpoint that measured it ("local:0", "ssh:host:1"); empty: none did
    std::string device; // its GPU, "NVIDIA H200 #0"
    // What a window following the loop shows of it without reading the store (its history row and chart
    // figures: core/report/live_iteration.h), each as the store records it.
    std::string state; // the stored iteration's: "done", "refused" (by the engineer), "proposer-error"
    std::string proposerDetail; // its candidate's ("tuner:auto", "baseline")
    std::optional<std::int64_t> parentCandidateId; // the candidate it was built on
    std::optional<store::DecisionRecord::Kind> decision; // the last decision on it, once its round is decided
    std::shared_ptr<const protocol::EvaluateResult> reply; // the runner's (or the cache's) typed reply
    store::KernelStatics statics; // its compile's static facts
    std::int64_t startedMs = 0; // its row's begin and end, as stored
    std::int64_t endedMs = 0;
};

struct LoopSummary {
    std::int64_t sessionId = 0;
    std::string stopReason;
    int rounds = 0;
    int evaluated = 0; // candidates that reached the runner or the cache
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
    int compiledAhead = 0; // candidates compiled while the round before ran (core/loop/compile_ahead.h)
    int usedAhead = 0; // of those, proposed (the rest were wrong guesses: CPU time only)
};
// Stored as store::SessionSummary, field by field (core/loop/store_records.h).

} // namespace kl

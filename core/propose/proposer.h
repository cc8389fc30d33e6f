#pragma once
// The Proposer interface: the built-in tuner, the LLM proposers and the engineer's editor all
// hand the loop candidates through it, and learn the outcome of each through the context of the
// next call. Everything here is a value: a proposer never sees live loop state.
#include "core/exchange/exchange.h"
#include "core/findings/finding.h"
#include "core/model/candidate.h"
#include "core/model/problem.h"

#include <atomic>
#include <optional>
#include <string>
#include <vector>

namespace kl {

// What a proposer knows about one past iteration.
struct EvaluatedProposal {
    int iteration = 0;
    std::string proposer; // "tuner" | "llm" | "human" | "baseline"
    std::string sourceHash; // contentHash of the candidate source
    TunableValues tunables;
    std::string hypothesis;
    // "passed", a runner category, "compile.<kind>", "proposer.<kind>", "rejected"; "pending" only in
    // the contexts Proposer::anticipate sees (queued, not measured yet)
    std::string category;
    std::string detail; // compiler summary or compact verification report
    std::optional<double> medianUs; // at the first main size
    std::optional<double> speedup; // vs the baseline, geometric mean over the main sizes
    bool kept = false; // became the best
    std::vector<Finding> findings;
    std::string rejection; // the engineer's reason, when rejected in review
};

// The device the session runs on, as measured by the runner (plus the architecture's limits).
struct MeasuredDevice {
    std::string name;
    std::string arch; // "sm_90"
    int smCount = 0;
    std::int64_t l2Bytes = 0;
    std::int64_t sharedPerSm = 0;
    std::int64_t sharedPerBlockOptIn = 0;
    int registersPerSm = 0;
    int maxWarpsPerSm = 0;
    double smClockMhz = 0.0;
    double copyGbps = 0.0; // measured device-to-device copy
    double peakTflops = 0.0; // lead value for the relevant pipe: the problem's precision's ceiling
    std::string precision; // what the problem's FLOPs run in: "FP16 tensor", "FP32 CUDA cores"
    std::string precisionWhy; // why: "a matrix product", "not a matrix product", "the problem's \"compute\""
    double fp32Tflops = 0.0; // the CUDA cores' FP32 ceiling, beside a tensor one
    double measuredTensorTflops = 0.0; // the runner's mma.sync fp16 microbenchmark; 0: not measured
};

// A verified candidate from earlier sessions in the store: external memory for the LLM.
struct RetrievedExample {
    std::string problem; // the problem it solved
    std::string summary; // "1.46x over its baseline, 66.9% of copy, verified"
    std::string source;
    double speedup = 0.0;
};

// Static facts of the best candidate's main kernel, for prompts.
struct StaticSummary {
    int registers = 0;
    std::int64_t sharedBytes = 0;
    std::int64_t spillBytes = 0;
    double occupancy = 0.0;
    std::string limiter;
    std::string primaryStall;
    // The hottest source lines of its PC samples (lines::hotLineText, hottest first, at most three);
    // empty when it was not sampled. Measured, not static, but it travels with the candidate's facts.
    std::vector<std::string> hotLines;
};

struct ProposalContext {
    const Problem* problem = nullptr;
    int iteration = 0; // index of the iteration being proposed
    Candidate best;
    TunableValues bestTunables;
    std::string bestSourceHash;
    std::optional<double> bestMedianUs;
    std::optional<double> baselineMedianUs;
    std::optional<double> bestSpeedup;
    StaticSummary bestStatic;
    std::vector<Finding> bestFindings;
    std::optional<double> bestGbps;
    std::optional<double> bestPctOfCopy;
    std::optional<double> bestPctOfSol; // speed of light, and which bound ("memory" | "compute")
    std::string bestSolBound;
    MeasuredDevice hardware;
    std::vector<EvaluatedProposal> history; // oldest first, failures included
    std::vector<std::string> steering; // the engineer's steering notes, oldest first
    int remainingBudget = 0; // iterations left
    std::vector<RetrievedExample> examples; // best verified candidates of similar problems, best first
};

struct Proposal {
    Candidate candidate;
    TunableValues tunables;
    std::string proposer; // "tuner" | "llm" | "human"
    std::string hypothesis;
    std::optional<double> predictedSpeedup;
    std::vector<RoleExchange> exchanges; // the LLM exchanges it came from, keys removed
    // Non-empty when the proposer tried and failed (e.g. an LLM reply without code); the loop
    // records it as an iteration with category "proposer.<failure>" and goes on.
    std::string failure;
    std::string failureDetail;
};

class Proposer {
public:
    virtual ~Proposer() = default;
    virtual std::string kind() const = 0;
    // Up to `count` proposals for the next iteration. Empty: nothing left to propose.
    virtual std::vector<Proposal> propose(const ProposalContext& context, int count, const std::atomic<bool>* cancel)
        = 0;
    // Work that needs only the problem and the candidate the first round starts from (the tuner
    // enumerates its search space, ~0.3-0.5 s): the loop runs it on a thread of its own while the
    // baseline is measured, never beside propose().
    virtual void warmUp(const Problem& problem, const Candidate& start)
    {
        (void)problem;
        (void)start;
    }
    // Whether it can write a kernel from nothing: a problem with no kernel yet needs such a proposer.
    virtual bool writesKernels() const { return false; }
    // Which cycle the last propose() belongs to, for patience (StopPolicy): rounds of one cycle count
    // as one, 0 means not counted at all. A hybrid's cycle is a model rewrite plus the tuner's rounds on
    // it, and the tuner's rounds before the model has spoken are not counted. -1: each round is its
    // own cycle.
    virtual int cycle() const { return -1; }
    // Up to `guesses` candidates this proposer would likely return from propose(context, count) (the
    // next round's context as it looks before every result is in; an entry of category "pending" has
    // not been measured yet), the most likely first. The loop compiles them while the GPU is busy and
    // takes them when propose() names them (core/loop/compile_ahead.h); nothing here is ever
    // measured, and this must change nothing propose() does. Cheap guesses only: an LLM is never
    // asked (empty).
    virtual std::vector<Proposal> anticipate(const ProposalContext& context, int count, int guesses) const
    {
        (void)context;
        (void)count;
        (void)guesses;
        return {};
    }
};

} // namespace kl

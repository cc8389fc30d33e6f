#pragma once
// Everything a prompt may tell the model, as plain values the loop fills in: the problem, the
// current best candidate, the measured state, findings, hardware, recent history (failures
// included), the engineer's steering and rejections, and retrieved examples. The templates in
// resources/prompts/ decide what each role sees; promptSections() renders each part as text.
#include "core/model/candidate.h"
#include "core/model/problem.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kl {

struct ProblemFacts {
    std::string name;
    CandidateLanguage language = CandidateLanguage::Cuda; // what candidates are written in (the baseline's)
    std::string operation; // what it computes, in words (the problem's description)
    std::string arch;
    std::vector<std::string> tensors; // "x: input f16 [M, N], row padding 8 (stride_x)"
    std::vector<std::string> scalars; // "eps: f32 = 1e-05"
    std::vector<std::string> mainSizes; // "8192x4096: M=8192, N=4096"
    std::vector<std::string> fuzzSizes; // "M=7, N=1000"
    std::vector<std::string> tolerances; // "f16: atol 0.01, rtol 0.01"
    std::string bytes; // expressions, for the roofline
    std::string flops;
    // For a first kernel (a problem with no kernel yet): what it must compute and on what.
    std::string referenceSource; // the PyTorch reference (reference.py), whole
    std::string referenceFile; // its file name
    // Per main size: "8192x4096: x f16 shape [8192, 4096] strides [4096, 1]; y ..." (elements).
    std::vector<std::string> concreteTensors;
};
ProblemFacts describeProblem(const Problem& problem);

struct CandidateFacts {
    std::string source; // whole file, @kl directives included
    std::vector<std::string> launches; // the launch lines as declared
    std::vector<std::string> tunables; // "THREADS = 128 in 32, 64, ..."
    std::vector<std::string> constraints;
    TunableValues chosen; // the values measured
};
CandidateFacts describeCandidate(const Candidate& candidate, const TunableValues& chosen = {});

// The measured state of the current best candidate. Unknown values stay empty.
struct MeasuredState {
    int iteration = 0;
    std::optional<double> currentMicros; // the candidate being improved
    std::optional<double> baselineMicros;
    std::optional<double> speedup; // baseline / current
    std::string correctness; // "verified on 8 size sets", "failed: ..."
    std::optional<double> gigabytesPerSecond;
    std::optional<double> percentOfCeiling; // of a copy of the same bytes (the runner's same-size copy)
    std::optional<double> percentOfSol; // speed of light: the copy or FLOPs ÷ the precision's ceiling
    std::string solBound; // "memory" | "compute"
    std::optional<int> registers;
    std::optional<std::int64_t> sharedBytes;
    std::optional<std::int64_t> spillBytes;
    std::optional<double> occupancy; // theoretical, 0..1
    std::string occupancyLimiter; // "registers", "shared memory", "warps", "blocks"
    std::optional<double> achievedOccupancy;
    std::string primaryStall; // "long_scoreboard (41%)"
    // From PC sampling, hottest first: "line 11: 96% of samples, long_scoreboard 89% (...) — j = next[j];"
    std::vector<std::string> hotLines;
};

struct FindingFacts {
    std::string id;
    std::string severity; // "high" | "medium" | "low"
    std::string summary; // one line
    std::string evidence; // the numbers that triggered it
    std::string direction; // what to try
};

struct HardwareFacts {
    std::string device; // "NVIDIA H200"
    std::string arch; // "sm_90"
    int smCount = 0;
    std::int64_t l2Bytes = 0;
    std::int64_t sharedPerSmBytes = 0;
    std::int64_t sharedPerBlockOptInBytes = 0;
    int registersPerSm = 0;
    int maxWarpsPerSm = 0;
    std::optional<double> dramGigabytesPerSecond; // measured copy ceiling: a 2 GiB device-to-device copy
    std::optional<double> smClockMhz;
    // "FP16 tensor ceiling: 1070 TFLOP/s at 1980 MHz (theoretical; 660 measured with mma.sync)"; the FP32
    // CUDA cores' beside a tensor one. Empty without a known architecture.
    std::vector<std::string> computeCeilings;
    std::vector<std::string> notes;
};

// One earlier iteration as the model should learn from it.
struct IterationFacts {
    int iteration = 0;
    std::string proposer; // "llm", "tuner", "human"
    std::string outcome; // "faster", "slower", "compile-error", "verify-failed", "proposer-error", ...
    std::string hypothesis;
    std::optional<double> micros;
    std::optional<double> speedup;
    std::string change; // what changed (tunables, a one-line diff summary)
    std::string report; // compile errors or the verification report (max error, index, window)
};

struct ExampleFacts {
    std::string problem; // the problem it solved
    std::string summary; // "1.9x over its baseline, verified"
    std::string source;
};

// For the debugger: the candidate that failed and why.
struct FailureFacts {
    std::string category; // "compile.syntax", "verify.mismatch", ...
    std::string report; // compiler log or verification report
    std::string source;
};

struct PromptPayload {
    ProblemFacts problem;
    CandidateFacts best;
    MeasuredState state;
    std::vector<FindingFacts> findings;
    HardwareFacts hardware;
    std::vector<IterationFacts> recent; // oldest first
    std::string steering; // the engineer's free text for this iteration
    std::vector<std::string> rejections; // "iteration 4: rejected: uses atomics on the output"
    std::vector<ExampleFacts> examples;
    std::string plan; // the planner's plan, for the coder
    std::optional<FailureFacts> failure; // for the debugger
    bool firstKernel = false; // no kernel yet: the specification section is filled
};

// The payload as named Markdown sections ("problem", "best_candidate", "state", "findings",
// "hardware", "history", "steering", "rejections", "examples", "plan", "failure", "specification"
// (the reference and the tensors at each timed size, for a first kernel), plus
// "iteration", "problem_name" and "kernel_names"). Parts with nothing to say are left out, so a
// template can write {{#findings}}...{{/findings}} around a heading. The candidate's language is
// there in words: "language" ("CUDA" | "Triton"), "code_fence" ("cuda" | "python"), "directive"
// ("// @kl" | "# @kl"), "compiler" ("NVRTC" | "Triton's compiler"), and "triton" only for Triton
// ({{#triton}}..{{/triton}}, {{^triton}}..{{/triton}}).
std::map<std::string, std::string> promptSections(const PromptPayload& payload);

} // namespace kl

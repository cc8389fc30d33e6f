#pragma once
// One evaluation as the core prepares it: the reference, the candidate and (optionally) the
// baseline, each with its tunables and its compiled module, turned into the runner's evaluate
// request (docs/runner-protocol.md): a case per main size (timed), per fuzz size, and padded cases
// where the problem declares row padding, with every launch resolved to numbers.
#include "core/compile/compiler.h"
#include "core/model/candidate.h"
#include "core/model/problem.h"
#include "core/protocol/messages.h"

#include <optional>
#include <string>
#include <vector>

namespace kl {

// A candidate with a choice for each of its tunables.
struct TunedCandidate {
    Candidate candidate;
    TunableValues tunables;
};

struct CompiledCandidate {
    TunedCandidate tuned;
    CompileResult compiled;
};

struct EvaluateJob {
    CompiledCandidate reference;
    CompiledCandidate candidate;
    std::optional<CompiledCandidate> baseline; // timed beside the candidate, never verified

    // The first program whose compile failed, in the order reference, candidate, baseline.
    const CompiledCandidate* firstCompileFailure() const;
};

// The problem's reference alone (a PyTorch reference: nothing to compile, ok).
CompiledCandidate compileReference(const Problem& problem, CompileOptions base = {});

// Compiles the problem's reference (default tunables), the candidate and the baseline for
// problem.arch with the problem's folder as the only include folder. `base` supplies extra
// options (line info, fast maths); its arch, tunables and include folder are replaced.
// Never throws for a bad candidate: a failed compile is in the job (firstCompileFailure()).
EvaluateJob compileEvaluateJob(
    const Problem& problem, TunedCandidate candidate, std::optional<TunedCandidate> baseline, CompileOptions base = {});

// Which sizes become cases, and how.
struct CasePlan {
    std::string label;
    protocol::CaseKind kind = protocol::CaseKind::Main;
    const SizeSet* sizes = nullptr;
    bool padded = false;
    bool timed = false;
};

// Main sizes (timed), fuzz sizes, then when any tensor of the problem has row padding the first
// main size and every fuzz size again with padded strides (kind padded, never timed).
std::vector<CasePlan> planCases(const Problem& problem);

// Builds the request. Throws kl::Error: "request.not-compiled" when a program failed to compile,
// "request.missing-kernel" when a launch names a kernel the compiled module lacks, and the
// launch plan's categories ("plan.constraint", "plan.bad-launch", "plan.unknown-name",
// "expression.*", "protocol.bad-arg") with the program's file and line and the case in the message.
protocol::EvaluateRequest buildEvaluateRequest(
    const Problem& problem, const EvaluateJob& job, const protocol::EvaluateOptions& options, std::string id = {});

} // namespace kl

#pragma once
// Reading a model's reply: the plan (hypothesis and predicted effect) and exactly one candidate
// in a fenced ```cuda block (```python for a Triton problem). Every other outcome has a category, so the loop can store
// it with the raw reply and go on to the next attempt.
#include "core/model/candidate.h"
#include "core/model/problem.h"

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace kl {

enum class ReplyCategory {
    Ok,
    NoCode, // no candidate block at all
    SeveralCandidates, // more than one block that could be the candidate
    WrongEntryPoint, // a launch names a kernel the source does not define (renaming one is fine)
    ChangedSignature, // a kernel's parameters no longer match its launch or the problem's buffers
    Truncated, // an unclosed code block, or cut off at the token limit
    Refusal, // the model declined
    Oversized, // the reply or the candidate is beyond the size limits
    InvalidDeclarations, // parseCandidate rejected the // @kl lines (its message says why)
    NoPlan, // a planner reply without a plan
};
std::string_view replyCategoryName(ReplyCategory category); // "ok", "no-code", "several-candidates", ...

// What the model expects to happen: stored beside the measured outcome (the hypothesis log).
struct Hypothesis {
    std::string plan; // the "## Plan" section or <plan> block
    std::string prediction; // the "## Predicted effect" section or line
    std::optional<double> predictedSpeedup; // "1.5x" in the prediction, if it gives one
};

struct ReplyExpectations {
    const Candidate* current = nullptr; // the candidate being improved (entry points, signatures)
    std::set<std::string> buffers; // the problem's tensors: passed as pointers
    std::set<std::string> scalars; // the problem's scalars: passed by value
    std::string plan; // the planner's plan (kept with the reply; kernel names need no announcing)
    // Triton: the candidate is a ```python block with # @kl lines and @triton.jit kernels, "candidate.py".
    CandidateLanguage language = CandidateLanguage::Cuda;
    std::size_t maxReplyBytes = 256u << 10;

    static ReplyExpectations forProblem(const Problem& problem, const Candidate* current);
};

struct ParsedReply {
    ReplyCategory category = ReplyCategory::Ok;
    std::string message; // for anything but Ok: one sentence the model can be shown
    Hypothesis hypothesis;
    std::string code; // the candidate block as written
    std::optional<Candidate> candidate;
    bool ok() const { return category == ReplyCategory::Ok; }
};

// A coder, debugger or single-role reply. `finishReason` is the Exchange's ("length" = cut off).
ParsedReply parseCandidateReply(
    std::string_view reply, std::string_view finishReason, const ReplyExpectations& expectations);

// A planner reply: Ok with a hypothesis, or NoPlan, Refusal, Truncated, Oversized.
ParsedReply parsePlanReply(
    std::string_view reply, std::string_view finishReason, std::size_t maxReplyBytes = 256u << 10);

Hypothesis parseHypothesis(std::string_view reply);

} // namespace kl

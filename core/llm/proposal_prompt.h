#pragma once
// From what the loop knows (a ProposalContext) to what a prompt may say (a PromptPayload): the
// one place that decides how iterations, findings and failures are put into words for a model.
#include "core/llm/prompt_payload.h"
#include "core/propose/proposer.h"

#include <cstddef>
#include <optional>

namespace kl {

struct PayloadLimits {
    std::size_t recentIterations = 8; // the last iterations shown, failures included
    std::size_t findings = 6; // of the best candidate, most important first
    std::size_t examples = 2;
    std::size_t reportBytes = 2000; // a verification report or compiler log is cut beyond this
};

// An iteration's outcome in the model's words: "faster (kept)", "not faster", "compile-error",
// "verify-failed: wrong-result", "rejected by the engineer", "proposer-error: no-code", "baseline".
std::string outcomeWords(const EvaluatedProposal& iteration);

// Whether the iteration failed in a way a debugger can fix from the report: it did not compile,
// or the runner found it wrong (not: slower, rejected, or a proposer/endpoint failure).
bool isFixableFailure(const EvaluatedProposal& iteration);

PromptPayload payloadFor(const ProposalContext& context, const PayloadLimits& limits = {});

} // namespace kl

#pragma once
// The LLM as a Proposer. Each round it asks a planner for a hypothesis and a plan, then a coder
// for k candidates that carry it out; after a candidate of its own failed to compile or verify it
// asks a debugger for a fix instead. Small models can use one role for both (Single). Every
// exchange travels with the proposal to the store; every reply that is not exactly one usable
// candidate becomes a proposal with a categorised failure, and the loop goes on.
#include "core/llm/chat_client.h"
#include "core/llm/prompt_library.h"
#include "core/llm/proposal_prompt.h"
#include "core/llm/reply_parser.h"
#include "core/propose/proposer.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>

namespace kl {

struct LlmProposerConfig {
    enum class Roles { PlannerCoder, Single };
    Roles roles = Roles::PlannerCoder;
    std::optional<double> temperature;
    int maxTokens = 8192;
    int maxFixAttempts = 1; // debugger rounds for one failed candidate before planning afresh
    PayloadLimits limits;
    // Streamed text as it arrives: the role ("planner", "coder", "debugger", "single"), the
    // alternative's index and the new piece. Called on the loop's thread or, for k parallel
    // requests, on k threads at once.
    std::function<void(std::string_view role, int alternative, std::string_view text)> onText;
};
std::optional<LlmProposerConfig::Roles> parseRoles(std::string_view name); // "planner-coder", "single"

class LlmProposer : public Proposer {
public:
    LlmProposer(std::shared_ptr<ChatClient> client, PromptLibrary prompts, LlmProposerConfig config = {});

    std::string kind() const override { return "llm"; }
    bool writesKernels() const override { return true; }
    std::vector<Proposal> propose(const ProposalContext& context, int count, const std::atomic<bool>* cancel) override;

    // Tokens used so far, over every exchange.
    std::int64_t tokensUsed() const { return m_tokens; }

private:
    struct Attempt; // what one role's request produced
    Attempt ask(PromptRole role, const PromptPayload& payload, int count, const std::atomic<bool>* cancel);
    // `current`: the candidate the replies change (entry points, signatures); `plan`: the planner's.
    std::vector<Proposal> candidatesFrom(Attempt attempt, PromptRole role, const ProposalContext& context,
        const Candidate& current, std::optional<Hypothesis> plan, std::vector<RoleExchange> leading);
    const EvaluatedProposal* failureToFix(const ProposalContext& context) const;
    // An exchange that ended without a reply (network, HTTP, budget) as a proposal the loop records.
    Proposal endpointFailure(const Exchange& exchange, PromptRole role, const std::string& plan);

    std::shared_ptr<ChatClient> m_client;
    PromptLibrary m_prompts;
    LlmProposerConfig m_config;
    std::map<std::string, Candidate> m_proposed; // source hash → the candidate, for the debugger
    std::map<std::string, int> m_fixDepth; // source hash → debugger rounds that led to it
    std::set<std::string> m_fixed; // failed source hashes already sent to the debugger
    std::size_t m_lastCount = 0; // proposals returned last round: the tail of the next context's history
    std::int64_t m_tokens = 0;
    bool m_exhausted = false; // the token budget is spent: nothing more to propose
    // After a 429 or 5xx the next request waits: Retry-After (capped) or a backoff that doubles
    // with each consecutive such failure, so that a struggling endpoint is not hammered round
    // after round (the client's own retries within one request come on top).
    int m_serverFailures = 0;
    std::chrono::milliseconds m_waitBeforeNext { 0 };
    std::mt19937_64 m_random { 0x6b6c };
};

} // namespace kl

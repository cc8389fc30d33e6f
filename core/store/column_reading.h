#pragma once
// What readers outside the store read of the JSON columns that the records still carry (a session's
// summary, an LLM exchange's request and usage), decoded here so that no panel picks keys (issue 26).
#include "core/store/records.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kl::store {

// The best % of a same-size copy the session's stored summary names ("best_pct_of_copy"), if any.
std::optional<double> summaryBestPctOfCopy(const SessionRecord& session);
// Likewise its best speedup and median ("best_speedup", "best_us"): those of summaryBestIteration.
std::optional<double> summaryBestSpeedup(const SessionRecord& session);
std::optional<double> summaryBestMedianUs(const SessionRecord& session);

// One message of the prompt an exchange sent, in the order sent; the system prompt first with role "system".
struct PromptMessage {
    std::string role; // "system", "user", "assistant"; "?" where the request named none
    std::string content;
    friend bool operator==(const PromptMessage&, const PromptMessage&) = default;
};
std::vector<PromptMessage> promptMessages(const ExchangeRecord& exchange);

// The tokens an exchange used, where the provider reported them.
struct TokenUsage {
    std::int64_t promptTokens = 0;
    std::int64_t completionTokens = 0;
    friend bool operator==(const TokenUsage&, const TokenUsage&) = default;
};
std::optional<TokenUsage> reportedUsage(const ExchangeRecord& exchange);

} // namespace kl::store

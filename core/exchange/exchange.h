#pragma once
// One conversation turn with a model as a plain value: what was asked (without the key), what came
// back, what it cost, how long it took, and how it ended. The chat clients (core/llm) make it from
// the wire, the proposers hand it to the loop with the role it served (core/propose), and the store
// keeps it (core/store); none of them sees it as JSON.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kl {

// How an exchange ended. Every failure has its own category so that the loop, the CLI and the
// engineer can react to it (retry, fix the key, pick another model) without reading messages.
enum class ExchangeCategory {
    Ok,
    Dns, // the host name does not resolve
    ConnectionRefused, // nothing listens at the address
    ConnectionReset, // the connection dropped before a response arrived
    Tls, // handshake or certificate verification failed
    Timeout, // connect or total timeout
    Stall, // streaming, and no bytes arrived for the stall timeout
    Http401, // authentication: the key is missing or wrong
    Http403, // the key may not use this model or endpoint
    Http404, // no such model, or a wrong base URL
    Http429, // rate-limited (retried, honouring Retry-After)
    Http4xx, // any other client error (400, 413, 422, ...): the request itself is wrong
    Http5xx, // server error or overload (retried)
    BadJson, // a 2xx reply that is not the protocol's JSON
    Truncated, // the stream or body ended before the reply was finished
    Oversized, // the response is larger than the client accepts
    BadUrl, // the base URL cannot be used (malformed, unsupported scheme)
    Cancelled,
    BudgetExhausted, // the token budget is spent: nothing was sent
    EmptyReply, // a complete 2xx reply without any text (content null or empty in every choice)
};

std::string_view exchangeCategoryName(ExchangeCategory category); // "ok", "dns", "http-401", ...
std::optional<ExchangeCategory> parseExchangeCategory(std::string_view name);

// `text` with every byte sequence that is not UTF-8 replaced by U+FFFD: servers send such bytes,
// and JSON (stored exchanges, --json) holds only UTF-8.
std::string validUtf8(std::string_view text);

// Which prompt an exchange answered: the LLM proposer's roles.
enum class PromptRole {
    Planner, // hypothesis and plan: what should move, and by how much
    Coder, // one candidate that carries out the plan
    Debugger, // a fix for a candidate that failed to compile or verify
    Single, // plan and candidate in one reply, for small models
    FirstKernel, // the first kernel of a problem that has none, from its specification
};
// "planner", "coder", "debugger", "single", "first_kernel"
std::string_view promptRoleName(PromptRole role);
std::optional<PromptRole> parsePromptRole(std::string_view name);

struct Usage {
    std::int64_t promptTokens = 0;
    std::int64_t completionTokens = 0;
    bool reported = false; // false when the server said nothing about usage
    std::int64_t total() const { return promptTokens + completionTokens; }
};

// One alternative the model produced (several when the request asked for n > 1).
struct ChatChoice {
    std::string text;
    // Normalised across protocols: "stop", "length", "refusal", "content_filter", "tool_calls",
    // or the server's own word; empty when the reply ended without one.
    std::string finishReason;
};

// One message of the prompt, in the order sent; the system prompt first with role "system".
struct PromptMessage {
    std::string role; // "system", "user", "assistant"; "?" where a stored request named none
    std::string content;
    friend bool operator==(const PromptMessage&, const PromptMessage&) = default;
};

struct Exchange {
    std::string provider; // "openai" | "anthropic"
    std::string url;
    std::string model; // as requested
    std::string servedModel; // as the server named it in its reply
    // The body as sent, byte for byte (keys travel in headers and never appear here): the wire's text,
    // which the store keeps as it is. Nobody reads it: `prompt` says what it asked.
    std::string requestBody;
    std::vector<PromptMessage> prompt; // the messages of requestBody
    std::vector<std::string> requestHeaders; // "name: value", secrets replaced by [redacted]
    bool streamed = false;
    std::string response; // raw body or SSE transcript of the last attempt, redacted, capped
    std::vector<ChatChoice> choices;
    Usage usage; // summed over attempts
    ExchangeCategory category = ExchangeCategory::Ok;
    std::string message; // for a failure: one readable sentence, redacted
    int httpStatus = 0; // of the last attempt; 0 if no response
    int attempts = 0; // requests sent (0 when refused by the budget)
    double latencyMs = 0.0; // first request to last byte, retries and waits included
    double firstTokenMs = -1.0; // streaming: until the first text arrived in the last attempt
    double retryWaitMs = 0.0; // time spent waiting between attempts
    std::optional<std::int64_t> retryAfterMs; // what the last attempt's Retry-After asked for (not capped)
    std::string startedAt; // UTC, ISO 8601

    bool ok() const { return category == ExchangeCategory::Ok; }
    const std::string& text() const; // the first choice's text (empty if none)
};

// An exchange and the prompt it answered: what an LLM proposer hands the loop with its proposals.
struct RoleExchange {
    PromptRole role = PromptRole::Single;
    Exchange exchange;
};

} // namespace kl

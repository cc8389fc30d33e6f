#pragma once
// One conversation turn with a model, as the store keeps it: what was asked (without the key),
// what came back, what it cost, how long it took, and how it ended.
#include <nlohmann/json.hpp>

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

struct Exchange {
    std::string provider; // "openai" | "anthropic"
    std::string url;
    std::string model; // as requested
    std::string servedModel; // as the server named it in its reply
    nlohmann::json request; // the body as sent; keys travel in headers and never appear here
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

    nlohmann::json toJson() const;
    static Exchange fromJson(const nlohmann::json& json); // throws kl::Error "llm.bad-exchange"
};

} // namespace kl

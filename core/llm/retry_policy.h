#pragma once
// When to try a request again, and how long to wait first: exponential backoff with jitter, or
// what the server asked for in Retry-After (429 and 503).
#include "core/llm/exchange.h"

#include <chrono>
#include <ctime>
#include <optional>
#include <random>
#include <string_view>

namespace kl {

struct RetryPolicy {
    int maxAttempts = 4; // requests in all, the first included
    std::chrono::milliseconds initialDelay { 1000 };
    std::chrono::milliseconds maxDelay { 30000 };
    std::chrono::milliseconds maxRetryAfter { 120000 }; // a longer Retry-After is cut to this

    // Transient failures only: rate limits, server errors, dropped or timed-out connections.
    // A 400/401/403/404/422 cannot succeed by asking again, nor can DNS, TLS or a bad reply.
    static bool isRetryable(ExchangeCategory category);

    // The wait before attempt `nextAttempt` (2 for the first retry): min(maxDelay,
    // initialDelay * 2^(nextAttempt-2)) scaled by a random factor in [0.5, 1] ("equal jitter"),
    // so that clients that failed together do not retry together.
    std::chrono::milliseconds backoff(int nextAttempt, std::mt19937_64& random) const;
};

// A Retry-After value: delay-seconds ("3") or an HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT"),
// relative to `now`. A date in the past gives zero; nullopt when the value is neither.
std::optional<std::chrono::milliseconds> parseRetryAfter(std::string_view value, std::time_t now);

} // namespace kl

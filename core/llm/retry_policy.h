#pragma once
// When to try a request again, and how long to wait first: exponential backoff with jitter, or
// what the server asked for in Retry-After (429 and 503).
#include "core/exchange/exchange.h"

#include <atomic>
#include <chrono>
#include <ctime>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace kl {

struct RetryPolicy {
    int maxAttempts = 4; // requests in all, the first included
    std::chrono::milliseconds initialDelay { 1000 };
    std::chrono::milliseconds maxDelay { 30000 };
    // A longer Retry-After is cut to this: a server asking for 99999 s, or a date years ahead,
    // must not hold a session (or llm-check) for a day.
    std::chrono::milliseconds maxRetryAfter { 60000 };

    // Transient failures only: rate limits, server errors, dropped or timed-out connections.
    // A 400/401/403/404/422 cannot succeed by asking again, nor can DNS, TLS or a bad reply.
    static bool isRetryable(ExchangeCategory category);

    // The wait before attempt `nextAttempt` (2 for the first retry): min(maxDelay,
    // initialDelay * 2^(nextAttempt-2)) scaled by a random factor in [0.5, 1] ("equal jitter"),
    // so that clients that failed together do not retry together.
    std::chrono::milliseconds backoff(int nextAttempt, std::mt19937_64& random) const;

    // The wait before attempt `nextAttempt`: what the server asked for (cut to maxRetryAfter), or
    // the backoff. `capped` says whether the server's wish was cut.
    struct Wait {
        std::chrono::milliseconds delay { 0 };
        bool fromRetryAfter = false;
        bool capped = false;
    };
    Wait waitBefore(
        int nextAttempt, std::optional<std::chrono::milliseconds> retryAfter, std::mt19937_64& random) const;
};

// Waits `delay`, waking early when *cancel is set (polled every 20 ms); false if it was. The client
// between attempts and the proposer after a server failure wait alike.
bool waitUnlessCancelled(std::chrono::milliseconds delay, const std::atomic<bool>* cancel);

// "Retry-After 99999 s, capped at 60 s" or "Retry-After 3 s": for messages and logs.
std::string retryAfterText(std::chrono::milliseconds asked, std::chrono::milliseconds cap);

// A Retry-After value: delay-seconds ("3") or an HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT"),
// relative to `now`. A date in the past gives zero; nullopt when the value is neither (or not
// finite). Values beyond 1e9 s are read as 1e9 s; the retry policy caps the wait itself.
std::optional<std::chrono::milliseconds> parseRetryAfter(std::string_view value, std::time_t now);

} // namespace kl

#include "core/llm/retry_policy.h"

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>

namespace kl {

bool RetryPolicy::isRetryable(ExchangeCategory category)
{
    switch (category) {
    case ExchangeCategory::ConnectionRefused:
    case ExchangeCategory::ConnectionReset:
    case ExchangeCategory::Timeout:
    case ExchangeCategory::Stall:
    case ExchangeCategory::Http429:
    case ExchangeCategory::Http5xx:
    case ExchangeCategory::Truncated:
        return true;
    default:
        return false;
    }
}

std::chrono::milliseconds RetryPolicy::backoff(int nextAttempt, std::mt19937_64& random) const
{
    const int doublings = std::clamp(nextAttempt - 2, 0, 30);
    const double full = std::min(static_cast<double>(maxDelay.count()),
        static_cast<double>(initialDelay.count()) * static_cast<double>(1LL << doublings));
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    return std::chrono::milliseconds(static_cast<long long>(full * jitter(random)));
}

RetryPolicy::Wait RetryPolicy::waitBefore(
    int nextAttempt, std::optional<std::chrono::milliseconds> retryAfter, std::mt19937_64& random) const
{
    Wait wait;
    if (retryAfter) {
        wait.fromRetryAfter = true;
        wait.capped = *retryAfter > maxRetryAfter;
        wait.delay = std::min(*retryAfter, maxRetryAfter);
    } else {
        wait.delay = backoff(nextAttempt, random);
    }
    return wait;
}

bool waitUnlessCancelled(std::chrono::milliseconds delay, const std::atomic<bool>* cancel)
{
    using Clock = std::chrono::steady_clock;
    const auto until = Clock::now() + delay;
    while (Clock::now() < until) {
        if (cancel && cancel->load())
            return false;
        std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(20), until - Clock::now()));
    }
    return !(cancel && cancel->load());
}

std::string retryAfterText(std::chrono::milliseconds asked, std::chrono::milliseconds cap)
{
    const auto seconds = [](std::chrono::milliseconds ms) {
        char text[32];
        std::snprintf(text, sizeof text, "%g s", static_cast<double>(ms.count()) / 1000.0);
        return std::string(text);
    };
    std::string text = "Retry-After " + seconds(asked);
    if (asked > cap)
        text += ", capped at " + seconds(cap);
    return text;
}

std::optional<std::chrono::milliseconds> parseRetryAfter(std::string_view value, std::time_t now)
{
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
        value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t' || value.back() == '\r'))
        value.remove_suffix(1);
    if (value.empty())
        return std::nullopt;
    // Some servers send fractional seconds ("1.5"); accept them.
    double seconds = 0.0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    constexpr double kLongest = 1e9; // seconds (about 31 years): far enough, and no overflow in ms
    if (error == std::errc() && end == value.data() + value.size()) {
        if (!std::isfinite(seconds) || seconds < 0)
            return std::nullopt;
        return std::chrono::milliseconds(static_cast<long long>(std::min(seconds, kLongest) * 1000.0));
    }
    const std::string text(value);
    const std::time_t when = curl_getdate(text.c_str(), nullptr);
    if (when == -1)
        return std::nullopt;
    const long long ahead = std::clamp<long long>(
        static_cast<long long>(when) - static_cast<long long>(now), 0, static_cast<long long>(kLongest));
    return std::chrono::milliseconds(ahead * 1000);
}

} // namespace kl

#include "core/llm/retry_policy.h"

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <string>

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
    if (error == std::errc() && end == value.data() + value.size())
        return seconds < 0 ? std::nullopt
                           : std::optional(std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0)));
    const std::string text(value);
    const std::time_t when = curl_getdate(text.c_str(), nullptr);
    if (when == -1)
        return std::nullopt;
    return std::chrono::milliseconds(std::max<long long>(0, static_cast<long long>(when - now)) * 1000);
}

} // namespace kl

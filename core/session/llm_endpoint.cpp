#include "core/session/llm_endpoint.h"

#include "core/model/error.h"
#include "core/model/number_text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace kl::session {

namespace {

constexpr double kMaxTimeoutSeconds = 24 * 3600.0; // one request; a longer one is a typo
constexpr double kMaxConnectSeconds = 600.0;
constexpr int kMaxAttempts = 20;

// A number in [low, high] (low excluded when `lowExcluded`), or cli.bad-number naming the option.
double numberIn(const std::string& option, const std::string& text, double low, bool lowExcluded, double high,
    const std::string& unit)
{
    double value = 0.0;
    const auto* begin = text.data();
    const auto* end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(begin, end, value);
    const std::string range
        = (lowExcluded ? "more than " : "at least ") + shortNumber(low) + " and at most " + shortNumber(high) + unit;
    if (text.empty() || error != std::errc() || stop != end || !std::isfinite(value))
        throw Error("cli.bad-number", {}, option, option + " wants a number " + range + ", got \"" + text + "\"");
    if (value < low || (lowExcluded && value == low) || value > high)
        throw Error("cli.bad-number", {}, option, option + " must be " + range + ", got " + text);
    return value;
}

int wholeNumberIn(const std::string& option, const std::string& text, int low, int high)
{
    int value = 0;
    const auto [stop, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || stop != text.data() + text.size() || value < low || value > high)
        throw Error("cli.bad-number", {}, option,
            option + " wants a whole number from " + std::to_string(low) + " to " + std::to_string(high) + ", got \""
                + text + "\"");
    return value;
}

bool hasControlCharacter(const std::string& text)
{
    return std::any_of(text.begin(), text.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 || u == 0x7f;
    });
}

// Only http and https: libcurl would also fetch file://, ftp://, gopher:// and more.
void checkBaseUrl(const std::string& url)
{
    std::string scheme;
    const auto colon = url.find("://");
    if (colon != std::string::npos)
        scheme = url.substr(0, colon);
    std::transform(scheme.begin(), scheme.end(), scheme.begin(), [](unsigned char c) { return std::tolower(c); });
    if (scheme != "http" && scheme != "https")
        throw Error("cli.bad-url", {}, "--base-url",
            "the base URL must start with http:// or https://"
                + (scheme.empty() ? std::string() : " (not " + scheme + "://)"));
    if (hasControlCharacter(url) || url.find(' ') != std::string::npos)
        throw Error("cli.bad-url", {}, "--base-url", "the base URL contains a space or a control character");
    const auto host = url.substr(colon + 3);
    if (host.empty() || host.front() == '/')
        throw Error("cli.bad-url", {}, "--base-url", "the base URL has no host");
}

} // namespace

EndpointText endpointText(const LlmSettings& llm)
{
    EndpointText t;
    t.provider = llm.provider;
    t.baseUrl = llm.baseUrl;
    t.model = llm.model;
    t.anthropicVersion = llm.anthropicVersion;
    t.timeout = llm.timeout;
    t.connectTimeout = llm.connectTimeout;
    t.attempts = llm.attempts;
    return t;
}

EndpointConfig endpointConfig(const EndpointText& o, std::string apiKey)
{
    if (o.baseUrl.empty())
        throw Error("cli.missing-option", {}, "--base-url", "the LLM endpoint needs --base-url");
    if (o.model.empty())
        throw Error("cli.missing-option", {}, "--model", "the LLM endpoint needs --model");
    checkBaseUrl(o.baseUrl);
    if (hasControlCharacter(o.model))
        throw Error("cli.bad-option", {}, "--model", "the model name contains a control character");
    if (hasControlCharacter(o.anthropicVersion))
        throw Error("cli.bad-option", {}, "--anthropic-version",
            "--anthropic-version contains a control character (a line break would add request headers)");
    EndpointConfig config;
    const auto provider = parseProvider(o.provider);
    if (!provider)
        throw Error(
            "cli.bad-provider", {}, "--provider", "the provider is openai or anthropic, not \"" + o.provider + "\"");
    config.provider = *provider;
    config.baseUrl = o.baseUrl;
    config.model = o.model;
    config.anthropicVersion = o.anthropicVersion;
    for (const auto& header : o.headers) {
        if (hasControlCharacter(header))
            throw Error("cli.bad-header", {}, "--header",
                "a header contains a control character (a line break would add request headers of its own)");
        const auto colon = header.find(':');
        if (colon == std::string::npos || colon == 0)
            throw Error("cli.bad-header", {}, "--header", "expected \"Name: value\", got \"" + header + "\"");
        const auto name = header.substr(0, colon);
        if (std::any_of(name.begin(), name.end(), [](unsigned char c) { return std::isspace(c) || c > 0x7e; }))
            throw Error("cli.bad-header", {}, "--header", "the header name \"" + name + "\" contains a space");
        const auto value = header.find_first_not_of(' ', colon + 1);
        config.extraHeaders.emplace_back(name, value == std::string::npos ? std::string() : header.substr(value));
    }
    const double timeout = numberIn("--timeout", o.timeout, 0.0, true, kMaxTimeoutSeconds, " s");
    const double connect = numberIn("--connect-timeout", o.connectTimeout, 0.0, true, kMaxConnectSeconds, " s");
    const double retryAfterCap = numberIn("--max-retry-after", o.maxRetryAfter, 0.0, false, 600.0, " s");
    config.retry.maxAttempts = wholeNumberIn("--attempts", o.attempts, 1, kMaxAttempts);
    // Below a millisecond libcurl would read 0 as "no timeout".
    config.timeouts.total = std::chrono::milliseconds(std::max(1LL, std::llround(timeout * 1000.0)));
    config.timeouts.connect = std::chrono::milliseconds(std::max(1LL, std::llround(connect * 1000.0)));
    config.timeouts.stall = std::min(config.timeouts.total, std::chrono::milliseconds(30000));
    config.retry.maxRetryAfter = std::chrono::milliseconds(std::llround(retryAfterCap * 1000.0));
    config.apiKey = std::move(apiKey);
    return config;
}

} // namespace kl::session

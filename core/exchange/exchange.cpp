#include "core/exchange/exchange.h"

#include <array>
#include <utility>

namespace kl {

namespace {

constexpr std::array<std::pair<ExchangeCategory, std::string_view>, 20> kNames { {
    { ExchangeCategory::Ok, "ok" },
    { ExchangeCategory::Dns, "dns" },
    { ExchangeCategory::ConnectionRefused, "connection-refused" },
    { ExchangeCategory::ConnectionReset, "connection-reset" },
    { ExchangeCategory::Tls, "tls" },
    { ExchangeCategory::Timeout, "timeout" },
    { ExchangeCategory::Stall, "stall" },
    { ExchangeCategory::Http401, "http-401" },
    { ExchangeCategory::Http403, "http-403" },
    { ExchangeCategory::Http404, "http-404" },
    { ExchangeCategory::Http429, "http-429" },
    { ExchangeCategory::Http4xx, "http-4xx" },
    { ExchangeCategory::Http5xx, "http-5xx" },
    { ExchangeCategory::BadJson, "bad-json" },
    { ExchangeCategory::Truncated, "truncated" },
    { ExchangeCategory::Oversized, "oversized" },
    { ExchangeCategory::BadUrl, "bad-url" },
    { ExchangeCategory::Cancelled, "cancelled" },
    { ExchangeCategory::BudgetExhausted, "budget-exhausted" },
    { ExchangeCategory::EmptyReply, "empty-reply" },
} };

} // namespace

std::string_view exchangeCategoryName(ExchangeCategory category)
{
    for (const auto& [value, name] : kNames)
        if (value == category)
            return name;
    return "unknown";
}

std::optional<ExchangeCategory> parseExchangeCategory(std::string_view name)
{
    for (const auto& [value, text] : kNames)
        if (text == name)
            return value;
    return std::nullopt;
}

namespace {

constexpr std::array<std::pair<PromptRole, std::string_view>, 5> kRoleNames { {
    { PromptRole::Planner, "planner" },
    { PromptRole::Coder, "coder" },
    { PromptRole::Debugger, "debugger" },
    { PromptRole::Single, "single" },
    { PromptRole::FirstKernel, "first_kernel" },
} };

} // namespace

std::string_view promptRoleName(PromptRole role)
{
    for (const auto& [value, name] : kRoleNames)
        if (value == role)
            return name;
    return "single";
}

std::optional<PromptRole> parsePromptRole(std::string_view name)
{
    for (const auto& [value, text] : kRoleNames)
        if (text == name)
            return value;
    return std::nullopt;
}

std::string validUtf8(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char c = byte(i);
        std::size_t length = 0;
        unsigned low = 0x80, high = 0xbf; // the allowed range of the second byte
        if (c < 0x80)
            length = 1;
        else if (c >= 0xc2 && c <= 0xdf)
            length = 2;
        else if (c >= 0xe0 && c <= 0xef) {
            length = 3;
            if (c == 0xe0)
                low = 0xa0; // no overlong forms
            if (c == 0xed)
                high = 0x9f; // no surrogates
        } else if (c >= 0xf0 && c <= 0xf4) {
            length = 4;
            if (c == 0xf0)
                low = 0x90;
            if (c == 0xf4)
                high = 0x8f; // nothing past U+10FFFF
        }
        bool ok = length > 0 && i + length <= text.size();
        for (std::size_t k = 1; ok && k < length; ++k) {
            const unsigned b = byte(i + k);
            ok = k == 1 ? (b >= low && b <= high) : (b >= 0x80 && b <= 0xbf);
        }
        if (ok) {
            out.append(text.substr(i, length));
            i += length;
        } else {
            out += "\xEF\xBF\xBD";
            ++i;
        }
    }
    return out;
}

const std::string& Exchange::text() const
{
    static const std::string empty;
    return choices.empty() ? empty : choices.front().text;
}

} // namespace kl

#include "core/llm/exchange.h"

#include "core/model/error.h"

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

nlohmann::json Exchange::toJson() const
{
    nlohmann::json choicesJson = nlohmann::json::array();
    for (const auto& c : choices)
        choicesJson.push_back({ { "text", c.text }, { "finish_reason", c.finishReason } });
    return {
        { "provider", provider },
        { "url", url },
        { "model", model },
        { "served_model", servedModel },
        { "request", request },
        { "request_headers", requestHeaders },
        { "streamed", streamed },
        { "response", response },
        { "choices", choicesJson },
        { "usage",
            { { "prompt_tokens", usage.promptTokens }, { "completion_tokens", usage.completionTokens },
                { "reported", usage.reported } } },
        { "category", exchangeCategoryName(category) },
        { "message", message },
        { "http_status", httpStatus },
        { "attempts", attempts },
        { "latency_ms", latencyMs },
        { "first_token_ms", firstTokenMs },
        { "retry_wait_ms", retryWaitMs },
        { "started_at", startedAt },
    };
}

Exchange Exchange::fromJson(const nlohmann::json& json)
{
    try {
        Exchange e;
        e.provider = json.at("provider").get<std::string>();
        e.url = json.at("url").get<std::string>();
        e.model = json.at("model").get<std::string>();
        e.servedModel = json.value("served_model", "");
        e.request = json.value("request", nlohmann::json::object());
        e.requestHeaders = json.value("request_headers", std::vector<std::string> {});
        e.streamed = json.value("streamed", false);
        e.response = json.value("response", "");
        for (const auto& c : json.value("choices", nlohmann::json::array()))
            e.choices.push_back({ c.at("text").get<std::string>(), c.value("finish_reason", "") });
        const auto& usage = json.at("usage");
        e.usage.promptTokens = usage.value("prompt_tokens", std::int64_t { 0 });
        e.usage.completionTokens = usage.value("completion_tokens", std::int64_t { 0 });
        e.usage.reported = usage.value("reported", false);
        const auto categoryName = json.at("category").get<std::string>();
        const auto category = parseExchangeCategory(categoryName);
        if (!category)
            throw Error("llm.bad-exchange", {}, "category", "unknown exchange category \"" + categoryName + "\"");
        e.category = *category;
        e.message = json.value("message", "");
        e.httpStatus = json.value("http_status", 0);
        e.attempts = json.value("attempts", 0);
        e.latencyMs = json.value("latency_ms", 0.0);
        e.firstTokenMs = json.value("first_token_ms", -1.0);
        e.retryWaitMs = json.value("retry_wait_ms", 0.0);
        e.startedAt = json.value("started_at", "");
        return e;
    } catch (const nlohmann::json::exception& ex) {
        throw Error("llm.bad-exchange", {}, {}, std::string("stored exchange is malformed: ") + ex.what());
    }
}

} // namespace kl

#include "core/store/exchange_columns.h"

#include "core/store/store_impl.h"

#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kl::store {

namespace {

// A field of a stored object, where it has the expected type; `absent` otherwise.
template <typename T> T field(const nlohmann::json& object, const char* key, T absent)
{
    if (!object.is_object())
        return absent;
    const auto it = object.find(key);
    if (it == object.end())
        return absent;
    if constexpr (std::is_same_v<T, std::string>)
        return it->is_string() ? it->template get<std::string>() : absent;
    else if constexpr (std::is_same_v<T, bool>)
        return it->is_boolean() ? it->template get<bool>() : absent;
    else
        return it->is_number() ? it->template get<T>() : absent;
}

// The prompt of a stored request: the system prompt (Anthropic's "system", or OpenAI's first message)
// and the messages in the order sent.
std::vector<PromptMessage> promptOf(const nlohmann::json& request)
{
    std::vector<PromptMessage> messages;
    if (!request.is_object())
        return messages;
    if (const auto system = request.find("system"); system != request.end() && system->is_string())
        messages.push_back({ "system", system->get<std::string>() });
    if (const auto list = request.find("messages"); list != request.end() && list->is_array())
        for (const nlohmann::json& m : *list)
            if (m.is_object() && m.contains("content") && m["content"].is_string())
                messages.push_back({ field<std::string>(m, "role", "?"), m["content"].get<std::string>() });
    return messages;
}

// The choices that replyText joined: split at its "--- choice N ---" lines where there are at least
// two, else the whole text is one choice. Joined again they give the same text in every case.
std::vector<ChatChoice> choicesOf(const std::string& text, std::string firstFinishReason)
{
    const std::string first = "--- choice 1 ---\n";
    std::vector<std::string> pieces;
    if (text.rfind(first, 0) == 0) {
        std::size_t from = first.size();
        for (int k = 2;; ++k) {
            const auto separator = "\n\n--- choice " + std::to_string(k) + " ---\n";
            const auto at = text.find(separator, from);
            if (at == std::string::npos) {
                pieces.push_back(text.substr(from));
                break;
            }
            pieces.push_back(text.substr(from, at - from));
            from = at + separator.size();
        }
    }
    if (pieces.size() < 2)
        pieces = { text };
    std::vector<ChatChoice> choices;
    for (auto& piece : pieces)
        choices.push_back({ std::move(piece), {} });
    choices.front().finishReason = std::move(firstFinishReason);
    return choices;
}

} // namespace

std::string requestColumn(const Exchange& exchange)
{
    if (exchange.requestBody.empty())
        return "null";
    const auto body = nlohmann::json::parse(exchange.requestBody, nullptr, false);
    if (body.is_discarded()) // not what a client sends; kept as a string rather than lost
        return jsonText(nlohmann::json(exchange.requestBody));
    return jsonText(scrubSecrets(body));
}

nlohmann::json usageColumn(const Exchange& e)
{
    nlohmann::json usage = { { "prompt_tokens", e.usage.promptTokens },
        { "completion_tokens", e.usage.completionTokens }, { "reported", e.usage.reported },
        { "served_model", e.servedModel }, { "url", e.url }, { "streamed", e.streamed }, { "attempts", e.attempts },
        { "http_status", e.httpStatus }, { "first_token_ms", e.firstTokenMs }, { "retry_wait_ms", e.retryWaitMs },
        { "message", e.message }, { "started_at", e.startedAt } };
    if (!e.choices.empty())
        usage["finish_reason"] = e.choices.front().finishReason;
    return usage;
}

ExchangeRecord exchangeFromColumns(const ExchangeColumns& c)
{
    ExchangeRecord record;
    record.role = c.role;
    record.startedMs = c.startedMs;
    Exchange& e = record.exchange;
    e.provider = c.provider;
    e.model = c.model;
    if (c.request != "null") {
        e.requestBody = c.request;
        e.prompt = promptOf(nlohmann::json::parse(c.request, nullptr, false));
    }
    const nlohmann::json& u = c.usage;
    e.usage.promptTokens = field<std::int64_t>(u, "prompt_tokens", 0);
    e.usage.completionTokens = field<std::int64_t>(u, "completion_tokens", 0);
    e.usage.reported = field(u, "reported", false);
    e.servedModel = field<std::string>(u, "served_model", {});
    e.url = field<std::string>(u, "url", {});
    e.streamed = field(u, "streamed", false);
    e.attempts = field(u, "attempts", 0);
    e.httpStatus = field(u, "http_status", 0);
    e.firstTokenMs = field(u, "first_token_ms", -1.0);
    e.retryWaitMs = field(u, "retry_wait_ms", 0.0);
    e.message = field<std::string>(u, "message", {});
    e.startedAt = field<std::string>(u, "started_at", {});
    if (u.is_object() && u.contains("finish_reason"))
        e.choices = choicesOf(c.response, field<std::string>(u, "finish_reason", {}));
    else
        e.response = c.response;
    e.latencyMs = c.latencyMs.value_or(0.0);
    if (const auto category = parseExchangeCategory(c.category)) {
        e.category = *category;
    } else {
        e.category = ExchangeCategory::BadJson;
        record.unreadable.emplace_back("store.unreadable-part", std::string(), "llm_exchanges.category",
            "\"" + c.category + "\" is not an exchange category this build knows");
    }
    return record;
}

} // namespace kl::store

#include "core/store/exchange_columns.h"

#include "core/store/store_impl.h"
#include "core/store/stored_field.h"

#include <string_view>
#include <utility>
#include <vector>

namespace kl::store {

namespace {

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
                messages.push_back(
                    { storedField<std::string>(m, "role").value_or("?"), m["content"].get<std::string>() });
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
    e.usage.promptTokens = storedField<std::int64_t>(u, "prompt_tokens").value_or(0);
    e.usage.completionTokens = storedField<std::int64_t>(u, "completion_tokens").value_or(0);
    e.usage.reported = storedField<bool>(u, "reported").value_or(false);
    e.servedModel = storedField<std::string>(u, "served_model").value_or("");
    e.url = storedField<std::string>(u, "url").value_or("");
    e.streamed = storedField<bool>(u, "streamed").value_or(false);
    e.attempts = storedField<int>(u, "attempts").value_or(0);
    e.httpStatus = storedField<int>(u, "http_status").value_or(0);
    e.firstTokenMs = storedField<double>(u, "first_token_ms").value_or(-1.0);
    e.retryWaitMs = storedField<double>(u, "retry_wait_ms").value_or(0.0);
    e.message = storedField<std::string>(u, "message").value_or("");
    e.startedAt = storedField<std::string>(u, "started_at").value_or("");
    if (u.is_object() && u.contains("finish_reason"))
        e.choices = choicesOf(c.response, storedField<std::string>(u, "finish_reason").value_or(""));
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

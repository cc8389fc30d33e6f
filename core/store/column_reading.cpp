// Decoders of the summary and exchange columns for readers outside the store (column_reading.h).
#include "core/store/column_reading.h"

namespace kl::store {

namespace {

std::optional<double> summaryNumber(const SessionRecord& session, const char* key)
{
    const nlohmann::json& summary = session.summary;
    if (const auto it = summary.is_object() ? summary.find(key) : summary.end();
        summary.is_object() && it != summary.end() && it->is_number())
        return it->get<double>();
    return std::nullopt;
}

} // namespace

std::optional<double> summaryBestPctOfCopy(const SessionRecord& session)
{
    return summaryNumber(session, "best_pct_of_copy");
}

std::optional<double> summaryBestSpeedup(const SessionRecord& session)
{
    return summaryNumber(session, "best_speedup");
}

std::optional<double> summaryBestMedianUs(const SessionRecord& session) { return summaryNumber(session, "best_us"); }

std::vector<PromptMessage> promptMessages(const ExchangeRecord& exchange)
{
    std::vector<PromptMessage> messages;
    const nlohmann::json& request = exchange.request;
    if (!request.is_object())
        return messages;
    if (const auto system = request.find("system"); system != request.end() && system->is_string())
        messages.push_back({ "system", system->get<std::string>() });
    if (const auto list = request.find("messages"); list != request.end() && list->is_array())
        for (const nlohmann::json& m : *list)
            if (m.is_object() && m.contains("content") && m["content"].is_string())
                messages.push_back({ m.value("role", std::string("?")), m["content"].get<std::string>() });
    return messages;
}

std::optional<TokenUsage> reportedUsage(const ExchangeRecord& exchange)
{
    const nlohmann::json& usage = exchange.usage;
    if (!usage.is_object() || !usage.value("reported", false))
        return std::nullopt;
    return TokenUsage { usage.value("prompt_tokens", std::int64_t { 0 }),
        usage.value("completion_tokens", std::int64_t { 0 }) };
}

} // namespace kl::store

#include "core/store/summary_columns.h"

#include <string>
#include <type_traits>

namespace kl::store {

namespace {

template <typename T> void put(nlohmann::json& j, const char* key, const std::optional<T>& value)
{
    if (value)
        j[key] = *value;
}

template <typename T> std::optional<T> get(const nlohmann::json& j, const char* key)
{
    const auto it = j.find(key);
    if (it == j.end())
        return std::nullopt;
    if constexpr (std::is_same_v<T, std::string>)
        return it->is_string() ? std::optional<T>(it->template get<T>()) : std::nullopt;
    else if constexpr (std::is_same_v<T, bool>)
        return it->is_boolean() ? std::optional<T>(it->template get<T>()) : std::nullopt;
    else
        return it->is_number() ? std::optional<T>(it->template get<T>()) : std::nullopt;
}

} // namespace

nlohmann::json summaryColumn(const std::optional<SessionSummary>& summary)
{
    if (!summary)
        return nullptr;
    const SessionSummary& s = *summary;
    nlohmann::json j = nlohmann::json::object();
    put(j, "stop_reason", s.stopReason);
    put(j, "rounds", s.rounds);
    put(j, "evaluated", s.evaluated);
    put(j, "passed", s.passed);
    put(j, "wall_seconds", s.wallSeconds);
    put(j, "candidates_per_minute", s.candidatesPerMinute);
    put(j, "candidates_per_round", s.candidatesPerRound);
    put(j, "tokens", s.tokens);
    put(j, "cancelled", s.cancelled);
    if (s.compiledAhead)
        j["compile_ahead"] = { { "compiled", s.compiledAhead->compiled }, { "used", s.compiledAhead->used } };
    put(j, "pass_at_k", s.passAtK);
    put(j, "speedup_at_k", s.speedupAtK);
    put(j, "baseline_us", s.baselineUs);
    put(j, "best_iteration", s.bestIteration);
    put(j, "best_us", s.bestUs);
    put(j, "best_speedup", s.bestSpeedup);
    put(j, "best_pct_of_copy", s.bestPctOfCopy);
    return j;
}

std::optional<SessionSummary> summaryFromColumn(const nlohmann::json& j)
{
    if (!j.is_object())
        return std::nullopt;
    SessionSummary s;
    s.stopReason = get<std::string>(j, "stop_reason");
    s.rounds = get<int>(j, "rounds");
    s.evaluated = get<int>(j, "evaluated");
    s.passed = get<int>(j, "passed");
    s.wallSeconds = get<double>(j, "wall_seconds");
    s.candidatesPerMinute = get<double>(j, "candidates_per_minute");
    s.candidatesPerRound = get<int>(j, "candidates_per_round");
    s.tokens = get<std::int64_t>(j, "tokens");
    s.cancelled = get<bool>(j, "cancelled");
    if (const auto ahead = j.find("compile_ahead"); ahead != j.end() && ahead->is_object())
        s.compiledAhead = SessionSummary::CompiledAhead { get<int>(*ahead, "compiled").value_or(0),
            get<int>(*ahead, "used").value_or(0) };
    s.passAtK = get<double>(j, "pass_at_k");
    s.speedupAtK = get<double>(j, "speedup_at_k");
    s.baselineUs = get<double>(j, "baseline_us");
    s.bestIteration = get<int>(j, "best_iteration");
    s.bestUs = get<double>(j, "best_us");
    s.bestSpeedup = get<double>(j, "best_speedup");
    s.bestPctOfCopy = get<double>(j, "best_pct_of_copy");
    return s;
}

} // namespace kl::store

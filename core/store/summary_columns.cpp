#include "core/store/summary_columns.h"

#include "core/store/stored_field.h"

#include <string>

namespace kl::store {

namespace {

template <typename T> void put(nlohmann::json& j, const char* key, const std::optional<T>& value)
{
    if (value)
        j[key] = *value;
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
    s.stopReason = storedField<std::string>(j, "stop_reason");
    s.rounds = storedField<int>(j, "rounds");
    s.evaluated = storedField<int>(j, "evaluated");
    s.passed = storedField<int>(j, "passed");
    s.wallSeconds = storedField<double>(j, "wall_seconds");
    s.candidatesPerMinute = storedField<double>(j, "candidates_per_minute");
    s.candidatesPerRound = storedField<int>(j, "candidates_per_round");
    s.tokens = storedField<std::int64_t>(j, "tokens");
    s.cancelled = storedField<bool>(j, "cancelled");
    if (const auto ahead = j.find("compile_ahead"); ahead != j.end() && ahead->is_object())
        s.compiledAhead = SessionSummary::CompiledAhead { storedField<int>(*ahead, "compiled").value_or(0),
            storedField<int>(*ahead, "used").value_or(0) };
    s.passAtK = storedField<double>(j, "pass_at_k");
    s.speedupAtK = storedField<double>(j, "speedup_at_k");
    s.baselineUs = storedField<double>(j, "baseline_us");
    s.bestIteration = storedField<int>(j, "best_iteration");
    s.bestUs = storedField<double>(j, "best_us");
    s.bestSpeedup = storedField<double>(j, "best_speedup");
    s.bestPctOfCopy = storedField<double>(j, "best_pct_of_copy");
    return s;
}

} // namespace kl::store

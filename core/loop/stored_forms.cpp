#include "core/loop/stored_forms.h"

#include "core/loop/loop_values.h"

#include <type_traits>

namespace kl {

store::CandidateRecord::Proposer storedProposer(const std::string& kind)
{
    if (kind == "llm")
        return store::CandidateRecord::Proposer::Llm;
    if (kind == "tuner")
        return store::CandidateRecord::Proposer::Tuner;
    return store::CandidateRecord::Proposer::Human; // human, baseline, inductor (written outside the loop)
}

std::vector<store::FindingRecord> findingRecords(const std::vector<Finding>& findings)
{
    std::vector<store::FindingRecord> out;
    for (const auto& f : findings) {
        store::FindingRecord r;
        r.ruleId = f.id;
        r.severity = std::string(severityName(f.severity));
        r.message = f.title;
        r.evidence = nlohmann::json(f.evidence);
        r.evidence["explanation"] = f.explanation;
        r.directions = f.directions;
        out.push_back(std::move(r));
    }
    return out;
}

// The stored form of an exchange: the model's text (every choice) as the response, and what the
// engineer needs to judge the exchange (tokens, attempts, status, timing, finish reason) beside
// the usage. The raw SSE transcript is not kept: the text, usage and timing say what it said.
store::ExchangeRecord exchangeRecord(const nlohmann::json& j)
{
    store::ExchangeRecord e;
    e.role = j.value("role", "propose");
    e.provider = j.value("provider", "");
    e.model = j.value("model", "");
    e.request = store::scrubSecrets(j.value("request", nlohmann::json()));
    const auto choices = j.value("choices", nlohmann::json::array());
    if (choices.is_array() && !choices.empty()) {
        for (std::size_t i = 0; i < choices.size(); ++i) {
            if (choices.size() > 1)
                e.response += (i ? "\n\n" : "") + std::string("--- choice ") + std::to_string(i + 1) + " ---\n";
            e.response += choices[i].value("text", "");
        }
    } else {
        e.response = j.value("response", ""); // a failed exchange: the body, for the record
    }
    e.usage = j.value("usage", nlohmann::json::object());
    if (!e.usage.is_object())
        e.usage = nlohmann::json::object();
    for (const char* key : { "served_model", "url", "streamed", "attempts", "http_status", "first_token_ms",
             "retry_wait_ms", "message", "started_at" })
        if (j.contains(key))
            e.usage[key] = j[key];
    if (choices.is_array() && !choices.empty())
        e.usage["finish_reason"] = choices[0].value("finish_reason", "");
    if (j.contains("latency_ms") && j["latency_ms"].is_number())
        e.latencyMs = j["latency_ms"].get<double>();
    e.category = j.value("category", "ok");
    return e;
}

std::int64_t exchangeTokens(const std::vector<nlohmann::json>& exchanges)
{
    std::int64_t tokens = 0;
    for (const auto& x : exchanges)
        if (x.contains("usage") && x["usage"].is_object())
            tokens += x["usage"].value("prompt_tokens", std::int64_t(0))
                + x["usage"].value("completion_tokens", std::int64_t(0));
    return tokens;
}

// What a candidate's record says about who proposed it: the session's detail ("tuner:auto",
// "llm:openai/gpt-4o") when that proposer ran the session, the matching half of a pair
// ("llm+tuner:openai/gpt-4o"), else the bare kind.
std::string proposerDetailFor(const std::string& proposer, const std::string& sessionDetail)
{
    if (proposer == "baseline" || proposer == "inductor")
        return proposer;
    const auto colon = sessionDetail.find(':');
    const auto kinds = sessionDetail.substr(0, colon);
    const auto rest = colon == std::string::npos ? std::string() : sessionDetail.substr(colon);
    if (kinds == proposer)
        return sessionDetail;
    if (proposer == "llm" && kinds.rfind("llm+", 0) == 0)
        return "llm" + rest;
    return proposer;
}

store::CandidateRecord candidateRecord(const Proposal& proposal, const std::string& sessionDetail)
{
    store::CandidateRecord c;
    c.source = proposal.candidate.source;
    c.fileName = proposal.candidate.fileName.empty() ? "candidate.cu" : proposal.candidate.fileName;
    c.proposer = storedProposer(proposal.proposer);
    c.proposerDetail = proposerDetailFor(proposal.proposer, sessionDetail);
    c.tunables = proposal.tunables;
    c.hypothesis = proposal.hypothesis;
    c.predictedSpeedup = proposal.predictedSpeedup;
    return c;
}

nlohmann::json toJson(const LoopSummary& s)
{
    nlohmann::json j = { { "stop_reason", s.stopReason }, { "rounds", s.rounds }, { "evaluated", s.evaluated },
        { "passed", s.passed }, { "wall_seconds", s.wallSeconds }, { "candidates_per_minute", s.candidatesPerMinute },
        { "candidates_per_round", s.candidatesPerRound }, { "tokens", s.tokens }, { "cancelled", s.cancelled },
        { "compile_ahead", { { "compiled", s.compiledAhead }, { "used", s.usedAhead } } } };
    if (s.passAtK)
        j["pass_at_k"] = *s.passAtK;
    if (s.speedupAtK)
        j["speedup_at_k"] = *s.speedupAtK;
    if (s.baseline && s.baseline->medianUs)
        j["baseline_us"] = *s.baseline->medianUs;
    if (s.best) {
        j["best_iteration"] = s.best->index;
        if (s.best->medianUs)
            j["best_us"] = *s.best->medianUs;
        if (s.best->speedup)
            j["best_speedup"] = *s.best->speedup;
        if (s.best->pctOfCopy)
            j["best_pct_of_copy"] = *s.best->pctOfCopy;
    }
    return j;
}

namespace {

template <typename T> T storedValue(const nlohmann::json& j, const char* key, T absent)
{
    const auto it = j.find(key);
    if (it == j.end())
        return absent;
    if constexpr (std::is_same_v<T, std::string>)
        return it->is_string() ? it->get<std::string>() : absent;
    else if constexpr (std::is_same_v<T, bool>)
        return it->is_boolean() ? it->get<bool>() : absent;
    else
        return it->is_number() ? it->get<T>() : absent;
}

} // namespace

std::optional<LoopSummary> summaryFromJson(const nlohmann::json& j)
{
    if (!j.is_object() || !j.contains("stop_reason"))
        return std::nullopt;
    LoopSummary s;
    s.stopReason = storedValue<std::string>(j, "stop_reason", {});
    s.rounds = storedValue(j, "rounds", 0);
    s.evaluated = storedValue(j, "evaluated", 0);
    s.passed = storedValue(j, "passed", 0);
    s.wallSeconds = storedValue(j, "wall_seconds", 0.0);
    s.candidatesPerMinute = storedValue(j, "candidates_per_minute", 0.0);
    s.candidatesPerRound = storedValue(j, "candidates_per_round", 1);
    s.tokens = storedValue<std::int64_t>(j, "tokens", 0);
    s.cancelled = storedValue(j, "cancelled", false);
    if (const auto ahead = j.find("compile_ahead"); ahead != j.end() && ahead->is_object()) {
        s.compiledAhead = storedValue(*ahead, "compiled", 0);
        s.usedAhead = storedValue(*ahead, "used", 0);
    }
    if (j.contains("pass_at_k"))
        s.passAtK = storedValue(j, "pass_at_k", 0.0);
    if (j.contains("speedup_at_k"))
        s.speedupAtK = storedValue(j, "speedup_at_k", 0.0);
    if (j.contains("baseline_us")) {
        s.baseline.emplace();
        s.baseline->medianUs = storedValue(j, "baseline_us", 0.0);
    }
    if (j.contains("best_iteration")) {
        s.best.emplace();
        s.best->index = storedValue(j, "best_iteration", 0);
        if (j.contains("best_us"))
            s.best->medianUs = storedValue(j, "best_us", 0.0);
        if (j.contains("best_speedup"))
            s.best->speedup = storedValue(j, "best_speedup", 0.0);
        if (j.contains("best_pct_of_copy"))
            s.best->pctOfCopy = storedValue(j, "best_pct_of_copy", 0.0);
    }
    return s;
}

} // namespace kl

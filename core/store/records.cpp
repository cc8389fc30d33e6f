#include "core/store/records.h"

#include "core/model/error.h"
#include "core/model/hash.h"
#include "core/model/problem.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace kl::store {

std::int64_t nowMs()
{
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

ProblemRecord problemRecord(const Problem& problem, std::string jsonText)
{
    ProblemRecord record;
    record.name = problem.name;
    record.json = std::move(jsonText);
    record.referenceSource = problem.reference.source;
    record.baselineSource = problem.baseline.source;
    record.hash = contentHash({ record.json, record.referenceSource, record.baselineSource });
    if (!problem.contentHash.empty() && record.hash != problem.contentHash)
        throw Error("store.problem-changed", problem.file.string(), {},
            "the problem file changed since it was loaded; load it again");
    return record;
}

ProblemRecord problemRecord(const Problem& problem)
{
    std::ifstream in(problem.file, std::ios::binary);
    if (!in)
        throw Error("store.problem-changed", problem.file.string(), {}, "cannot read the problem file again");
    std::ostringstream text;
    text << in.rdbuf();
    return problemRecord(problem, text.str());
}

namespace {
constexpr std::array<std::string_view, 3> kProposerNames { "llm", "tuner", "human" };
constexpr std::array<std::string_view, 6> kDecisionNames { "accept", "reject", "steer", "replace", "auto-keep",
    "auto-revert" };
} // namespace

std::string proposedBy(const IterationRow& row)
{
    if (row.proposerDetail == "baseline" || row.proposerDetail == "inductor")
        return row.proposerDetail;
    return row.proposer ? std::string(proposerName(*row.proposer)) : std::string();
}

std::string_view proposerName(CandidateRecord::Proposer proposer)
{
    return kProposerNames.at(static_cast<std::size_t>(proposer));
}

std::optional<CandidateRecord::Proposer> parseProposer(std::string_view name)
{
    auto it = std::find(kProposerNames.begin(), kProposerNames.end(), name);
    if (it == kProposerNames.end())
        return std::nullopt;
    return static_cast<CandidateRecord::Proposer>(it - kProposerNames.begin());
}

std::string_view decisionName(DecisionRecord::Kind kind) { return kDecisionNames.at(static_cast<std::size_t>(kind)); }

std::optional<DecisionRecord::Kind> parseDecision(std::string_view name)
{
    auto it = std::find(kDecisionNames.begin(), kDecisionNames.end(), name);
    if (it == kDecisionNames.end())
        return std::nullopt;
    return static_cast<DecisionRecord::Kind>(it - kDecisionNames.begin());
}

namespace {
bool looksLikeCredential(std::string name)
{
    std::transform(name.begin(), name.end(), name.begin(),
        [](unsigned char c) { return c == '-' ? '_' : static_cast<char>(std::tolower(c)); });
    static constexpr std::array<std::string_view, 9> kWords { "authorization", "api_key", "apikey", "token", "secret",
        "password", "credential", "cookie", "bearer" };
    // "max_tokens" and "usage.total_tokens" are not credentials.
    if (name.find("tokens") != std::string::npos)
        return false;
    return std::any_of(
        kWords.begin(), kWords.end(), [&](std::string_view word) { return name.find(word) != std::string::npos; });
}
} // namespace

nlohmann::json scrubSecrets(const nlohmann::json& json)
{
    if (json.is_object()) {
        nlohmann::json out = nlohmann::json::object();
        for (auto it = json.begin(); it != json.end(); ++it)
            out[it.key()] = looksLikeCredential(it.key()) ? nlohmann::json("[redacted]") : scrubSecrets(it.value());
        return out;
    }
    if (json.is_array()) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& item : json)
            out.push_back(scrubSecrets(item));
        return out;
    }
    return json;
}

std::string metricName(const MetricKey& key)
{
    if (key.kernel.empty() && key.caseLabel.empty())
        return key.metric;
    return key.kernel + "/" + key.caseLabel + "/" + key.metric;
}

std::string evaluationCacheKey(const EvaluationKey& key)
{
    // Tunables in a fixed order (the map sorts by name) so that equal choices give equal keys.
    std::string tunables;
    for (const auto& [name, value] : key.tunables)
        tunables += name + "=" + std::to_string(value) + ";";
    return contentHash({ "kl-evaluation-1", contentHash(key.source), tunables, key.problemHash, key.device, key.toolkit,
        key.options });
}

std::optional<int> summaryBestIteration(const SessionRecord& session)
{
    if (!session.summary || !session.summary->bestIteration || *session.summary->bestIteration <= 0)
        return std::nullopt;
    return session.summary->bestIteration;
}

std::optional<double> summaryBestPctOfCopy(const SessionRecord& session)
{
    return session.summary ? session.summary->bestPctOfCopy : std::nullopt;
}

std::optional<double> summaryBestSpeedup(const SessionRecord& session)
{
    return session.summary ? session.summary->bestSpeedup : std::nullopt;
}

std::optional<double> summaryBestMedianUs(const SessionRecord& session)
{
    return session.summary ? session.summary->bestUs : std::nullopt;
}

std::string replyText(const Exchange& exchange)
{
    if (exchange.choices.empty())
        return exchange.response; // a failed exchange: the body, for the record
    std::string text;
    for (std::size_t i = 0; i < exchange.choices.size(); ++i) {
        if (exchange.choices.size() > 1)
            text += (i ? "\n\n" : "") + std::string("--- choice ") + std::to_string(i + 1) + " ---\n";
        text += exchange.choices[i].text;
    }
    return text;
}

std::vector<std::pair<std::string, std::string>> evidenceItems(const FindingRecord& finding)
{
    std::vector<std::pair<std::string, std::string>> items;
    if (!finding.evidence.is_object())
        return items;
    for (auto it = finding.evidence.begin(); it != finding.evidence.end(); ++it) {
        std::string value;
        if (it.value().is_number_float()) {
            char text[32];
            std::snprintf(text, sizeof text, "%.4g", it.value().get<double>());
            value = text;
        } else if (it.value().is_string()) {
            value = it.value().get<std::string>();
        } else {
            value = it.value().dump();
        }
        items.emplace_back(it.key(), std::move(value));
    }
    return items;
}

std::string evidenceText(const FindingRecord& finding)
{
    std::string text;
    for (const auto& [key, value] : evidenceItems(finding))
        text += (text.empty() ? "" : ", ") + key + " " + value;
    return text;
}

} // namespace kl::store

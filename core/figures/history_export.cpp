#include "core/figures/history_export.h"

#include <cstdio>

namespace kl::figures {

namespace {

std::string quoted(const std::string& text)
{
    if (text.find_first_of(",\"\n\r") == std::string::npos)
        return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

std::string number(const std::optional<double>& value)
{
    if (!value)
        return {};
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", *value);
    return buffer;
}

std::string proposerOf(const store::IterationRow& row)
{
    if (row.proposerDetail == "baseline")
        return "baseline";
    return row.proposer ? std::string(store::proposerName(*row.proposer)) : std::string();
}

nlohmann::json optional(const std::optional<double>& value)
{
    return value ? nlohmann::json(*value) : nlohmann::json();
}

} // namespace

std::string historyCsv(const std::vector<store::IterationRow>& rows)
{
    std::string out = "iteration,round,proposer,proposer_detail,state,status,category,median_us,gbps,pct_of_copy,"
                      "speedup,predicted_speedup,decision,top_finding_rule,top_finding\n";
    for (const store::IterationRow& r : rows) {
        out += std::to_string(r.index) + "," + (r.round ? std::to_string(*r.round) : std::string()) + ","
            + quoted(proposerOf(r)) + "," + quoted(r.proposerDetail) + "," + quoted(r.state) + "," + quoted(r.status)
            + "," + quoted(r.category) + "," + number(r.medianUs) + "," + number(r.gbps) + "," + number(r.pctOfCopy)
            + "," + number(r.speedup) + "," + number(r.predictedSpeedup) + ","
            + (r.lastDecision ? std::string(store::decisionName(*r.lastDecision)) : std::string()) + ","
            + quoted(r.topFindingRule) + "," + quoted(r.topFindingMessage) + "\n";
    }
    return out;
}

nlohmann::json historyJson(const store::SessionRecord& session, const std::vector<store::IterationRow>& rows)
{
    nlohmann::json iterations = nlohmann::json::array();
    for (const store::IterationRow& r : rows)
        iterations.push_back({ { "iteration", r.index },
            { "round", r.round ? nlohmann::json(*r.round) : nlohmann::json() }, { "proposer", proposerOf(r) },
            { "proposer_detail", r.proposerDetail }, { "state", r.state }, { "status", r.status },
            { "category", r.category }, { "median_us", optional(r.medianUs) }, { "gbps", optional(r.gbps) },
            { "pct_of_copy", optional(r.pctOfCopy) }, { "speedup", optional(r.speedup) },
            { "predicted_speedup", optional(r.predictedSpeedup) },
            { "decision", r.lastDecision ? nlohmann::json(store::decisionName(*r.lastDecision)) : nlohmann::json() },
            { "top_finding_rule", r.topFindingRule }, { "top_finding", r.topFindingMessage } });
    return { { "session", session.id }, { "problem", session.problemName }, { "device", session.device },
        { "proposer", session.proposer }, { "status", session.status }, { "label", session.label },
        { "iterations", iterations } };
}

} // namespace kl::figures

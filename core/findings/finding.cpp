#include "core/findings/finding.h"

#include "core/model/error.h"

#include <nlohmann/json.hpp>

namespace kl {

using nlohmann::json;

std::string_view severityName(Finding::Severity severity)
{
    switch (severity) {
    case Finding::Severity::Info:
        return "info";
    case Finding::Severity::Warning:
        return "warning";
    case Finding::Severity::Critical:
        return "critical";
    }
    return "info";
}

std::optional<Finding::Severity> parseSeverity(std::string_view name)
{
    for (auto s : { Finding::Severity::Info, Finding::Severity::Warning, Finding::Severity::Critical }) {
        if (severityName(s) == name)
            return s;
    }
    return std::nullopt;
}

json toJson(const Finding& finding)
{
    return json { { "id", finding.id }, { "severity", severityName(finding.severity) }, { "title", finding.title },
        { "explanation", finding.explanation }, { "evidence", finding.evidence }, { "directions", finding.directions },
        { "tuner_hints", finding.tunerHints }, { "priority", finding.priority } };
}

json toJson(const std::vector<Finding>& findings)
{
    json list = json::array();
    for (const auto& f : findings)
        list.push_back(toJson(f));
    return list;
}

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& message)
{
    throw Error("findings.bad-json", {}, where, message);
}

std::string requiredString(const json& j, const char* key, const std::string& where)
{
    const auto it = j.find(key);
    if (it == j.end() || !it->is_string())
        bad(where + key, "expected a string");
    return it->get<std::string>();
}

std::vector<std::string> stringList(const json& j, const char* key, const std::string& where)
{
    std::vector<std::string> list;
    const auto it = j.find(key);
    if (it == j.end())
        return list;
    if (!it->is_array())
        bad(where + key, "expected an array of strings");
    for (std::size_t i = 0; i < it->size(); ++i) {
        if (!(*it)[i].is_string())
            bad(where + key + "[" + std::to_string(i) + "]", "expected a string");
        list.push_back((*it)[i].get<std::string>());
    }
    return list;
}

Finding findingAt(const json& j, const std::string& where)
{
    if (!j.is_object())
        bad(where.empty() ? std::string("finding") : where.substr(0, where.size() - 1), "expected an object");
    Finding f;
    f.id = requiredString(j, "id", where);
    if (f.id.empty())
        bad(where + "id", "must not be empty");
    const auto severity = parseSeverity(requiredString(j, "severity", where));
    if (!severity)
        bad(where + "severity", "expected info, warning or critical");
    f.severity = *severity;
    f.title = requiredString(j, "title", where);
    f.explanation = j.contains("explanation") ? requiredString(j, "explanation", where) : std::string();
    if (const auto it = j.find("evidence"); it != j.end()) {
        if (!it->is_object())
            bad(where + "evidence", "expected an object of numbers");
        for (const auto& [name, value] : it->items()) {
            if (!value.is_number())
                bad(where + "evidence." + name, "expected a number");
            f.evidence[name] = value.get<double>();
        }
    }
    f.directions = stringList(j, "directions", where);
    f.tunerHints = stringList(j, "tuner_hints", where);
    if (const auto it = j.find("priority"); it != j.end()) {
        if (!it->is_number())
            bad(where + "priority", "expected a number");
        f.priority = it->get<double>();
    }
    return f;
}

} // namespace

Finding findingFromJson(const json& j) { return findingAt(j, {}); }

std::vector<Finding> findingsFromJson(const json& j)
{
    if (!j.is_array())
        bad("findings", "expected an array");
    std::vector<Finding> list;
    for (std::size_t i = 0; i < j.size(); ++i)
        list.push_back(findingAt(j[i], "[" + std::to_string(i) + "]."));
    return list;
}

} // namespace kl

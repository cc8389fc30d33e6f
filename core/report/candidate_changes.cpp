#include "core/report/candidate_changes.h"

#include <map>
#include <set>
#include <sstream>

namespace kl::report {

namespace {

std::string trimmed(const std::string& s)
{
    const auto a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos)
        return {};
    return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

using DirectiveKey = std::pair<std::string, std::string>; // kind, name

// Every "// @kl KIND NAME ..." line (or "# @kl" for Triton), by kind and name; repeated keys get a suffix.
std::map<DirectiveKey, std::string> directivesOf(const std::string& source)
{
    std::map<DirectiveKey, std::string> out;
    std::istringstream in(source);
    for (std::string line; std::getline(in, line);) {
        const auto at = line.find("@kl ");
        if (at == std::string::npos)
            continue;
        const auto lead = trimmed(line.substr(0, at));
        if (lead != "//" && lead != "#")
            continue;
        const auto text = trimmed(line.substr(at + 4));
        std::istringstream words(text);
        std::string kind, name;
        words >> kind >> name;
        if (kind == "constraint")
            name = trimmed(text.substr(kind.size()));
        DirectiveKey key { kind, name };
        for (int n = 2; out.count(key); ++n)
            key.second = name + " #" + std::to_string(n);
        out[key] = text;
    }
    return out;
}

} // namespace

std::vector<DirectiveChange> CandidateChanges::launchRules() const
{
    std::vector<DirectiveChange> out;
    for (const auto& d : directives)
        if (d.kind == "launch")
            out.push_back(d);
    return out;
}

CandidateChanges candidateChanges(const std::string& beforeSource, const TunableValues& beforeTunables,
    const std::string& afterSource, const TunableValues& afterTunables)
{
    CandidateChanges c;
    std::set<std::string> names;
    for (const auto& [k, v] : beforeTunables)
        names.insert(k);
    for (const auto& [k, v] : afterTunables)
        names.insert(k);
    for (const auto& name : names) {
        TunableChange t { name, std::nullopt, std::nullopt };
        if (auto it = beforeTunables.find(name); it != beforeTunables.end())
            t.before = it->second;
        if (auto it = afterTunables.find(name); it != afterTunables.end())
            t.after = it->second;
        if (t.before != t.after)
            c.tunables.push_back(t);
    }
    const auto before = directivesOf(beforeSource);
    const auto after = directivesOf(afterSource);
    std::set<DirectiveKey> keys;
    for (const auto& [k, v] : before)
        keys.insert(k);
    for (const auto& [k, v] : after)
        keys.insert(k);
    // Launch rules first: they change the grid the engineer reads the timing against.
    for (const bool launches : { true, false })
        for (const auto& key : keys) {
            if ((key.first == "launch") != launches)
                continue;
            const auto b = before.count(key) ? before.at(key) : std::string();
            const auto a = after.count(key) ? after.at(key) : std::string();
            if (a != b)
                c.directives.push_back({ key.first, key.second, b, a });
        }
    return c;
}

std::string changesHeaderText(const CandidateChanges& c)
{
    std::ostringstream out;
    auto value = [](const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : std::string("(unset)"); };
    if (!c.tunables.empty()) {
        out << "tunables:";
        const char* sep = " ";
        for (const auto& t : c.tunables) {
            out << sep << t.name << " " << value(t.before) << " -> " << value(t.after);
            sep = ", ";
        }
        out << "\n";
    }
    for (const auto& d : c.directives) {
        if (d.before.empty())
            out << d.kind << " added:   " << d.after << "\n";
        else if (d.after.empty())
            out << d.kind << " removed: " << d.before << "\n";
        else
            out << d.kind << " changed: " << d.before << "\n"
                << std::string(d.kind.size(), ' ') << "      -> " << d.after << "\n";
    }
    return out.str();
}

} // namespace kl::report

#include "core/model/candidate.h"

#include "core/model/error.h"
#include "core/model/expression.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace kl {

namespace {

constexpr std::string_view kMarker = "@kl";

std::string trim(std::string_view s)
{
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos)
        return {};
    const auto e = s.find_last_not_of(" \t\r");
    return std::string(s.substr(b, e - b + 1));
}

bool isIdentifier(const std::string& s)
{
    static const std::regex id(R"([A-Za-z_][A-Za-z0-9_]*)");
    return std::regex_match(s, id);
}

// Splits on commas that are not inside parentheses.
std::vector<std::string> splitTopLevel(const std::string& text)
{
    std::vector<std::string> parts;
    int depth = 0;
    std::string current;
    for (char c : text) {
        if (c == '(')
            ++depth;
        if (c == ')')
            --depth;
        if (c == ',' && depth == 0) {
            parts.push_back(trim(current));
            current.clear();
        } else {
            current += c;
        }
    }
    if (!trim(current).empty() || !parts.empty())
        parts.push_back(trim(current));
    return parts;
}

class DirectiveParser {
public:
    DirectiveParser(Candidate& candidate, int line)
        : m_c(candidate)
        , m_line(line)
    {
    }

    void parse(const std::string& text)
    {
        std::istringstream in(text);
        std::string keyword;
        in >> keyword;
        std::string rest;
        std::getline(in, rest);
        rest = trim(rest);
        if (keyword == "tunable")
            tunable(rest);
        else if (keyword == "constraint")
            constraint(rest);
        else if (keyword == "scratch")
            scratch(rest);
        else if (keyword == "launch")
            launch(rest);
        else
            fail("candidate.bad-directive",
                 "unknown directive \"" + keyword + "\" (expected tunable, constraint, scratch or launch)");
    }

private:
    [[noreturn]] void fail(const std::string& category, const std::string& message) const
    {
        throw Error(category, m_c.fileName, "line " + std::to_string(m_line), message);
    }

    std::int64_t integer(const std::string& text) const
    {
        try {
            return evaluateInteger(text, {}, m_c.fileName, "line " + std::to_string(m_line));
        } catch (const Error&) {
            fail("candidate.bad-tunable", "\"" + text + "\" is not a whole number");
        }
    }

    // tunable NAME = DEFAULT in V1, V2, ... | in A..B [step S | pow2]
    void tunable(const std::string& rest)
    {
        static const std::regex form(R"(([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(-?\d+)\s+in\s+(.+))");
        std::smatch m;
        if (!std::regex_match(rest, m, form))
            fail("candidate.bad-tunable",
                 "expected \"tunable NAME = DEFAULT in V1, V2, ...\" or \"... in LO..HI [step S | pow2]\", got \"" + rest
                     + "\"");
        Tunable t;
        t.name = m[1];
        t.defaultValue = integer(m[2]);
        t.line = m_line;
        const std::string set = trim(m[3].str());
        static const std::regex range(R"((-?\d+)\s*\.\.\s*(-?\d+)(?:\s+(step)\s+(\d+)|\s+(pow2))?)");
        std::smatch r;
        if (std::regex_match(set, r, range)) {
            const auto lo = integer(r[1]), hi = integer(r[2]);
            if (lo > hi)
                fail("candidate.bad-tunable", "empty range " + set);
            if (r[5].matched) {
                if (lo <= 0)
                    fail("candidate.bad-tunable", "a pow2 range must start above zero");
                for (std::int64_t v = 1; v <= hi; v *= 2)
                    if (v >= lo)
                        t.values.push_back(v);
            } else {
                const std::int64_t step = r[4].matched ? integer(r[4]) : 1;
                if (step <= 0)
                    fail("candidate.bad-tunable", "step must be positive");
                if ((hi - lo) / step > 100000)
                    fail("candidate.bad-tunable", "range " + set + " has more than 100000 values");
                for (std::int64_t v = lo; v <= hi; v += step)
                    t.values.push_back(v);
            }
        } else {
            for (const auto& item : splitTopLevel(set)) {
                if (item.empty())
                    fail("candidate.bad-tunable", "empty value in \"" + set + "\"");
                t.values.push_back(integer(item));
            }
        }
        std::sort(t.values.begin(), t.values.end());
        t.values.erase(std::unique(t.values.begin(), t.values.end()), t.values.end());
        if (std::find(t.values.begin(), t.values.end(), t.defaultValue) == t.values.end())
            fail("candidate.bad-tunable", "default " + std::to_string(t.defaultValue) + " of " + t.name
                                              + " is not among its allowed values");
        if (m_c.tunable(t.name))
            fail("candidate.duplicate", "tunable " + t.name + " is declared twice");
        m_c.tunables.push_back(std::move(t));
    }

    void constraint(const std::string& rest)
    {
        if (rest.empty())
            fail("candidate.bad-constraint", "constraint has no expression");
        usedSymbols(rest, m_c.fileName, "line " + std::to_string(m_line)); // syntax check now
        m_c.constraints.push_back({ rest, m_line });
    }

    // scratch NAME DTYPE [COUNT] [zero]
    void scratch(const std::string& rest)
    {
        static const std::regex form(R"(([A-Za-z_][A-Za-z0-9_]*)\s+([a-z0-9]+)\s*\[(.+)\]\s*(zero)?)");
        std::smatch m;
        if (!std::regex_match(rest, m, form))
            fail("candidate.bad-scratch", "expected \"scratch NAME DTYPE [COUNT] [zero]\", got \"" + rest + "\"");
        const auto type = parseDType(m[2].str());
        if (!type)
            fail("candidate.bad-scratch", "unknown dtype \"" + m[2].str() + "\"");
        ScratchBuffer b { m[1], *type, trim(m[3].str()), m[4].matched, m_line };
        usedSymbols(b.count, m_c.fileName, "line " + std::to_string(m_line));
        m_c.scratch.push_back(std::move(b));
    }

    // launch KERNEL grid=(..) block=(..) [smem=(..)] args=(..)
    void launch(const std::string& rest)
    {
        std::istringstream in(rest);
        LaunchRule rule;
        rule.line = m_line;
        in >> rule.kernel;
        if (!isIdentifier(rule.kernel))
            fail("candidate.bad-launch", "launch needs a kernel name first, got \"" + rule.kernel + "\"");
        std::string tail;
        std::getline(in, tail);
        std::set<std::string> seen;
        std::size_t pos = 0;
        while (true) {
            pos = tail.find_first_not_of(" \t", pos);
            if (pos == std::string::npos)
                break;
            const auto eq = tail.find('=', pos);
            if (eq == std::string::npos)
                fail("candidate.bad-launch", "expected key=(...) in \"" + tail.substr(pos) + "\"");
            const std::string key = trim(tail.substr(pos, eq - pos));
            auto open = tail.find_first_not_of(" \t", eq + 1);
            if (open == std::string::npos || tail[open] != '(')
                fail("candidate.bad-launch", key + "= must be followed by a parenthesised list");
            int depth = 0;
            std::size_t close = open;
            for (; close < tail.size(); ++close) {
                if (tail[close] == '(')
                    ++depth;
                else if (tail[close] == ')' && --depth == 0)
                    break;
            }
            if (close >= tail.size())
                fail("candidate.bad-launch", "unbalanced parentheses after " + key + "=");
            const std::string body = tail.substr(open + 1, close - open - 1);
            if (!seen.insert(key).second)
                fail("candidate.bad-launch", key + "= given twice");
            assign(rule, key, body);
            pos = close + 1;
        }
        if (!seen.count("grid") || !seen.count("block") || !seen.count("args"))
            fail("candidate.bad-launch", "launch " + rule.kernel + " needs grid=(..), block=(..) and args=(..)");
        m_c.launches.push_back(std::move(rule));
    }

    void assign(LaunchRule& rule, const std::string& key, const std::string& body)
    {
        const std::string where = "line " + std::to_string(m_line);
        if (key == "grid" || key == "block") {
            auto dims = splitTopLevel(body);
            if (dims.empty() || dims.size() > 3)
                fail("candidate.bad-launch", key + " takes one to three dimensions");
            auto& target = key == "grid" ? rule.grid : rule.block;
            for (std::size_t i = 0; i < dims.size(); ++i) {
                usedSymbols(dims[i], m_c.fileName, where);
                target[i] = dims[i];
            }
        } else if (key == "smem") {
            rule.sharedBytes = trim(body);
            usedSymbols(rule.sharedBytes, m_c.fileName, where);
        } else if (key == "args") {
            static const std::regex typed(R"((.+)\s+as\s+([a-z0-9]+))");
            for (auto& item : splitTopLevel(body)) {
                if (item.empty())
                    fail("candidate.bad-launch", "empty argument in args=(" + body + ")");
                LaunchArg arg;
                std::smatch m;
                if (std::regex_match(item, m, typed)) {
                    const auto type = parseDType(m[2].str());
                    if (!type)
                        fail("candidate.bad-launch", "unknown type \"" + m[2].str() + "\" in \"" + item + "\"");
                    arg.expression = trim(m[1].str());
                    arg.type = *type;
                    arg.typeGiven = true;
                } else {
                    arg.expression = item;
                }
                usedSymbols(arg.expression, m_c.fileName, where);
                rule.args.push_back(std::move(arg));
            }
        } else {
            fail("candidate.bad-launch", "unknown launch key \"" + key + "\" (expected grid, block, smem, args)");
        }
    }

    Candidate& m_c;
    int m_line;
};

} // namespace

const Tunable* Candidate::tunable(const std::string& name) const
{
    for (const auto& t : tunables)
        if (t.name == name)
            return &t;
    return nullptr;
}

TunableValues Candidate::defaults() const
{
    TunableValues values;
    for (const auto& t : tunables)
        values[t.name] = t.defaultValue;
    return values;
}

TunableValues Candidate::withOverrides(const TunableValues& overrides) const
{
    auto values = defaults();
    for (const auto& [name, value] : overrides) {
        const auto* t = tunable(name);
        if (!t)
            throw Error("candidate.unknown-tunable", fileName, name, "the candidate declares no tunable " + name);
        if (std::find(t->values.begin(), t->values.end(), value) == t->values.end())
            throw Error("candidate.value-not-allowed", fileName, name,
                        std::to_string(value) + " is not an allowed value of " + name);
        values[name] = value;
    }
    return values;
}

Candidate parseCandidate(std::string source, std::string fileName)
{
    Candidate c;
    c.fileName = std::move(fileName);
    if (source.size() > kMaxCandidateSourceBytes)
        throw Error("candidate.too-large", c.fileName, {},
                    "source is " + std::to_string(source.size()) + " bytes; the limit is "
                        + std::to_string(kMaxCandidateSourceBytes));
    if (source.find('\0') != std::string::npos)
        throw Error("candidate.binary", c.fileName, {}, "source contains a NUL byte");
    c.source = std::move(source);

    std::istringstream in(c.source);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        const auto slashes = line.find("//");
        if (slashes == std::string::npos)
            continue;
        std::string comment = trim(std::string_view(line).substr(slashes + 2));
        if (comment.rfind(kMarker, 0) != 0)
            continue;
        comment = trim(std::string_view(comment).substr(kMarker.size()));
        DirectiveParser(c, number).parse(comment);
    }
    if (c.launches.empty())
        throw Error("candidate.no-launch", c.fileName, {},
                    "no \"// @kl launch\" line: the candidate must say how its kernel is launched");
    std::set<std::string> scratchNames;
    for (const auto& s : c.scratch)
        if (!scratchNames.insert(s.name).second)
            throw Error("candidate.duplicate", c.fileName, "line " + std::to_string(s.line),
                        "scratch buffer " + s.name + " is declared twice");
    return c;
}

Candidate loadCandidate(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error("candidate.unreadable", path, {}, "cannot open the file");
    in.seekg(0, std::ios::end);
    const auto size = static_cast<std::size_t>(in.tellg());
    if (size > kMaxCandidateSourceBytes)
        throw Error("candidate.too-large", path, {},
                    "source is " + std::to_string(size) + " bytes; the limit is " + std::to_string(kMaxCandidateSourceBytes));
    in.seekg(0);
    std::string text(size, '\0');
    in.read(text.data(), static_cast<std::streamsize>(size));
    return parseCandidate(std::move(text), path);
}

} // namespace kl

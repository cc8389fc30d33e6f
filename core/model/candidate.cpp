#include "core/model/candidate.h"

#include "core/model/compiler_flags.h"
#include "core/model/error.h"
#include "core/model/expression.h"
#include "core/model/input_file.h"
#include "core/model/names.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
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

bool isSpace(char c) { return c == ' ' || c == '\t'; }

// A whole number written as digits (no expression), within the range expressions keep exact.
std::optional<std::int64_t> literal(const std::string& text)
{
    std::int64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end || value > kMaxTunableMagnitude
        || value < -kMaxTunableMagnitude)
        return std::nullopt;
    return value;
}

// "EXPR as TYPE" → {EXPR, TYPE}; the last " as " counts, as the launch syntax always meant.
std::optional<std::pair<std::string, std::string>> typedArg(const std::string& item)
{
    std::size_t typeStart = item.size();
    while (typeStart > 0
        && (std::islower(static_cast<unsigned char>(item[typeStart - 1]))
            || std::isdigit(static_cast<unsigned char>(item[typeStart - 1]))))
        --typeStart;
    if (typeStart == item.size() || typeStart == 0 || !isSpace(item[typeStart - 1]))
        return std::nullopt;
    std::size_t asEnd = typeStart;
    while (asEnd > 0 && isSpace(item[asEnd - 1]))
        --asEnd;
    if (asEnd < 3 || item.compare(asEnd - 2, 2, "as") != 0 || !isSpace(item[asEnd - 3]))
        return std::nullopt;
    const std::string expression = trim(std::string_view(item).substr(0, asEnd - 2));
    if (expression.empty())
        return std::nullopt;
    return std::make_pair(expression, item.substr(typeStart));
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
        else if (keyword == "flag")
            flag(rest);
        else if (keyword == "constraint")
            constraint(rest);
        else if (keyword == "scratch")
            scratch(rest);
        else if (keyword == "launch")
            launch(rest);
        else
            fail("candidate.bad-directive",
                "unknown directive \"" + keyword + "\" (expected tunable, flag, constraint, scratch or launch)");
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

    void name(const std::string& what, const std::string& text) const
    {
        if (const auto problem = nameProblem(text); !problem.empty())
            fail("candidate.bad-name", what + " name " + quotedForMessage(text) + " " + problem);
    }

    // flag NAME = DEFAULT in V1, V2, ...: a tunable whose name is a compiler flag and whose values
    // are the flag's (compiler_flags.h).
    void flag(const std::string& rest)
    {
        if (m_c.language != CandidateLanguage::Cuda)
            fail("candidate.bad-flag", "compiler flags apply to CUDA candidates; Triton compiles with its own options");
        const auto eq = rest.find('=');
        const std::string name = trim(std::string_view(rest).substr(0, eq == std::string::npos ? rest.size() : eq));
        const CompilerFlag* known = compilerFlag(name);
        if (!known) {
            std::string names;
            for (const CompilerFlag& f : compilerFlags())
                names += (names.empty() ? "" : ", ") + std::string(f.name);
            fail("candidate.bad-flag", "unknown compiler flag " + quotedForMessage(name) + " (known: " + names + ")");
        }
        tunable(rest, true);
        const Tunable& t = m_c.tunables.back();
        for (const std::int64_t value : t.values)
            if (const auto problem = compilerFlagValueProblem(*known, value); !problem.empty())
                fail("candidate.bad-flag", problem);
    }

    // tunable NAME = DEFAULT in V1, V2, ... | in A..B [step S | pow2]
    void tunable(const std::string& rest, bool compilerFlag = false)
    {
        const std::string usage
            = "expected \"tunable NAME = DEFAULT in V1, V2, ...\" or \"... in LO..HI [step S | pow2]\", got "
            + quotedForMessage(rest, 80);
        const auto eq = rest.find('=');
        if (eq == std::string::npos)
            fail("candidate.bad-tunable", usage);
        Tunable t;
        t.name = trim(std::string_view(rest).substr(0, eq));
        t.compilerFlag = compilerFlag;
        name("tunable", t.name);
        if (!compilerFlag && isReservedName(t.name))
            fail("candidate.reserved-name",
                "tunable " + t.name
                    + " has a reserved name (a C++ or CUDA keyword or built-in, or a name starting with __ or _ and a "
                      "capital): it becomes a macro");
        std::istringstream after(rest.substr(eq + 1));
        std::string defaultText, in;
        after >> defaultText >> in;
        std::string set;
        std::getline(after, set);
        set = trim(set);
        if (in != "in" || set.empty())
            fail("candidate.bad-tunable", usage);
        const auto defaultValue = literal(defaultText);
        if (!defaultValue)
            fail("candidate.bad-tunable", "default " + quotedForMessage(defaultText) + " is not a whole number");
        t.defaultValue = *defaultValue;
        t.line = m_line;
        if (const auto dots = set.find(".."); dots != std::string::npos)
            range(t, set, dots);
        else {
            const auto items = splitTopLevel(set);
            if (items.size() > kMaxTunableValues)
                fail("candidate.bad-tunable",
                    "tunable " + t.name + " lists " + std::to_string(items.size()) + " values; at most "
                        + std::to_string(kMaxTunableValues));
            for (const auto& item : items) {
                if (item.empty())
                    fail("candidate.bad-tunable", "empty value in \"" + set + "\"");
                t.values.push_back(integer(item));
            }
        }
        std::sort(t.values.begin(), t.values.end());
        t.values.erase(std::unique(t.values.begin(), t.values.end()), t.values.end());
        if (std::find(t.values.begin(), t.values.end(), t.defaultValue) == t.values.end())
            fail("candidate.bad-tunable",
                "default " + std::to_string(t.defaultValue) + " of " + t.name + " is not among its allowed values");
        if (m_c.tunable(t.name))
            fail("candidate.duplicate", "tunable " + t.name + " is declared twice");
        m_c.tunables.push_back(std::move(t));
    }

    // LO..HI [step S | pow2]
    void range(Tunable& t, const std::string& set, std::size_t dots)
    {
        std::istringstream tail(set.substr(dots + 2));
        std::string hiText, word, stepText, extra;
        tail >> hiText >> word >> stepText >> extra;
        const auto lo = literal(trim(std::string_view(set).substr(0, dots)));
        const auto hi = literal(hiText);
        const bool pow2 = word == "pow2" && stepText.empty();
        const bool stepped = word == "step" && !stepText.empty() && extra.empty();
        if (!lo || !hi || !(word.empty() || pow2 || stepped))
            fail("candidate.bad-tunable",
                "expected \"LO..HI\", \"LO..HI step S\" or \"LO..HI pow2\", got \"" + set + "\"");
        if (*lo > *hi)
            fail("candidate.bad-tunable", "empty range " + set);
        if (pow2) {
            if (*lo <= 0)
                fail("candidate.bad-tunable", "a pow2 range must start above zero");
            for (std::int64_t v = 1; v <= *hi; v *= 2)
                if (v >= *lo)
                    t.values.push_back(v);
            return;
        }
        const auto step = stepped ? literal(stepText) : std::optional<std::int64_t>(1);
        if (!step || *step <= 0)
            fail("candidate.bad-tunable", "step must be a positive whole number");
        if ((*hi - *lo) / *step + 1 > static_cast<std::int64_t>(kMaxTunableValues))
            fail("candidate.bad-tunable",
                "range " + set + " has " + std::to_string((*hi - *lo) / *step + 1) + " values; at most "
                    + std::to_string(kMaxTunableValues));
        for (std::int64_t v = *lo; v <= *hi; v += *step)
            t.values.push_back(v);
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
        const std::string usage = "expected \"scratch NAME DTYPE [COUNT] [zero]\", got " + quotedForMessage(rest, 80);
        const auto open = rest.find('['), close = rest.rfind(']');
        if (open == std::string::npos || close == std::string::npos || close < open)
            fail("candidate.bad-scratch", usage);
        std::istringstream head(rest.substr(0, open));
        std::string bufferName, dtypeName, extra;
        head >> bufferName >> dtypeName >> extra;
        const std::string after = trim(std::string_view(rest).substr(close + 1));
        if (bufferName.empty() || dtypeName.empty() || !extra.empty() || !(after.empty() || after == "zero"))
            fail("candidate.bad-scratch", usage);
        name("scratch", bufferName);
        const auto type = parseDType(dtypeName);
        if (!type)
            fail("candidate.bad-scratch", "unknown dtype \"" + dtypeName + "\"");
        ScratchBuffer b { bufferName, *type, trim(std::string_view(rest).substr(open + 1, close - open - 1)),
            after == "zero", m_line };
        if (b.count.empty())
            fail("candidate.bad-scratch", "scratch " + b.name + " has no element count");
        const auto where = "line " + std::to_string(m_line);
        if (usedSymbols(b.count, m_c.fileName, where).empty()) {
            if (evaluateInteger(b.count, {}, m_c.fileName, where) < 1)
                fail("candidate.bad-scratch",
                    "scratch " + b.name + " of [" + b.count + "] elements: it needs at least one");
        }
        m_c.scratch.push_back(std::move(b));
    }

    // launch KERNEL grid=(..) block=(..) [smem=(..)] args=(..)
    void launch(const std::string& rest)
    {
        std::istringstream in(rest);
        LaunchRule rule;
        rule.line = m_line;
        in >> rule.kernel;
        if (rule.kernel.empty() || rule.kernel.find('=') != std::string::npos)
            fail("candidate.bad-launch", "launch needs a kernel name first, got " + quotedForMessage(rule.kernel));
        name("kernel", rule.kernel);
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
        if (m_c.language == CandidateLanguage::Triton) {
            if (!seen.count("grid") || !seen.count("args"))
                fail("candidate.bad-launch", "launch " + rule.kernel + " needs grid=(..) and args=(..)");
            if (!m_c.launches.empty())
                fail("candidate.bad-launch",
                    "a Triton candidate launches one kernel (Triton compiles one kernel per module); "
                    "the first launch is at line "
                        + std::to_string(m_c.launches.front().line));
        } else if (!seen.count("grid") || !seen.count("block") || !seen.count("args")) {
            fail("candidate.bad-launch", "launch " + rule.kernel + " needs grid=(..), block=(..) and args=(..)");
        }
        m_c.launches.push_back(std::move(rule));
    }

    // "NAME=EXPR" (one '=', NAME an identifier): a Triton constexpr argument.
    static std::optional<ConstexprArg> keywordArg(const std::string& item)
    {
        const auto eq = item.find('=');
        if (eq == std::string::npos || eq + 1 >= item.size() || item[eq + 1] == '=' || eq == 0
            || std::string("<>!").find(item[eq - 1]) != std::string::npos)
            return std::nullopt;
        const std::string name = trim(std::string_view(item).substr(0, eq));
        if (nameProblem(name) != "")
            return std::nullopt;
        return ConstexprArg { name, trim(std::string_view(item).substr(eq + 1)) };
    }

    void assign(LaunchRule& rule, const std::string& key, const std::string& body)
    {
        const std::string where = "line " + std::to_string(m_line);
        const bool triton = m_c.language == CandidateLanguage::Triton;
        if (triton && (key == "block" || key == "smem"))
            fail("candidate.bad-launch",
                key
                    + "= does not apply to a Triton launch: the block is num_warps * 32 threads and Triton's compiler "
                      "sizes the shared memory");
        if (triton && (key == "num_warps" || key == "num_stages")) {
            const std::string value = trim(body);
            if (value.empty())
                fail("candidate.bad-launch", key + "=() is empty");
            usedSymbols(value, m_c.fileName, where);
            (key == "num_warps" ? rule.numWarps : rule.numStages) = value;
            return;
        }
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
            for (auto& item : splitTopLevel(body)) {
                if (item.empty())
                    fail("candidate.bad-launch", "empty argument in args=(" + body + ")");
                if (triton) {
                    if (auto keyword = keywordArg(item)) {
                        if (keyword->expression.empty())
                            fail("candidate.bad-launch", "constexpr " + keyword->name + "= has no value");
                        for (const auto& c : rule.constexprs)
                            if (c.name == keyword->name)
                                fail("candidate.bad-launch", "constexpr " + keyword->name + " is given twice");
                        usedSymbols(keyword->expression, m_c.fileName, where);
                        rule.constexprs.push_back(std::move(*keyword));
                        continue;
                    }
                    if (!rule.constexprs.empty())
                        fail("candidate.bad-launch",
                            "argument \"" + item
                                + "\" follows a NAME=VALUE constexpr: positional arguments come first");
                }
                LaunchArg arg;
                if (const auto typed = typedArg(item)) {
                    const auto type = parseDType(typed->second);
                    if (!type)
                        fail("candidate.bad-launch", "unknown type \"" + typed->second + "\" in \"" + item + "\"");
                    arg.expression = typed->first;
                    arg.type = *type;
                    arg.typeGiven = true;
                } else {
                    arg.expression = item;
                }
                usedSymbols(arg.expression, m_c.fileName, where);
                rule.args.push_back(std::move(arg));
            }
        } else {
            fail("candidate.bad-launch",
                "unknown launch key \"" + key + "\" (expected "
                    + (triton ? "grid, num_warps, num_stages, args" : "grid, block, smem, args") + ")");
        }
    }

    Candidate& m_c;
    int m_line;
};

} // namespace

const char* candidateLanguageName(CandidateLanguage language)
{
    return language == CandidateLanguage::Triton ? "triton" : "cuda";
}

CandidateLanguage candidateLanguageOf(const std::string& fileName)
{
    const bool py = fileName.size() >= 3 && fileName.compare(fileName.size() - 3, 3, ".py") == 0;
    return py ? CandidateLanguage::Triton : CandidateLanguage::Cuda;
}

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

namespace {

bool allows(const Tunable& t, std::int64_t value)
{
    return std::find(t.values.begin(), t.values.end(), value) != t.values.end();
}

} // namespace

TunableValues Candidate::withOverrides(const TunableValues& overrides) const
{
    for (const auto& [name, value] : overrides) {
        const auto* t = tunable(name);
        if (!t)
            throw Error("candidate.unknown-tunable", fileName, name, "the candidate declares no tunable " + name);
        if (!allows(*t, value))
            throw Error("candidate.value-not-allowed", fileName, name,
                std::to_string(value) + " is not an allowed value of " + name);
    }
    return applicable(overrides);
}

TunableValues Candidate::applicable(const TunableValues& requested) const
{
    auto values = defaults();
    for (const auto& [name, value] : requested)
        if (const auto* t = tunable(name); t && allows(*t, value))
            values[name] = value;
    return values;
}

TunableValues Candidate::macros(const TunableValues& values) const
{
    TunableValues out;
    for (const auto& [name, value] : values)
        if (const auto* t = tunable(name); !t || !t->compilerFlag)
            out[name] = value;
    return out;
}

std::vector<std::string> Candidate::compilerOptions(const TunableValues& values) const
{
    std::vector<std::string> options;
    for (const auto& t : tunables) {
        if (!t.compilerFlag)
            continue;
        const auto it = values.find(t.name);
        const auto* flag = compilerFlag(t.name);
        if (!flag)
            continue;
        for (auto& option : compilerFlagOptions(*flag, it == values.end() ? t.defaultValue : it->second))
            options.push_back(std::move(option));
    }
    return options;
}

Candidate parseCandidate(std::string source, std::string fileName)
{
    Candidate c;
    c.fileName = std::move(fileName);
    c.language = candidateLanguageOf(c.fileName);
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
        // Python comments start with '#'; in CUDA '#' starts a preprocessor line.
        const std::string_view opener = c.language == CandidateLanguage::Triton ? "#" : "//";
        const auto slashes = line.find(opener);
        if (slashes == std::string::npos)
            continue;
        std::string comment = trim(std::string_view(line).substr(slashes + opener.size()));
        if (comment.rfind(kMarker, 0) != 0)
            continue;
        comment = trim(std::string_view(comment).substr(kMarker.size()));
        DirectiveParser(c, number).parse(comment);
    }
    if (c.launches.empty())
        throw Error("candidate.no-launch", c.fileName, {},
            std::string("no \"") + (c.language == CandidateLanguage::Triton ? "#" : "//")
                + " @kl launch\" line: the candidate must say how its kernel is launched");
    std::set<std::string> scratchNames;
    for (const auto& s : c.scratch) {
        if (!scratchNames.insert(s.name).second)
            throw Error("candidate.duplicate", c.fileName, "line " + std::to_string(s.line),
                "scratch buffer " + s.name + " is declared twice");
        if (c.tunable(s.name))
            throw Error("candidate.duplicate", c.fileName, "line " + std::to_string(s.line),
                "scratch buffer " + s.name + " has the name of a tunable");
    }
    return c;
}

Candidate loadCandidate(const std::string& path)
{
    return parseCandidate(readInputFile(path, kMaxCandidateSourceBytes, "candidate"), path);
}

} // namespace kl

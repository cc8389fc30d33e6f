// A recipe as the `kernelloop-cli tune` line that runs it, and back. One table of options serves
// both directions, so that what is rendered is exactly what is parsed.
#include "core/model/error.h"
#include "core/pool/runner_endpoint.h"
#include "core/runnerclient/shell_words.h"
#include "core/session/session_recipe.h"

#include <cctype>
#include <cstdio>
#include <functional>
#include <vector>

namespace kl::session {

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& message)
{
    throw Error("session.bad-command-line", {}, where, message);
}

// The shortest text that reads back as the same double.
std::string number(double v)
{
    char buf[64];
    for (const int digits : { 15, 17 }) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (std::stod(buf) == v)
            break;
    }
    return buf;
}

template <class T> T parsed(const std::string& flag, const std::string& text)
{
    try {
        std::size_t used = 0;
        T value {};
        if constexpr (std::is_same_v<T, double>)
            value = std::stod(text, &used);
        else if constexpr (std::is_same_v<T, std::uint64_t>)
            value = std::stoull(text, &used);
        else
            value = T(std::stoll(text, &used));
        if (used == text.size())
            return value;
    } catch (const std::exception&) {
    }
    bad(flag, "\"" + text + "\" is not a number");
}

// "90", "90s", "10m", "1h", as tune's --time reads it.
double seconds(const std::string& text)
{
    if (text.empty())
        bad("--time", "needs a duration");
    const char unit = text.back();
    const double scale = unit == 'h' ? 3600.0 : unit == 'm' ? 60.0 : 1.0;
    return scale
        * parsed<double>(
            "--time", std::isdigit(static_cast<unsigned char>(unit)) ? text : text.substr(0, text.size() - 1));
}

struct Option {
    const char* flag;
    std::function<std::string(const SessionRecipe&)> get;
    std::function<void(SessionRecipe&, const std::string&)> set;
    bool isSwitch = false; // no value: present means true
};

#define KL_TEXT(flag, field)                                                                                           \
    Option                                                                                                             \
    {                                                                                                                  \
        flag, [](const SessionRecipe& r) { return r.field; },                                                          \
            [](SessionRecipe& r, const std::string& v) { r.field = v; }                                                \
    }
#define KL_NUMBER(flag, field, T)                                                                                      \
    Option                                                                                                             \
    {                                                                                                                  \
        flag, [](const SessionRecipe& r) { return number(double(r.field)); },                                          \
            [](SessionRecipe& r, const std::string& v) { r.field = parsed<T>(flag, v); }                               \
    }

const std::vector<Option>& options()
{
    static const std::vector<Option> table {
        Option { "--proposer", [](const SessionRecipe& r) { return std::string(proposerChoiceName(r.proposer)); },
            [](SessionRecipe& r, const std::string& v) {
                const auto c = parseProposerChoice(v);
                if (!c)
                    bad("--proposer", "\"" + v + "\" is not tuner, llm or llm+tuner");
                r.proposer = *c;
            } },
        KL_TEXT("--strategy", strategy),
        KL_NUMBER("--budget", budget, int),
        Option { "--time", [](const SessionRecipe& r) { return number(r.wallSeconds); },
            [](SessionRecipe& r, const std::string& v) { r.wallSeconds = seconds(v); } },
        KL_NUMBER("--target", targetSpeedup, double),
        KL_NUMBER("--patience", patience, int),
        KL_NUMBER("--min-gain", minGain, double),
        KL_NUMBER("--max-failed-rounds", maxFailedRounds, int),
        KL_NUMBER("--candidates", candidatesPerRound, int),
        KL_TEXT("--metrics", metrics),
        Option { "--mode",
            [](const SessionRecipe& r) { return std::string(r.mode == LoopMode::Review ? "review" : "auto"); },
            [](SessionRecipe& r, const std::string& v) {
                if (v != "auto" && v != "review")
                    bad("--mode", "\"" + v + "\" is not auto or review");
                r.mode = v == "review" ? LoopMode::Review : LoopMode::Auto;
            } },
        KL_TEXT("--label", label),
        KL_TEXT("--db", db),
        // --runner takes an endpoint (repeatable; rendered after this table) or the local runner: its path
        // or a command line (one quoted word here, so that it reads back as one).
        Option { "--runner", [](const SessionRecipe& r) { return r.runner; },
            [](SessionRecipe& r, const std::string& v) {
                if (pool::namesEndpoint(v))
                    r.runners.push_back(v);
                else
                    r.runner = v;
            } },
        KL_TEXT("--runners-file", runnersFile),
        KL_TEXT("--remote-runner", remoteRunner),
        Option { "--ssh-option", [](const SessionRecipe&) { return std::string(); },
            [](SessionRecipe& r, const std::string& v) { r.sshOptions.push_back(v); } },
        KL_TEXT("--slurm-gres", slurmGres),
        KL_NUMBER("--device", device, int),
        KL_NUMBER("--trials", trials, int),
        KL_NUMBER("--timing-interval", timingInterval, double),
        KL_TEXT("--profile-candidates", profileCandidates),
        KL_NUMBER("--compile-ahead", compileAhead, int),
        KL_NUMBER("--job-timeout", jobTimeoutSeconds, int),
        KL_NUMBER("--seed", seed, std::uint64_t),
        KL_TEXT("--start", start),
        KL_TEXT("--language", language),
        Option { "--no-cache", [](const SessionRecipe& r) { return std::string(r.noCache ? "1" : ""); },
            [](SessionRecipe& r, const std::string&) { r.noCache = true; }, true },
        KL_TEXT("--provider", llm.provider),
        KL_TEXT("--base-url", llm.baseUrl),
        KL_TEXT("--model", llm.model),
        KL_TEXT("--key-env", llm.keyEnv),
        KL_TEXT("--key-file", llm.keyFile),
        KL_TEXT("--anthropic-version", llm.anthropicVersion),
        KL_TEXT("--timeout", llm.timeout),
        KL_TEXT("--connect-timeout", llm.connectTimeout),
        KL_TEXT("--attempts", llm.attempts),
        KL_TEXT("--roles", llm.roles),
        KL_NUMBER("--temperature", llm.temperature, double),
        KL_NUMBER("--max-tokens", llm.maxTokens, int),
        KL_TEXT("--prompts", llm.prompts),
        KL_NUMBER("--token-budget", llm.tokenBudget, std::int64_t),
        KL_NUMBER("--fix-attempts", llm.fixAttempts, int),
        KL_NUMBER("--tuner-rounds", llm.tunerRounds, int),
    };
    return table;
}

#undef KL_TEXT
#undef KL_NUMBER

std::vector<std::string> words(const std::string& line)
{
    auto split = splitShellWords(line);
    if (!split.problem.empty())
        bad({}, split.problem);
    return std::move(split.words);
}

const Option* find(const std::string& flag)
{
    const std::string name = flag == "-k" ? "--candidates" : flag;
    for (const auto& o : options())
        if (name == o.flag)
            return &o;
    return nullptr;
}

} // namespace

std::string commandLine(const SessionRecipe& recipe)
{
    const SessionRecipe defaults;
    std::string line = "kernelloop-cli tune " + shellQuoted(recipe.problem);
    for (const auto& o : options()) {
        const auto value = o.get(recipe);
        if (value == o.get(defaults))
            continue;
        line += std::string(" ") + o.flag;
        if (!o.isSwitch)
            line += " " + shellQuoted(value);
    }
    for (const auto& e : recipe.runners)
        line += " --runner " + shellQuoted(e);
    for (const auto& o : recipe.sshOptions)
        line += " --ssh-option " + shellQuoted(o);
    return line;
}

SessionRecipe parseCommandLine(const std::string& line)
{
    auto args = words(line);
    std::size_t i = 0;
    if (i < args.size() && (args[i] == "kernelloop-cli" || args[i].ends_with("/kernelloop-cli")))
        ++i;
    if (i >= args.size() || args[i] != "tune")
        bad({}, "not a `kernelloop-cli tune` line");
    ++i;
    SessionRecipe recipe;
    bool problem = false;
    for (; i < args.size(); ++i) {
        auto arg = args[i];
        std::optional<std::string> inlineValue;
        if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
            inlineValue = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        }
        if (arg.empty() || arg[0] != '-') {
            if (problem)
                bad(arg, "a second problem file");
            recipe.problem = arg;
            problem = true;
            continue;
        }
        const auto* o = find(arg);
        if (!o)
            bad(arg, "not an option of tune that a recipe holds (headers and keys are never part of one)");
        if (o->isSwitch) {
            o->set(recipe, {});
            continue;
        }
        if (!inlineValue && i + 1 >= args.size())
            bad(arg, "needs a value");
        o->set(recipe, inlineValue ? *inlineValue : args[++i]);
    }
    if (!problem)
        bad({}, "no problem file");
    return recipe;
}

} // namespace kl::session

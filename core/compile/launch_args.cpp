#include "core/compile/launch_args.h"

#include "core/model/error.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <sstream>

namespace kl {

namespace {

int scalarBytes(const std::string& type)
{
    static const std::array<std::pair<const char*, int>, 15> sizes { {
        { ".u8", 1 },
        { ".s8", 1 },
        { ".b8", 1 },
        { ".u16", 2 },
        { ".s16", 2 },
        { ".b16", 2 },
        { ".f16", 2 },
        { ".u32", 4 },
        { ".s32", 4 },
        { ".b32", 4 },
        { ".f32", 4 },
        { ".u64", 8 },
        { ".s64", 8 },
        { ".b64", 8 },
        { ".f64", 8 },
    } };
    for (const auto& [name, bytes] : sizes)
        if (type == name)
            return bytes;
    return 0;
}

bool isNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }

// ".param .u64 .ptr .global .align 1 NAME" or ".param .align 2 .b8 NAME[2]"
std::optional<KernelParameter> parameter(const std::string& text)
{
    std::istringstream in(text);
    std::string token;
    KernelParameter p;
    std::string last;
    while (in >> token) {
        if (const int bytes = scalarBytes(token); bytes > 0 && p.ptxType.empty()) {
            p.ptxType = token;
            p.bytes = bytes;
        }
        last = token;
    }
    if (p.ptxType.empty())
        return std::nullopt;
    if (const auto open = last.find('['); open != std::string::npos) {
        const auto count = std::atoi(last.c_str() + open + 1);
        if (count <= 0)
            return std::nullopt;
        p.bytes *= count;
    }
    return p;
}

std::string describe(const std::vector<KernelParameter>& parameters)
{
    std::string text;
    for (const auto& p : parameters)
        text += (text.empty() ? "" : ", ") + p.ptxType + " " + std::to_string(p.bytes) + " B";
    return text.empty() ? "none" : text;
}

std::string describe(const LaunchRule& rule, const PlannedLaunch& launch)
{
    std::string text;
    for (std::size_t i = 0; i < launch.args.size(); ++i) {
        const auto& arg = launch.args[i];
        const std::string kind
            = arg.kind == PlannedArg::Kind::Buffer ? std::string("pointer") : std::string(dtypeName(arg.type));
        text += (text.empty() ? "" : ", ") + (i < rule.args.size() ? rule.args[i].expression : std::string("?")) + " ("
            + kind + " " + std::to_string(argumentBytes(arg)) + " B)";
    }
    return text.empty() ? "none" : text;
}

} // namespace

std::optional<std::vector<KernelParameter>> ptxEntryParameters(const std::string& ptx, const std::string& loweredName)
{
    const std::string marker = ".entry " + loweredName;
    for (auto at = ptx.find(marker); at != std::string::npos; at = ptx.find(marker, at + 1)) {
        auto pos = at + marker.size();
        if (pos < ptx.size() && isNameChar(ptx[pos]))
            continue; // a longer name that starts the same
        while (pos < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[pos])))
            ++pos;
        std::vector<KernelParameter> parameters;
        if (pos >= ptx.size() || ptx[pos] != '(')
            return parameters; // an entry without a parameter list takes none
        const auto close = ptx.find(')', pos);
        if (close == std::string::npos)
            return std::nullopt;
        const std::string list = ptx.substr(pos + 1, close - pos - 1);
        std::size_t start = 0;
        while (start <= list.size()) {
            const auto comma = std::min(list.find(',', start), list.size());
            const std::string item = list.substr(start, comma - start);
            if (item.find(".param") != std::string::npos) {
                const auto p = parameter(item);
                if (!p)
                    return std::nullopt; // a form we do not know: say nothing rather than something wrong
                parameters.push_back(*p);
            }
            start = comma + 1;
        }
        return parameters;
    }
    return std::nullopt;
}

int argumentBytes(const PlannedArg& arg)
{
    return arg.kind == PlannedArg::Kind::Buffer ? 8 : static_cast<int>(dtypeSize(arg.type));
}

void checkLaunchArgs(const Candidate& candidate, const LaunchPlan& plan, const CompileResult& compiled)
{
    for (std::size_t i = 0; i < plan.launches.size() && i < candidate.launches.size(); ++i) {
        const auto& launch = plan.launches[i];
        const auto& rule = candidate.launches[i];
        const auto* kernel = compiled.kernel(launch.kernel);
        if (!kernel || !kernel->parametersKnown)
            continue;
        const auto& parameters = kernel->parameters;
        // Triton appends its scratch pointers after the declared arguments; the launch passes them.
        const std::size_t implicit = kernel->implicitParameters.size();
        bool same = parameters.size() == launch.args.size() + implicit;
        for (std::size_t a = 0; same && a < parameters.size(); ++a)
            same = parameters[a].bytes == (a < launch.args.size() ? argumentBytes(launch.args[a]) : 8);
        if (same)
            continue;
        throw Error("plan.args-mismatch", candidate.fileName, "line " + std::to_string(rule.line),
            "launch of " + launch.kernel + " passes " + std::to_string(launch.args.size()) + " argument"
                + (launch.args.size() == 1 ? "" : "s") + " [" + describe(rule, launch) + "] but the kernel takes "
                + std::to_string(parameters.size()) + " parameter" + (parameters.size() == 1 ? "" : "s") + " ["
                + describe(parameters) + "]; give args=(...) one argument per parameter, of its size (\"N as i64\" for "
                + "a long long)");
    }
}

} // namespace kl

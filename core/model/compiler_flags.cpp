#include "core/model/compiler_flags.h"

#include "core/model/candidate.h"
#include "core/model/error.h"

namespace kl {

const std::vector<CompilerFlag>& compilerFlags()
{
    // Only options that change the code NVRTC and ptxas generate; each is also on the compiler's
    // allow-list for a problem's extra options (core/compile/compiler.cpp).
    static const std::vector<CompilerFlag> flags {
        { "use_fast_math", "fast approximate math (-use_fast_math: ftz, approximate div/sqrt, fused mul-add)", 0, 1 },
        { "lineinfo", "source line info in the PTX and cubin (-lineinfo: what links SASS and samples to lines)", 0, 1 },
        { "maxrregcount", "registers per thread capped by ptxas (-maxrregcount=N; 0: no cap)", 0, 255 },
        { "extra_device_vectorization", "more aggressive vectorisation (--extra-device-vectorization)", 0, 1 },
        { "ftz", "denormals flushed to zero (--ftz)", 0, 1 },
        { "prec_div", "IEEE division (--prec-div; 0: approximate)", 0, 1 },
        { "prec_sqrt", "IEEE square root (--prec-sqrt; 0: approximate)", 0, 1 },
        { "fmad", "multiply and add fused (--fmad)", 0, 1 },
        { "ptxas_opt_level", "ptxas optimisation level (--ptxas-options=-ON)", 0, 3 },
    };
    return flags;
}

const CompilerFlag* compilerFlag(std::string_view name)
{
    for (const CompilerFlag& flag : compilerFlags())
        if (flag.name == name)
            return &flag;
    return nullptr;
}

std::string compilerFlagValueProblem(const CompilerFlag& flag, std::int64_t value)
{
    const std::string name(flag.name);
    if (flag.name == "maxrregcount") {
        // ptxas refuses fewer than 16 registers per thread; 255 is the architecture's most.
        if (value == 0 || (value >= 16 && value <= 255))
            return {};
        return name + " takes 0 (no cap) or 16..255, not " + std::to_string(value);
    }
    if (value >= flag.lowest && value <= flag.highest)
        return {};
    return name + " takes " + std::to_string(flag.lowest) + ".." + std::to_string(flag.highest) + ", not "
        + std::to_string(value);
}

std::vector<std::string> compilerFlagOptions(const CompilerFlag& flag, std::int64_t value)
{
    const auto onOff = [&](std::string_view option) {
        return std::vector<std::string> { std::string(option) + (value != 0 ? "=true" : "=false") };
    };
    if (flag.name == "use_fast_math")
        return value != 0 ? std::vector<std::string> { "-use_fast_math" } : std::vector<std::string> {};
    if (flag.name == "lineinfo")
        return value != 0 ? std::vector<std::string> { "-lineinfo" } : std::vector<std::string> {};
    if (flag.name == "maxrregcount")
        return value > 0 ? std::vector<std::string> { "-maxrregcount=" + std::to_string(value) }
                         : std::vector<std::string> {};
    if (flag.name == "extra_device_vectorization")
        return value != 0 ? std::vector<std::string> { "--extra-device-vectorization" } : std::vector<std::string> {};
    if (flag.name == "ftz")
        return onOff("--ftz");
    if (flag.name == "prec_div")
        return onOff("--prec-div");
    if (flag.name == "prec_sqrt")
        return onOff("--prec-sqrt");
    if (flag.name == "fmad")
        return onOff("--fmad");
    if (flag.name == "ptxas_opt_level")
        return { "--ptxas-options=-O" + std::to_string(value) };
    return {};
}

std::string compilerOptionsText(const std::vector<std::string>& options)
{
    std::string text;
    for (const std::string& option : options)
        text += (text.empty() ? "" : " ") + option;
    return text;
}

std::string compilerFlagsText(
    const std::string& source, const std::string& fileName, const std::map<std::string, std::int64_t>& values)
{
    if (source.find("@kl flag") == std::string::npos)
        return {}; // most candidates: no parse
    try {
        const Candidate candidate = parseCandidate(source, fileName);
        return compilerOptionsText(candidate.compilerOptions(candidate.applicable(values)));
    } catch (const Error&) {
        return {};
    }
}

} // namespace kl

#include "cli/cli_support.h"

#include "core/model/error.h"

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <unistd.h>

namespace kl::cli {

namespace fs = std::filesystem;

fs::path storePath(const std::string& option)
{
    if (!option.empty())
        return option;
    if (const char* env = std::getenv("KERNELLOOP_DB"); env && *env)
        return env;
    fs::path base;
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
        base = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = fs::path(home) / ".local/share";
    else
        base = fs::temp_directory_path();
    fs::create_directories(base / "kernelloop");
    return base / "kernelloop" / "kernelloop.db";
}

fs::path runnerPath(const std::string& option)
{
    if (!option.empty())
        return option;
    if (const char* env = std::getenv("KERNELLOOP_RUNNER"); env && *env)
        return env;
    std::error_code ec;
    const auto self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        for (const auto& candidate : { self.parent_path() / "kernelloop-runner",
                                       self.parent_path().parent_path() / "runner" / "kernelloop-runner" })
            if (fs::exists(candidate))
                return candidate;
    }
    return "kernelloop-runner"; // from PATH
}

TunableValues parseSets(const std::vector<std::string>& sets)
{
    static const std::regex form(R"(([A-Za-z_][A-Za-z0-9_]*)=(-?\d+))");
    TunableValues values;
    for (const auto& s : sets) {
        std::smatch m;
        if (!std::regex_match(s, m, form))
            throw Error("cli.bad-set", {}, "--set " + s, "expected NAME=INTEGER, such as THREADS=256");
        values[m[1]] = std::stoll(m[2]);
    }
    return values;
}

double parseDuration(const std::string& text)
{
    static const std::regex form(R"((\d+(?:\.\d+)?)\s*(s|m|h|min)?)");
    std::smatch m;
    if (!std::regex_match(text, m, form))
        throw Error("cli.bad-duration", {}, "--time " + text, "expected a duration such as 90s, 10m or 1h");
    const double v = std::stod(m[1]);
    const std::string unit = m[2];
    return unit == "h" ? v * 3600 : (unit == "m" || unit == "min") ? v * 60 : v;
}

std::string fixed(double value, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

std::string fixed(const std::optional<double>& value, int decimals, const std::string& absent)
{
    return value ? fixed(*value, decimals) : absent;
}

std::string tunablesText(const TunableValues& values)
{
    std::string s;
    for (const auto& [k, v] : values)
        s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
    return s;
}

} // namespace kl::cli

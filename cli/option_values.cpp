#include "cli/option_values.h"

#include "core/model/error.h"
#include "core/model/names.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

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
    TunableValues values;
    for (const auto& s : sets) {
        const auto where = "--set " + (s.size() > 60 ? s.substr(0, 60) + "..." : s);
        const auto eq = s.find('=');
        const std::string name = s.substr(0, eq);
        const std::string value = eq == std::string::npos ? std::string() : s.substr(eq + 1);
        if (eq == std::string::npos || !isIdentifier(name) || value.empty())
            throw Error("cli.bad-set", {}, where, "expected NAME=INTEGER, such as THREADS=256");
        std::int64_t number = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
        if (ec == std::errc::result_out_of_range
            || (ec == std::errc() && end == value.data() + value.size()
                && (number > kMaxTunableMagnitude || number < -kMaxTunableMagnitude)))
            throw Error("cli.bad-set", {}, where, value + " is out of range: a tunable's value lies within ±2^53");
        if (ec != std::errc() || end != value.data() + value.size())
            throw Error("cli.bad-set", {}, where, "expected NAME=INTEGER, such as THREADS=256");
        values[name] = number;
    }
    return values;
}

double parseDuration(const std::string& text)
{
    const auto bad = [&text] {
        return Error("cli.bad-duration", {}, "--time " + (text.size() > 60 ? text.substr(0, 60) + "..." : text),
            "expected a duration such as 90s, 10m or 1h");
    };
    std::size_t digits = 0;
    while (digits < text.size() && ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.'))
        ++digits;
    const std::string number = text.substr(0, digits);
    std::string unit = text.substr(digits);
    unit.erase(0, unit.find_first_not_of(' '));
    if (number.empty() || number.front() == '.' || number.back() == '.'
        || std::count(number.begin(), number.end(), '.') > 1
        || !(unit.empty() || unit == "s" || unit == "m" || unit == "h" || unit == "min"))
        throw bad();
    const double v = std::strtod(number.c_str(), nullptr);
    const double seconds = unit == "h" ? v * 3600 : (unit == "m" || unit == "min") ? v * 60 : v;
    if (!std::isfinite(seconds) || seconds > 1e9)
        throw Error("cli.bad-duration", {}, "--time", "a duration of at most 10^9 seconds");
    return seconds;
}

} // namespace kl::cli

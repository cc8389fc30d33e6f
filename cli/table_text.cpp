#include "cli/table_text.h"

#include <cstdio>

namespace kl::cli {

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

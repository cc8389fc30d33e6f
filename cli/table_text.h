#pragma once
// Numbers and tunables as the commands' tables print them.
#include "core/model/candidate.h"
#include "core/model/number_text.h"

#include <optional>
#include <string>

namespace kl::cli {

using kl::fixed; // "%.*f"
std::string fixed(const std::optional<double>& value, int decimals, const std::string& absent = "-");
std::string tunablesText(const TunableValues& values); // "THREADS=256 VEC=8"

} // namespace kl::cli

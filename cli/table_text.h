#pragma once
// Numbers and tunables as the commands' tables print them.
#include "core/model/candidate.h"

#include <optional>
#include <string>

namespace kl::cli {

std::string fixed(double value, int decimals); // "%.*f"
std::string fixed(const std::optional<double>& value, int decimals, const std::string& absent = "-");
std::string tunablesText(const TunableValues& values); // "THREADS=256 VEC=8"

} // namespace kl::cli

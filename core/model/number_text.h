#pragma once
// Numbers as the reports, the prompt and the CLI print them. One place, so that "1.80" and "1.8"
// never mean two things in two panels.
#include <string>

namespace kl {

std::string fixed(double value, int decimals); // "%.*f": fixed(1.8, 2) == "1.80"
std::string shortNumber(double value, int significant = 6); // "%.*g": shortNumber(0.00125) == "0.00125"

} // namespace kl

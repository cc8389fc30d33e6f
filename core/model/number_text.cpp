#include "core/model/number_text.h"

#include <cstdio>

namespace kl {

std::string fixed(double value, int decimals)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

std::string shortNumber(double value, int significant)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.*g", significant, value);
    return text;
}

} // namespace kl

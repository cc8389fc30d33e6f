#include "core/model/geometric_mean.h"

#include <cmath>

namespace kl {

std::optional<double> geometricMean(const std::vector<std::optional<double>>& values)
{
    if (values.empty())
        return std::nullopt;
    double logSum = 0.0;
    for (const auto& value : values) {
        if (!value || !(*value > 0.0) || !std::isfinite(*value))
            return std::nullopt;
        logSum += std::log(*value);
    }
    if (values.size() == 1)
        return values.front(); // exactly, not exp(log(x))
    return std::exp(logSum / static_cast<double>(values.size()));
}

} // namespace kl

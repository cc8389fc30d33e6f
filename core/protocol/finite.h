#pragma once
// A runner's figure that is NaN or infinite reads as absent: readers of the protocol's optional numbers
// (the store, the loop, the figures) treat a non-finite value as "not measured", never as a number.
#include <cmath>
#include <optional>

namespace kl::protocol {

inline std::optional<double> finite(std::optional<double> value)
{
    return value && std::isfinite(*value) ? value : std::nullopt;
}

} // namespace kl::protocol

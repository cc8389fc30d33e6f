#pragma once
// The geometric mean of per-size figures (speedups over several main sizes), as every report of an
// iteration aggregates them: the store's results, the history's figures, the runner's profile policy.
#include <optional>
#include <vector>

namespace kl {

// None when empty or when any value is missing, not positive or not finite; one value is itself.
std::optional<double> geometricMean(const std::vector<std::optional<double>>& values);

} // namespace kl

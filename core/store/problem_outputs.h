#pragma once
// A stored problem's outputs (ProblemRecord::json, the problem file as it was run) as typed values: each
// output's name, dtype and the tolerance the problem file gives its dtype, for readers that explain a
// verification (the Evidence page, `show`). Lenient: what does not read is left out, never thrown.
#include <optional>
#include <string>
#include <vector>

namespace kl::store {

struct StoredOutput {
    std::string name;
    std::string dtype; // as the problem file spells it: "f16"
    // The problem's tolerance for that dtype ("tolerances": {"f16": {"atol", "rtol"}}), when it gives one.
    std::optional<double> atol;
    std::optional<double> rtol;
    bool toleranceGiven = false;
};

std::vector<StoredOutput> storedOutputs(const std::string& problemJson);

} // namespace kl::store

// The stored problem JSON's outputs and their dtypes' tolerances, decoded for readers.
#include "core/store/problem_outputs.h"

#include "core/store/stored_field.h"

namespace kl::store {

std::vector<StoredOutput> storedOutputs(const std::string& problemJson)
{
    std::vector<StoredOutput> outputs;
    const nlohmann::json problem = nlohmann::json::parse(problemJson, nullptr, false);
    if (!problem.is_object() || !problem.contains("outputs") || !problem["outputs"].is_array())
        return outputs;
    const nlohmann::json given = problem.value("tolerances", nlohmann::json::object());
    for (const nlohmann::json& output : problem["outputs"]) {
        const auto dtype = storedField<std::string>(output, "dtype");
        if (!dtype)
            continue;
        StoredOutput o;
        o.dtype = *dtype;
        o.name = storedField<std::string>(output, "name").value_or("");
        // The problem file keys its tolerances by the dtype's name, as the loader reads them.
        if (given.is_object() && given.contains(o.dtype) && given[o.dtype].is_object()) {
            o.toleranceGiven = true;
            o.atol = storedField<double>(given[o.dtype], "atol");
            o.rtol = storedField<double>(given[o.dtype], "rtol");
        }
        outputs.push_back(std::move(o));
    }
    return outputs;
}

} // namespace kl::store

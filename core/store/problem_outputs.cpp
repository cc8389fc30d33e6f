// The stored problem JSON's outputs and their dtypes' tolerances, decoded for readers.
#include "core/store/problem_outputs.h"

#include <nlohmann/json.hpp>

namespace kl::store {

std::vector<StoredOutput> storedOutputs(const std::string& problemJson)
{
    std::vector<StoredOutput> outputs;
    const nlohmann::json problem = nlohmann::json::parse(problemJson, nullptr, false);
    if (!problem.is_object() || !problem.contains("outputs") || !problem["outputs"].is_array())
        return outputs;
    const nlohmann::json given = problem.value("tolerances", nlohmann::json::object());
    const auto number = [](const nlohmann::json& object, const char* key) -> std::optional<double> {
        if (!object.contains(key) || !object[key].is_number())
            return std::nullopt;
        return object[key].get<double>();
    };
    for (const nlohmann::json& output : problem["outputs"]) {
        if (!output.is_object() || !output.contains("dtype") || !output["dtype"].is_string())
            continue;
        StoredOutput o;
        o.dtype = output["dtype"].get<std::string>();
        o.name = output.contains("name") && output["name"].is_string() ? output["name"].get<std::string>() : "";
        // The problem file keys its tolerances by the dtype's name, as the loader reads them.
        if (given.is_object() && given.contains(o.dtype) && given[o.dtype].is_object()) {
            o.toleranceGiven = true;
            o.atol = number(given[o.dtype], "atol");
            o.rtol = number(given[o.dtype], "rtol");
        }
        outputs.push_back(std::move(o));
    }
    return outputs;
}

} // namespace kl::store

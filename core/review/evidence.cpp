#include "core/review/evidence.h"

#include "core/model/dtype.h"
#include "core/model/problem.h"
#include "core/verify/physical_floor.h"

#include <algorithm>
#include <cstdio>

namespace kl::review {

namespace {

std::optional<double> numberAt(const nlohmann::json& object, const char* key)
{
    if (!object.is_object() || !object.contains(key) || !object[key].is_number())
        return std::nullopt;
    return object[key].get<double>();
}

std::string micros(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2f us", value);
    return text;
}

std::string shortNumber(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

} // namespace

std::vector<OutputTolerance> outputTolerances(const std::string& problemJson)
{
    std::vector<OutputTolerance> tolerances;
    const nlohmann::json problem = nlohmann::json::parse(problemJson, nullptr, false);
    if (!problem.is_object() || !problem.contains("outputs") || !problem["outputs"].is_array())
        return tolerances;
    const nlohmann::json given = problem.value("tolerances", nlohmann::json::object());
    for (const nlohmann::json& output : problem["outputs"]) {
        if (!output.is_object() || !output.contains("dtype") || !output["dtype"].is_string())
            continue;
        const std::string dtype = output["dtype"].get<std::string>();
        const std::optional<DType> type = parseDType(dtype);
        if (!type)
            continue;
        const std::string name = output.value("name", std::string());
        auto known = std::find_if(
            tolerances.begin(), tolerances.end(), [&](const OutputTolerance& t) { return t.dtype == dtype; });
        if (known != tolerances.end()) {
            known->outputs.push_back(name);
            continue;
        }
        OutputTolerance t;
        t.dtype = dtype;
        t.outputs.push_back(name);
        const Tolerance fallback = defaultTolerance(*type);
        t.atol = fallback.atol;
        t.rtol = fallback.rtol;
        // The problem file keys its tolerances by the dtype's name, as the loader reads them.
        if (given.is_object() && given.contains(dtype) && given[dtype].is_object()) {
            t.atol = numberAt(given[dtype], "atol").value_or(0.0);
            t.rtol = numberAt(given[dtype], "rtol").value_or(0.0);
            t.fromProblem = true;
        }
        tolerances.push_back(std::move(t));
    }
    return tolerances;
}

std::string toleranceText(const OutputTolerance& tolerance)
{
    std::string names;
    for (const std::string& name : tolerance.outputs)
        names += (names.empty() ? "" : ", ") + name;
    return names + " (" + tolerance.dtype + "): |actual - expected| <= " + shortNumber(tolerance.atol) + " + "
        + shortNumber(tolerance.rtol) + " * |expected| ("
        + (tolerance.fromProblem ? "the problem's" : "the default for " + tolerance.dtype) + ")";
}

std::vector<SizeFloor> floorChecks(const nlohmann::json& timing)
{
    std::vector<SizeFloor> floors;
    if (!timing.is_object() || !timing.contains("cases") || !timing["cases"].is_array())
        return floors;
    for (const nlohmann::json& timedCase : timing["cases"]) {
        if (!timedCase.is_object())
            continue;
        const std::optional<double> median = numberAt(timedCase.value("candidate", nlohmann::json()), "median_us");
        if (!median)
            continue;
        SizeFloor floor;
        floor.size = timedCase.value("label", std::string());
        floor.medianUs = *median;
        floor.copyUs = numberAt(timedCase.value("copy", nlohmann::json()), "median_us");
        if (floor.copyUs && *floor.copyUs >= verify::kFloorMinimumMicros) {
            const verify::FloorCheck check = verify::checkPhysicalFloor(*median, *floor.copyUs);
            floor.verdict = check.below    ? SizeFloor::Verdict::Below
                : *median >= *floor.copyUs ? SizeFloor::Verdict::Above
                                           : SizeFloor::Verdict::WithinSlack;
        }
        floors.push_back(std::move(floor));
    }
    return floors;
}

std::string floorText(const SizeFloor& floor)
{
    if (!floor.copyUs)
        return "no floor check: no same-size copy was timed in this job";
    const std::string versus = micros(floor.medianUs) + (floor.medianUs >= *floor.copyUs ? " >= " : " < ")
        + micros(*floor.copyUs) + ", a same-size device copy";
    switch (floor.verdict) {
    case SizeFloor::Verdict::Above:
        return "above the floor (" + versus + ")";
    case SizeFloor::Verdict::WithinSlack:
        return "at the floor, within the " + std::to_string(int(verify::kFloorSlack * 100 + 0.5)) + "% timing slack ("
            + versus + ")";
    case SizeFloor::Verdict::Below:
        return "BELOW THE FLOOR: faster than memory allows, a skipped-work bug or a wrong byte count (" + versus + ")";
    case SizeFloor::Verdict::NoVerdict:
        break;
    }
    return "no floor verdict: the copy takes " + micros(*floor.copyUs) + ", mostly launch overhead (" + versus + ")";
}

} // namespace kl::review

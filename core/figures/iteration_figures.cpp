#include "core/figures/iteration_figures.h"

#include "core/figures/contenders.h"

#include "core/findings/stall_reasons.h"
#include "core/findings/telemetry.h"
#include "core/store/store.h"

#include <algorithm>

namespace kl::figures {

namespace {

std::optional<double> number(const nlohmann::json& object, const char* key)
{
    if (!object.is_object())
        return std::nullopt;
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number())
        return std::nullopt;
    return it->get<double>();
}

// Stored metric names are "<kernel>/<size>/<metric>"; the first kernel profiled at a size is the
// main one (the runner profiles the main kernel first).
std::optional<double> metricAt(
    const std::map<std::string, double>& metrics, const std::string& size, const std::string& name)
{
    const std::string suffix = "/" + size + "/" + name;
    for (const auto& [key, value] : metrics)
        if (key.size() > suffix.size() && key.ends_with(suffix))
            return value;
    return std::nullopt;
}

void readStatic(const nlohmann::json& compile, IterationFigures& figures)
{
    if (!compile.is_object())
        return;
    const auto telemetry = compile.find("telemetry");
    if (telemetry == compile.end() || !telemetry->is_object())
        return;
    if (const auto registers = number(*telemetry, "registers"); registers && *registers > 0)
        figures.registers = static_cast<int>(*registers);
    if (const auto occupancy = number(*telemetry, "theoretical_occupancy"); occupancy && *occupancy > 0)
        figures.theoreticalOccupancy = *occupancy;
    if (const auto limiter = telemetry->find("occupancy_limiter"); limiter != telemetry->end() && limiter->is_string())
        figures.occupancyLimiter = limiter->get<std::string>();
}

SizeFigures sizeFigures(const nlohmann::json& timedCase, const std::map<std::string, double>& metrics)
{
    SizeFigures size;
    size.size = timedCase.value("label", std::string());
    const nlohmann::json candidate = timedCase.value("candidate", nlohmann::json());
    size.medianUs = number(candidate, "median_us");
    size.p20Us = number(candidate, "p20_us");
    size.p80Us = number(candidate, "p80_us");
    size.baselineUs = number(timedCase.value("baseline", nlohmann::json()), "median_us");
    size.gbps = number(timedCase, "gbps");
    size.pctOfCopy = number(timedCase, "pct_of_copy");
    size.speedup = number(timedCase, "speedup_vs_baseline");
    size.achievedOccupancy = metricAt(metrics, size.size, metric::kAchievedOccupancy);
    for (const StallReason& reason : stallReasons()) {
        if (!reason.isStall)
            continue;
        if (const auto ratio = metricAt(metrics, size.size, metric::stallRatio(reason.name)))
            size.stalls.emplace_back(reason.name, *ratio);
    }
    return size;
}

void addContenders(std::vector<SizeFigures>& sizes, const std::vector<Contenders>& contenders)
{
    for (const Contenders& c : contenders)
        for (SizeFigures& size : sizes)
            if (size.size == c.size) {
                size.eagerUs = c.eagerUs;
                size.torchCompileUs = c.torchCompileUs;
                size.speedupVsEager = c.speedupVsEager;
                size.speedupVsCompile = c.speedupVsCompile;
                size.torchCompileError = c.torchCompileError;
            }
}

} // namespace

const SizeFigures* IterationFigures::atSize(const std::string& size) const
{
    const auto it = std::find_if(sizes.begin(), sizes.end(), [&](const SizeFigures& s) { return s.size == size; });
    return it == sizes.end() ? nullptr : &*it;
}

IterationFigures figuresOf(const store::IterationDetail& detail)
{
    IterationFigures figures;
    figures.index = detail.row.index;
    figures.status = detail.row.status;
    figures.category = detail.row.category.empty() ? detail.row.state : detail.row.category;
    figures.passed = detail.row.status == "ok" && detail.row.category == "passed";
    figures.proposer = detail.row.proposer;
    if (!detail.result)
        return figures;
    const store::ResultRecord& result = *detail.result;
    readStatic(result.compile, figures);
    const nlohmann::json& timing = result.timing;
    if (timing.is_object() && timing.contains("cases") && timing["cases"].is_array())
        for (const nlohmann::json& timedCase : timing["cases"])
            if (timedCase.is_object())
                figures.sizes.push_back(sizeFigures(timedCase, result.metrics));
    addContenders(figures.sizes, contendersOf(timing));
    return figures;
}

std::vector<IterationFigures> readFigures(const store::Store& store, std::int64_t sessionId)
{
    std::vector<IterationFigures> figures;
    for (const store::IterationRow& row : store.listIterations(sessionId))
        if (const auto detail = store.iteration(sessionId, row.index))
            figures.push_back(figuresOf(*detail));
    return figures;
}

std::vector<std::string> timedSizes(const std::vector<IterationFigures>& figures)
{
    std::vector<std::string> sizes;
    for (const IterationFigures& iteration : figures)
        for (const SizeFigures& size : iteration.sizes)
            if (std::find(sizes.begin(), sizes.end(), size.size) == sizes.end())
                sizes.push_back(size.size);
    return sizes;
}

} // namespace kl::figures

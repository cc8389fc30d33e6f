#include "core/store/runner_result.h"

#include <algorithm>
#include <cmath>

namespace kl::store {

namespace {

std::string textOf(const nlohmann::json& object, const char* key)
{
    if (object.is_object() && object.contains(key) && object[key].is_string())
        return object[key].get<std::string>();
    return {};
}

std::optional<double> numberAt(const nlohmann::json& object, std::initializer_list<const char*> path)
{
    const nlohmann::json* at = &object;
    for (const char* key : path) {
        if (!at->is_object() || !at->contains(key))
            return std::nullopt;
        at = &(*at)[key];
    }
    if (!at->is_number())
        return std::nullopt;
    return at->get<double>();
}

nlohmann::json valueOf(const nlohmann::json& object, const char* key)
{
    if (object.is_object() && object.contains(key))
        return object[key];
    return nullptr;
}

// The geometric mean of the cases that have the figure; none if any case lacks it or it is not positive.
std::optional<double> geometricMean(const std::vector<std::optional<double>>& values)
{
    if (values.empty())
        return std::nullopt;
    double logSum = 0.0;
    for (const auto& value : values) {
        if (!value || *value <= 0.0)
            return values.size() == 1 ? values.front() : std::nullopt;
        logSum += std::log(*value);
    }
    return std::exp(logSum / static_cast<double>(values.size()));
}

} // namespace

ResultRecord resultFromRunnerReply(const nlohmann::json& reply, const std::string& toolkit)
{
    ResultRecord result;
    result.status = textOf(reply, "status");
    result.category = textOf(reply, "category");
    result.detail = textOf(reply, "detail");
    result.verification = valueOf(reply, "verification");
    result.timing = valueOf(reply, "timing");
    result.device = valueOf(reply, "device");
    result.profile = valueOf(reply, "profile");
    result.toolkit = toolkit.empty() ? textOf(result.device, "runtime_toolkit") : toolkit;
    result.smClockMhz = numberAt(reply, { "timing", "sm_clock_mhz" });
    if (!result.smClockMhz)
        result.smClockMhz = numberAt(reply, { "device", "sm_clock_mhz" });

    std::vector<std::optional<double>> median, p20, p80, gbps, pct, speedup;
    if (result.timing.is_object() && result.timing.contains("cases") && result.timing["cases"].is_array()) {
        for (const auto& timedCase : result.timing["cases"]) {
            median.push_back(numberAt(timedCase, { "candidate", "median_us" }));
            p20.push_back(numberAt(timedCase, { "candidate", "p20_us" }));
            p80.push_back(numberAt(timedCase, { "candidate", "p80_us" }));
            gbps.push_back(numberAt(timedCase, { "gbps" }));
            pct.push_back(numberAt(timedCase, { "pct_of_copy" }));
            speedup.push_back(numberAt(timedCase, { "speedup_vs_baseline" }));
            if (const auto cv = numberAt(timedCase, { "candidate", "cv" }))
                result.cv = std::max(result.cv.value_or(0.0), *cv);
        }
    }
    result.medianUs = geometricMean(median);
    result.p20Us = geometricMean(p20);
    result.p80Us = geometricMean(p80);
    result.gbps = geometricMean(gbps);
    result.pctOfCopy = geometricMean(pct);
    result.speedup = geometricMean(speedup);

    if (result.profile.is_object() && result.profile.contains("kernels") && result.profile["kernels"].is_array()) {
        for (const auto& kernel : result.profile["kernels"]) {
            const auto prefix = textOf(kernel, "kernel") + "/" + textOf(kernel, "case") + "/";
            const auto metrics = valueOf(kernel, "metrics");
            if (!metrics.is_object())
                continue;
            for (auto it = metrics.begin(); it != metrics.end(); ++it) {
                if (it.value().is_number())
                    result.metrics[prefix + it.key()] = it.value().get<double>();
            }
        }
    }
    return result;
}

} // namespace kl::store

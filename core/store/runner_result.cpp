#include "core/store/runner_result.h"

#include "core/store/size_results.h"

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

    // The headline figures all come from one size, the first; only the speedup is averaged.
    result.sizes = sizeResultsFromTiming(result.timing);
    if (!result.sizes.empty()) {
        const auto& first = result.sizes.front();
        result.medianUs = first.medianUs;
        result.p20Us = first.p20Us;
        result.p80Us = first.p80Us;
        result.cv = first.cv;
        result.gbps = first.gbps;
        result.pctOfCopy = first.pctOfCopy;
        std::vector<std::optional<double>> speedups;
        for (const auto& size : result.sizes)
            speedups.push_back(size.speedup);
        result.speedup = result.sizes.size() == 1 ? first.speedup : geometricMean(speedups);
    }

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

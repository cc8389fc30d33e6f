#include "core/store/runner_result.h"

#include "core/model/geometric_mean.h"
#include "core/store/size_results.h"

#include <cmath>

namespace kl::store {

namespace {

std::string textOf(const nlohmann::json& object, const char* key)
{
    if (object.is_object() && object.contains(key) && object[key].is_string())
        return object[key].get<std::string>();
    return {};
}

nlohmann::json valueOf(const nlohmann::json& object, const char* key)
{
    if (object.is_object() && object.contains(key))
        return object[key];
    return nullptr;
}

std::optional<double> finite(std::optional<double> value)
{
    return value && std::isfinite(*value) ? value : std::nullopt;
}

// The headline figures all come from one size, the first; only the speedup is averaged.
void takeHeadline(ResultRecord& result)
{
    if (result.sizes.empty())
        return;
    const auto& first = result.sizes.front();
    static_cast<TimingFigures&>(result) = first;
    std::vector<std::optional<double>> speedups;
    for (const auto& size : result.sizes)
        speedups.push_back(size.speedup);
    result.speedup = result.sizes.size() == 1 ? first.speedup : geometricMean(speedups);
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
    result.pcSampling = valueOf(reply, "pc_sampling");
    result.toolkit = toolkit.empty() ? textOf(result.device, "runtime_toolkit") : toolkit;
    result.smClockMhz = finiteAt(reply, { "timing", "sm_clock_mhz" });
    if (!result.smClockMhz)
        result.smClockMhz = finiteAt(reply, { "device", "sm_clock_mhz" });

    result.sizes = sizeResultsFromTiming(result.timing);
    takeHeadline(result);

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

ResultRecord resultFromEvaluateResult(const protocol::EvaluateResult& reply, const std::string& toolkit)
{
    ResultRecord result;
    result.status = protocol::statusName(reply.header.status);
    result.category = protocol::categoryName(reply.category());
    result.detail = reply.header.detail;
    // The stored columns hold the protocol's own JSON of each part: JSON only at the store boundary.
    const nlohmann::json wire = reply;
    result.verification = wire["verification"];
    result.timing = wire["timing"];
    result.device = wire["device"];
    result.profile = wire["profile"];
    result.pcSampling = reply.pcSampling;
    result.toolkit = !toolkit.empty() ? toolkit : reply.device ? reply.device->runtimeToolkit : std::string();
    if (reply.timing && reply.timing->smClockMhz)
        result.smClockMhz = reply.timing->smClockMhz;
    else if (reply.device)
        result.smClockMhz = reply.device->smClockMhz;

    if (reply.timing) {
        for (const auto& timed : reply.timing->cases) {
            SizeResult size;
            size.label = timed.label;
            size.medianUs = finite(timed.candidate.medianUs);
            size.p20Us = finite(timed.candidate.p20Us);
            size.p80Us = finite(timed.candidate.p80Us);
            size.cv = finite(timed.candidate.cv);
            size.gbps = finite(timed.gbps);
            size.pctOfCopy = finite(timed.pctOfCopy);
            size.speedup = finite(timed.speedupVsBaseline);
            size.pctOfSol = finite(timed.pctOfSol);
            size.solBound = timed.solBound;
            result.sizes.push_back(std::move(size));
        }
    }
    takeHeadline(result);

    if (reply.profile) {
        for (const auto& kernel : reply.profile->kernels) {
            const auto prefix = kernel.kernel + "/" + kernel.caseLabel + "/";
            for (const auto& [name, value] : kernel.metrics)
                result.metrics[prefix + name] = value;
        }
    }
    return result;
}

std::optional<protocol::EvaluateResult> storedReply(const ResultRecord& r)
{
    nlohmann::json j = { { "v", protocol::kProtocolVersion }, { "type", "result" }, { "id", "" },
        { "status", r.status }, { "category", r.category }, { "detail", r.detail } };
    for (const auto& [key, value] : { std::pair<const char*, const nlohmann::json*> { "device", &r.device },
             { "verification", &r.verification }, { "timing", &r.timing }, { "profile", &r.profile },
             { "pc_sampling", &r.pcSampling } }) // a cache hit asked for with ";lines=1" answers with its samples
        if (!value->is_null())
            j[key] = *value;
    try {
        return j.get<protocol::EvaluateResult>();
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::optional<protocol::DeviceDescription> storedDevice(const nlohmann::json& device)
{
    if (!device.is_object())
        return std::nullopt;
    try {
        return device.get<protocol::DeviceDescription>();
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

namespace {

template <typename T> std::optional<T> decoded(const nlohmann::json& column)
{
    if (!column.is_object())
        return std::nullopt;
    try {
        return column.get<T>();
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

} // namespace

std::optional<protocol::Timing> storedTiming(const nlohmann::json& timing) { return decoded<protocol::Timing>(timing); }

std::optional<protocol::Verification> storedVerification(const nlohmann::json& verification)
{
    return decoded<protocol::Verification>(verification);
}

namespace {

KernelStatics statics(const nlohmann::json& telemetry)
{
    KernelStatics k;
    if (!telemetry.is_object())
        return k;
    if (const auto registers = telemetry.find("registers");
        registers != telemetry.end() && registers->is_number() && registers->get<double>() > 0)
        k.registers = static_cast<int>(registers->get<double>());
    if (const auto occupancy = telemetry.find("theoretical_occupancy");
        occupancy != telemetry.end() && occupancy->is_number() && occupancy->get<double>() > 0)
        k.theoreticalOccupancy = occupancy->get<double>();
    if (const auto limiter = telemetry.find("occupancy_limiter"); limiter != telemetry.end() && limiter->is_string())
        k.occupancyLimiter = limiter->get<std::string>();
    return k;
}

} // namespace

KernelStatics storedStatics(const nlohmann::json& compile)
{
    return compile.is_object() && compile.contains("telemetry") ? statics(compile["telemetry"]) : KernelStatics {};
}

} // namespace kl::store

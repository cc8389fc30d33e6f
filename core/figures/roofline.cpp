#include "core/figures/roofline.h"

#include "core/findings/telemetry.h"
#include "core/store/runner_result.h"

#include <cmath>

namespace kl::figures {

namespace {

std::optional<double> positive(const nlohmann::json& object, const char* key)
{
    if (!object.is_object() || !object.contains(key) || !object[key].is_number())
        return std::nullopt;
    const double value = object[key].get<double>();
    return std::isfinite(value) && value > 0.0 ? std::optional<double>(value) : std::nullopt;
}

} // namespace

double Roofline::ridge(double gbps) const { return peakGflops && gbps > 0.0 ? *peakGflops / gbps : 0.0; }

Roofline rooflineOf(const store::ResultRecord& result)
{
    Roofline roofline;
    const auto& device = result.device;
    roofline.deviceCopyGbps = positive(device, "copy_bandwidth_gbps");
    const auto sms = positive(device, "sm_count");
    const auto clock = result.smClockMhz ? result.smClockMhz : positive(device, "sm_clock_mhz");
    if (sms && clock && device.contains("compute_capability") && device["compute_capability"].is_string()) {
        const double tflops
            = peakFp32Tflops(static_cast<int>(*sms), *clock, device["compute_capability"].get<std::string>());
        if (tflops > 0.0)
            roofline.peakGflops = tflops * 1e3;
    }
    if (const auto described = store::storedDevice(device); described && described->tensorFp16Tflops > 0.0)
        roofline.measuredTensorGflops = described->tensorFp16Tflops * 1e3;
    const auto& timing = result.timing;
    if (!timing.is_object() || !timing.contains("cases") || !timing["cases"].is_array()) {
        roofline.note = "not timed";
        return roofline;
    }
    bool noFlops = false;
    for (const auto& timed : timing["cases"]) {
        const auto bytes = positive(timed, "bytes");
        const auto median = timed.contains("candidate") ? positive(timed["candidate"], "median_us") : std::nullopt;
        if (!bytes || !median)
            continue;
        const auto flops = positive(timed, "flops");
        if (!flops) {
            noFlops = true;
            continue; // no intensity to place it at
        }
        RooflinePoint point;
        point.size = timed.value("label", "");
        point.bytes = *bytes;
        point.flops = *flops;
        point.intensity = *flops / *bytes;
        point.achievedGflops = *flops / (*median * 1e3);
        point.achievedGbps = *bytes / (*median * 1e3);
        if (timed.contains("copy") && timed["copy"].is_object())
            if (const auto copyUs = positive(timed["copy"], "median_us"))
                point.copyGbps = *bytes / (*copyUs * 1e3);
        point.pctOfSol = positive(timed, "pct_of_sol");
        if (timed.contains("sol_bound") && timed["sol_bound"].is_string())
            point.solBound = parseBound(timed["sol_bound"].get<std::string>());
        if (timed.contains("compute") && timed["compute"].is_string() && !roofline.precision) {
            roofline.precision = parsePrecision(timed["compute"].get<std::string>());
            if (const auto ceiling = positive(timed, "ceiling_tflops");
                ceiling && roofline.precision && *roofline.precision != Precision::Fp32)
                roofline.precisionPeakGflops = *ceiling * 1e3;
        }
        roofline.points.push_back(point);
    }
    if (roofline.points.empty())
        roofline.note = noFlops ? "the problem declares no FLOPs: no arithmetic intensity" : "not timed";
    return roofline;
}

} // namespace kl::figures

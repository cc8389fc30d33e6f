#include "core/figures/roofline.h"

#include "core/findings/telemetry.h"
#include "core/store/records.h"

#include <cmath>

namespace kl::figures {

namespace {

std::optional<double> positive(std::optional<double> value)
{
    return value && std::isfinite(*value) && *value > 0.0 ? value : std::nullopt;
}

} // namespace

double Roofline::ridge(double gbps) const { return peakGflops && gbps > 0.0 ? *peakGflops / gbps : 0.0; }

Roofline rooflineOf(const store::ResultRecord& result)
{
    Roofline roofline;
    if (const auto& device = result.device) {
        roofline.deviceCopyGbps = positive(device->copyBandwidthGbps);
        const auto clock = result.smClockMhz ? result.smClockMhz : positive(device->smClockMhz);
        if (device->smCount > 0 && clock && !device->computeCapability.empty()) {
            const double tflops = peakFp32Tflops(device->smCount, *clock, device->computeCapability);
            if (tflops > 0.0)
                roofline.peakGflops = tflops * 1e3;
        }
        if (device->tensorFp16Tflops > 0.0)
            roofline.measuredTensorGflops = device->tensorFp16Tflops * 1e3;
    }
    const auto& timing = result.timing;
    if (!timing) {
        roofline.note = "not timed";
        return roofline;
    }
    bool noFlops = false;
    for (const protocol::CaseTiming& timed : timing->cases) {
        const auto bytes = positive(timed.bytes);
        const auto median = positive(timed.candidate.medianUs);
        if (!bytes || !median)
            continue;
        const auto flops = positive(timed.flops);
        if (!flops) {
            noFlops = true;
            continue; // no intensity to place it at
        }
        RooflinePoint point;
        point.size = timed.label;
        point.bytes = *bytes;
        point.flops = *flops;
        point.intensity = *flops / *bytes;
        point.achievedGflops = *flops / (*median * 1e3);
        point.achievedGbps = *bytes / (*median * 1e3);
        if (timed.copy)
            if (const auto copyUs = positive(timed.copy->medianUs))
                point.copyGbps = *bytes / (*copyUs * 1e3);
        point.pctOfSol = positive(timed.pctOfSol);
        point.solBound = timed.solBound;
        if (timed.compute && !roofline.precision) {
            roofline.precision = timed.compute;
            roofline.precisionReason = timed.computeReason;
            if (const auto ceiling = positive(timed.ceilingTflops); ceiling && *roofline.precision != Precision::Fp32)
                roofline.precisionPeakGflops = *ceiling * 1e3;
        }
        roofline.points.push_back(point);
    }
    if (roofline.points.empty())
        roofline.note = noFlops ? "the problem declares no FLOPs: no arithmetic intensity" : "not timed";
    return roofline;
}

} // namespace kl::figures

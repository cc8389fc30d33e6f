#include "core/protocol/case_speed_of_light.h"

#include "core/model/precision.h"
#include "core/verify/speed_of_light.h"

namespace kl::protocol {

void addSpeedOfLight(CaseTiming& timed, const DeviceDescription& device, double clockMhz)
{
    double ceiling = 0.0;
    if (timed.compute) {
        ceiling = ceilingTflops(*timed.compute, device.computeCapability, device.smCount, clockMhz);
        if (ceiling > 0.0)
            timed.ceilingTflops = ceiling;
    }
    const std::optional<double> copyUs = timed.copy ? std::optional<double>(timed.copy->medianUs) : std::nullopt;
    const verify::SpeedOfLight sol = verify::speedOfLight(
        timed.candidate.medianUs, timed.bytes, copyUs, device.copyBandwidthGbps, timed.flops, ceiling);
    if (sol.floorUs > 0.0) {
        timed.solUs = sol.floorUs;
        timed.pctOfSol = sol.pctOfSol;
        timed.solBound = sol.bound;
    }
}

} // namespace kl::protocol

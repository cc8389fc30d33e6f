#include "core/verify/speed_of_light.h"

#include <cstdio>

namespace kl::verify {

double computeFloorMicros(double flops, double tflops)
{
    return flops > 0.0 && tflops > 0.0 ? flops / (tflops * 1e6) : 0.0;
}

SpeedOfLight speedOfLight(double medianUs, double bytes, std::optional<double> copyMedianUs, double copyGbps,
    double flops, double ceilingTflops)
{
    SpeedOfLight sol;
    if (copyMedianUs && *copyMedianUs > 0.0)
        sol.memoryFloorUs = *copyMedianUs;
    else if (bytes > 0.0 && copyGbps > 0.0)
        sol.memoryFloorUs = floorMicros(bytes, copyGbps);
    if (const double compute = computeFloorMicros(flops, ceilingTflops); compute > 0.0)
        sol.computeFloorUs = compute;
    const double memory = sol.memoryFloorUs.value_or(0.0);
    const double compute = sol.computeFloorUs.value_or(0.0);
    sol.bound = compute > memory ? Bound::Compute : Bound::Memory;
    sol.floorUs = compute > memory ? compute : memory;
    if (sol.floorUs > 0.0 && medianUs > 0.0)
        sol.pctOfSol = 100.0 * sol.floorUs / medianUs;
    return sol;
}

Balance balanceOf(double bytes, double flops, double ceilingTflops, double copyGbps)
{
    Balance b;
    b.intensity = bytes > 0.0 && flops > 0.0 ? flops / bytes : 0.0;
    b.ridge = ceilingTflops > 0.0 && copyGbps > 0.0 ? ceilingTflops * 1e3 / copyGbps : 0.0;
    b.memoryUs = floorMicros(bytes, copyGbps);
    b.computeUs = computeFloorMicros(flops, ceilingTflops);
    b.bound = b.computeUs > b.memoryUs ? Bound::Compute : Bound::Memory;
    return b;
}

FloorCheck checkComputeFloor(
    double medianMicros, double flops, double ceilingTflops, std::string_view what, double slack)
{
    FloorCheck check;
    check.floorMicros = computeFloorMicros(flops, ceilingTflops);
    check.ratio = check.floorMicros > 0.0 ? medianMicros / check.floorMicros : 0.0;
    if (check.floorMicros < kFloorMinimumMicros || medianMicros <= 0.0)
        return check;
    if (medianMicros < check.floorMicros * (1.0 - slack)) {
        check.below = true;
        char text[240];
        std::snprintf(text, sizeof text,
            "median %.2f us is %.0f%% of the %.*s floor (%.2f us at %.0f TFLOP/s): faster than the arithmetic "
            "allows",
            medianMicros, check.ratio * 100.0, static_cast<int>(what.size()), what.data(), check.floorMicros,
            ceilingTflops);
        check.detail = text;
    }
    return check;
}

} // namespace kl::verify

#include "core/verify/physical_floor.h"

#include <cstdio>

namespace kl::verify {

double floorMicros(double bytes, double gbps) { return gbps > 0.0 ? bytes / (gbps * 1e3) : 0.0; }

double achievedGbps(double bytes, double micros) { return micros > 0.0 ? bytes / (micros * 1e3) : 0.0; }

FloorCheck checkPhysicalFloor(double medianMicros, double copyMedianMicros, double slack)
{
    FloorCheck check;
    check.floorMicros = copyMedianMicros;
    check.ratio = copyMedianMicros > 0.0 ? medianMicros / copyMedianMicros : 0.0;
    if (copyMedianMicros < kFloorMinimumMicros || medianMicros <= 0.0)
        return check;
    if (medianMicros < copyMedianMicros * (1.0 - slack)) {
        check.below = true;
        char text[200];
        std::snprintf(text, sizeof text,
            "median %.2f us is %.0f%% of a same-size device copy (%.2f us): faster than memory allows", medianMicros,
            check.ratio * 100.0, copyMedianMicros);
        check.detail = text;
    }
    return check;
}

} // namespace kl::verify

#pragma once
// The memory floor: no kernel moves its bytes faster than a device-to-device copy of the same
// size. A median under it is a bug in the kernel (it skipped work) or in the problem's byte
// count, never a speedup.
#include <string>

namespace kl::verify {

// Hand-written kernels can beat cuMemcpy by a few percent, and event timing is noisy at a few
// microseconds: only a median more than this fraction under the copy counts as impossible.
constexpr double kFloorSlack = 0.10;
// Below this the copy's own time is mostly launch overhead, not bandwidth: no verdict.
constexpr double kFloorMinimumMicros = 2.0;

// Microseconds to move `bytes` (read + written) at `gbps` (10^9 bytes per second).
double floorMicros(double bytes, double gbps);
// Achieved GB/s for `bytes` in `micros`; 0 when micros is not positive.
double achievedGbps(double bytes, double micros);

struct FloorCheck {
    bool below = false;
    double floorMicros = 0.0; // the same-size copy's time (what the candidate is held to)
    double ratio = 0.0; // candidate median / floor
    std::string detail; // a sentence when below
};

// `copyMedianMicros`: a copy moving the same bytes, timed in the same job.
FloorCheck checkPhysicalFloor(double medianMicros, double copyMedianMicros, double slack = kFloorSlack);

} // namespace kl::verify

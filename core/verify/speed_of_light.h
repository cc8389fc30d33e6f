#pragma once
// Speed of light of one timed size: the time no kernel can beat, the larger of moving its bytes as fast
// as a same-size device copy and doing its FLOPs at the ceiling of the precision they run in. "% of SOL"
// is that floor over the median; the bound says which of the two binds. A median under the compute
// floor is as impossible as one under the copy (physical_floor.h).
#include "core/model/precision.h"
#include "core/verify/physical_floor.h"

#include <optional>
#include <string>
#include <string_view>

namespace kl::verify {

using kl::Bound;
using kl::boundName;
using kl::parseBound;

struct SpeedOfLight {
    std::optional<double> memoryFloorUs; // the same-size copy's median, or bytes ÷ the device's copy
    std::optional<double> computeFloorUs; // flops ÷ the precision's ceiling
    double floorUs = 0.0; // the larger; 0 when neither is known
    Bound bound = Bound::Memory;
    std::optional<double> pctOfSol; // 100 × floor ÷ median
};

// `copyMedianUs`: a copy of the same bytes timed in the same job (else give `copyGbps`, the device's
// copy bandwidth); `ceilingTflops`: the precision's ceiling (0 when unknown: memory only). A figure
// that is not positive counts as unknown.
SpeedOfLight speedOfLight(double medianUs, double bytes, std::optional<double> copyMedianUs, double copyGbps,
    double flops, double ceilingTflops);

// Which floor binds one call before anything is timed (`check`): its arithmetic intensity against the
// ridge point (the ceiling over the copy bandwidth).
struct Balance {
    double intensity = 0.0; // FLOP per byte; 0 without FLOPs
    double ridge = 0.0; // FLOP per byte where the two floors meet; 0 when a figure is unknown
    double memoryUs = 0.0; // bytes ÷ copy
    double computeUs = 0.0; // flops ÷ ceiling
    Bound bound = Bound::Memory;
};
Balance balanceOf(double bytes, double flops, double ceilingTflops, double copyGbps);

// Microseconds to do `flops` at `tflops`; 0 when either is not positive.
double computeFloorMicros(double flops, double tflops);

// The compute floor check: a median more than `slack` under flops ÷ ceiling is below the physical floor
// (the kernel skipped work, the FLOP count is wrong, or the precision is). `what` names the ceiling in
// the sentence ("FP16 tensor").
FloorCheck checkComputeFloor(
    double medianMicros, double flops, double ceilingTflops, std::string_view what, double slack = kFloorSlack);

} // namespace kl::verify

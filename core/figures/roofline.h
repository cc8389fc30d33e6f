#pragma once
// The roofline of one stored iteration: per timed main size, its arithmetic intensity (the problem's
// FLOPs over its bytes, as the client computed them from the problem's expressions) against the
// achieved FLOP/s and bandwidth, with two memory roofs (the copy of the same bytes timed in the same
// job, and the device's 2 GiB copy) and the device's peak FP32 rate as the compute roof.
#include "core/model/precision.h"
#include "core/store/records.h"

#include <optional>
#include <string>
#include <vector>

namespace kl::figures {

struct RooflinePoint {
    std::string size; // "8192x4096"
    double bytes = 0.0; // per call
    double flops = 0.0; // per call; 0 when the problem declares none
    double intensity = 0.0; // FLOP per byte
    double achievedGflops = 0.0; // flops / median
    double achievedGbps = 0.0; // bytes / median
    std::optional<double> copyGbps; // the same-size copy, timed in the same job
    std::optional<double> pctOfSol; // speed of light (the runner's), and the roof it sits under
    std::optional<Bound> solBound;
};

struct Roofline {
    std::vector<RooflinePoint> points; // timing order
    std::optional<double> deviceCopyGbps; // the device's measured 2 GiB device-to-device copy
    std::optional<double> peakGflops; // FP32, from SMs, clock and architecture
    // The ceiling of the precision the problem's FLOPs run in, at the timing's clock (the runner's
    // ceiling_tflops), when it is not FP32's: FP16 tensor for an fp16 GEMM.
    std::optional<Precision> precision;
    std::optional<CeilingReason> precisionReason; // why that precision (the timing's compute_reason)
    std::optional<double> precisionPeakGflops;
    // The runner's mma.sync microbenchmark (FP16 dense, fp32 accumulate), recorded with the device: the
    // tensor ceiling a kernel meets in practice, beside the theoretical one.
    std::optional<double> measuredTensorGflops;
    std::string note; // why nothing is drawn ("not timed", "the problem declares no FLOPs")
    // The intensity where a roof of `gbps` meets the compute peak (0 without a peak).
    double ridge(double gbps) const;
};

Roofline rooflineOf(const store::ResultRecord& result);

} // namespace kl::figures

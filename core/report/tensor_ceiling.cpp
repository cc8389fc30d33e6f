#include "core/report/tensor_ceiling.h"

#include "core/model/precision.h"

#include <cstdio>

namespace kl::report {

std::optional<TensorCeiling> tensorCeilingOf(const protocol::DeviceDescription& device)
{
    TensorCeiling c;
    c.clockMhz = device.tensorFp16ClockMhz > 0.0 ? device.tensorFp16ClockMhz : device.smClockMhz;
    c.theoreticalTflops = ceilingTflops(Precision::Fp16, device.computeCapability, device.smCount, c.clockMhz);
    if (device.tensorFp16Tflops > 0.0)
        c.measuredTflops = device.tensorFp16Tflops;
    if (c.theoreticalTflops <= 0.0 && !c.measuredTflops)
        return std::nullopt;
    return c;
}

std::string tensorCeilingText(const TensorCeiling& c)
{
    char text[160];
    std::string out = "FP16 tensor ceiling ";
    if (c.theoreticalTflops > 0.0) {
        std::snprintf(text, sizeof text, "%.1f TFLOP/s theoretical", c.theoreticalTflops);
        out += text;
    } else {
        out += "(no theoretical figure for this architecture)";
    }
    if (c.measuredTflops && c.theoreticalTflops > 0.0)
        std::snprintf(text, sizeof text, ", %.1f measured (mma.sync, %.0f%%)", *c.measuredTflops,
            100.0 * *c.measuredTflops / c.theoreticalTflops);
    else if (c.measuredTflops)
        std::snprintf(text, sizeof text, ", %.1f TFLOP/s measured (mma.sync)", *c.measuredTflops);
    else
        std::snprintf(text, sizeof text, ", not measured (a runner older than the mma.sync microbenchmark)");
    out += text;
    if (c.clockMhz > 0.0) {
        std::snprintf(text, sizeof text, " at %.0f MHz", c.clockMhz);
        out += text;
    }
    return out;
}

} // namespace kl::report

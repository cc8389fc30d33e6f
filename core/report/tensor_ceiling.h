#pragma once
// A device's FP16 tensor ceiling two ways, side by side: theoretical (SMs × the architecture's dense
// rate per SM per clock × the clock) and measured (the runner's mma.sync microbenchmark, run once per
// device like the copy bandwidth and recorded with the device). For history, show and the GUI alike.
#include "core/protocol/messages.h"

#include <optional>
#include <string>

namespace kl::report {

struct TensorCeiling {
    double theoreticalTflops = 0.0; // 0: an architecture without a table
    std::optional<double> measuredTflops;
    double clockMhz = 0.0; // the measurement's clock (else the device's): both figures are at it
};

// Nothing when neither figure is known (an older runner on an unknown architecture).
std::optional<TensorCeiling> tensorCeilingOf(const protocol::DeviceDescription& device);

// "FP16 tensor ceiling 1070.5 TFLOP/s theoretical, 635.4 measured (mma.sync, 59%) at 1980 MHz"
std::string tensorCeilingText(const TensorCeiling& ceiling);

} // namespace kl::report

#include "runner/copy_bandwidth.h"

#include "core/verify/physical_floor.h"

namespace kl::runner {

double measureCopyBandwidth(const Device& device, Timer& timer)
{
    const std::size_t half = static_cast<std::size_t>(kCopyBandwidthBytes / 2);
    DeviceBuffer source(device.driver(), half);
    DeviceBuffer target(device.driver(), half);
    KL_CU(device.driver(), cuMemsetD32Async, source.pointer(), 0x3c003c00u, half / 4, device.stream());
    const Measurement m = timer.measure(
        [&] { KL_CU(device.driver(), cuMemcpyDtoDAsync, target.pointer(), source.pointer(), half, device.stream()); },
        TimingBudget { 5.0, 20, 40, 20.0 });
    return verify::achievedGbps(static_cast<double>(kCopyBandwidthBytes), m.summary.median);
}

} // namespace kl::runner

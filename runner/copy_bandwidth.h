#pragma once
// The device's copy ceiling for describe: a device-to-device copy of 1 GiB into another 1 GiB
// (2 GiB moved, read + written), timed like a candidate; measured once per process.
#include "runner/timer.h"

#include <cstdint>

namespace kl::runner {

constexpr std::int64_t kCopyBandwidthBytes = std::int64_t { 2 } << 30;

// GB/s (10^9 bytes per second, bytes read + written).
double measureCopyBandwidth(const Device& device, Timer& timer);

} // namespace kl::runner

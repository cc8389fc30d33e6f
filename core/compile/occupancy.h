#pragma once
// Theoretical occupancy without a GPU, through the header-only cuda_occupancy.h.
#include <cstdint>
#include <string>

namespace kl {

// The few device limits occupancy depends on. Defaults: H200 (sm_90), docs/gpu-facts.md.
struct DeviceLimits {
    std::string name = "NVIDIA H200";
    int computeMajor = 9;
    int computeMinor = 0;
    int smCount = 132;
    int maxThreadsPerBlock = 1024;
    int maxThreadsPerSm = 2048;
    int maxBlocksPerSm = 32;
    int warpSize = 32;
    int registersPerSm = 65536;
    int registersPerBlock = 65536;
    std::int64_t sharedPerSm = 233472; // 228 KiB
    std::int64_t sharedPerBlock = 49152; // 48 KiB default
    std::int64_t sharedPerBlockOptin = 232448; // 227 KiB
    std::int64_t reservedSharedPerBlock = 1024;
    std::int64_t l2Bytes = 60 * 1024 * 1024;
    // A typical device of each architecture: sm_75 (T4), sm_80 (A100), sm_86 (RTX 3090), sm_89 (L40S),
    // sm_90 (H200), sm_100 (B200); "sm_90a", "compute_90" and the like map to their base. Throws
    // kl::Error "device.unknown-arch" for anything else.
    static DeviceLimits forArch(const std::string& arch);
};

// Why no more blocks fit on an SM. At full occupancy the limiter is Warps (the hardware's limit).
enum class OccupancyLimiter { Warps, Registers, SharedMemory, Blocks, Barriers, None };
const char* occupancyLimiterName(
    OccupancyLimiter limiter); // "warps", "registers", "shared memory", "blocks", "barriers"

struct Occupancy {
    int blocksPerSm = 0;
    int activeWarpsPerSm = 0;
    int maxWarpsPerSm = 0;
    double theoretical = 0.0; // 0..1
    OccupancyLimiter limiter = OccupancyLimiter::None;
    // Each limit on its own, blocks per SM; kNoLimit where that resource sets none (e.g. no barriers).
    int limitWarps = 0, limitRegisters = 0, limitSharedMemory = 0, limitBlocks = 0, limitBarriers = 0;
    std::int64_t allocatedSharedBytes = 0; // per block, with the driver's reserve and rounding
    std::string error; // non-empty when the launch cannot run at all (too many registers / smem)
    static constexpr int kNoLimit = 2147483647;
};

// Shared memory is static + dynamic; above the 48 KiB default the launch is assumed to opt in
// (cuFuncSetAttribute MAX_DYNAMIC_SHARED_SIZE_BYTES), up to sharedPerBlockOptin.
Occupancy theoreticalOccupancy(const DeviceLimits& device, int threadsPerBlock, int registersPerThread,
    std::int64_t sharedBytesPerBlock, int barriersPerBlock = 1);

} // namespace kl

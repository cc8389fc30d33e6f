#pragma once
// Theoretical occupancy without a GPU, through the header-only cuda_occupancy.h.
#include <cstdint>
#include <string>

namespace kl {

// The few device limits occupancy depends on. Defaults: H200 (sm_90), GPU-NOTES.md.
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
    std::int64_t sharedPerSm = 233472;         // 228 KiB
    std::int64_t sharedPerBlock = 49152;       // 48 KiB default
    std::int64_t sharedPerBlockOptin = 232448; // 227 KiB
    std::int64_t reservedSharedPerBlock = 1024;
    std::int64_t l2Bytes = 60 * 1024 * 1024;
    static DeviceLimits forArch(const std::string& arch); // sm_80, sm_86, sm_89, sm_90 known
};

enum class OccupancyLimiter { Warps, Registers, SharedMemory, Blocks, None };
const char* occupancyLimiterName(OccupancyLimiter limiter); // "warps", "registers", "shared memory", "blocks"

struct Occupancy {
    int blocksPerSm = 0;
    int activeWarpsPerSm = 0;
    int maxWarpsPerSm = 0;
    double theoretical = 0.0; // 0..1
    OccupancyLimiter limiter = OccupancyLimiter::None;
    // Each limit on its own, blocks per SM.
    int limitWarps = 0, limitRegisters = 0, limitSharedMemory = 0, limitBlocks = 0;
    std::string error; // non-empty when the launch cannot run at all (too many registers / smem)
};

Occupancy theoreticalOccupancy(const DeviceLimits& device, int threadsPerBlock, int registersPerThread,
                               std::int64_t sharedBytesPerBlock);

} // namespace kl

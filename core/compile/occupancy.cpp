// Theoretical occupancy through NVIDIA's header-only calculator: the same arithmetic the driver's
// cuOccupancyMaxActiveBlocksPerMultiprocessor does, without a driver. cuda_occupancy.h includes
// only <stddef.h>, <limits.h> and <string.h>.
#include "core/compile/occupancy.h"

#include "core/model/error.h"
#include "core/model/names.h"

#include <cuda_occupancy.h>

#include <algorithm>
#include <array>

namespace kl {

namespace {

DeviceLimits limits(std::string name, int major, int minor, int sms, int threadsPerSm, int blocksPerSm,
    std::int64_t sharedPerSm, std::int64_t optin, std::int64_t reserved, std::int64_t l2)
{
    DeviceLimits d;
    d.name = std::move(name);
    d.computeMajor = major;
    d.computeMinor = minor;
    d.smCount = sms;
    d.maxThreadsPerSm = threadsPerSm;
    d.maxBlocksPerSm = blocksPerSm;
    d.sharedPerSm = sharedPerSm;
    d.sharedPerBlockOptin = optin;
    d.reservedSharedPerBlock = reserved;
    d.l2Bytes = l2;
    return d;
}

std::string blocksText(int threads, int registers, std::int64_t shared)
{
    return std::to_string(threads) + " threads, " + std::to_string(registers) + " registers/thread, "
        + std::to_string(shared) + " B shared memory per block";
}

} // namespace

DeviceLimits DeviceLimits::forArch(const std::string& arch)
{
    // (sm|compute)_DIGITS[a|f], read by hand: a long --arch must not reach stoi or a recursive regex.
    int number = -1;
    const std::size_t underscore = arch.find('_');
    const std::string prefix = arch.substr(0, underscore);
    if (underscore != std::string::npos && (prefix == "sm" || prefix == "compute") && arch.size() <= 16) {
        std::string digits = arch.substr(underscore + 1);
        if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f'))
            digits.pop_back();
        if (!digits.empty() && digits.size() <= 4
            && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
            number = std::stoi(digits);
    }
    constexpr std::int64_t KiB = 1024, MiB = 1024 * 1024;
    switch (number) {
    case 75:
        return limits("NVIDIA T4", 7, 5, 40, 1024, 16, 64 * KiB, 64 * KiB, 0, 4 * MiB);
    case 80:
        return limits("NVIDIA A100", 8, 0, 108, 2048, 32, 164 * KiB, 163 * KiB, KiB, 40 * MiB);
    case 86:
        return limits("NVIDIA GeForce RTX 3090", 8, 6, 82, 1536, 16, 100 * KiB, 99 * KiB, KiB, 6 * MiB);
    case 89:
        return limits("NVIDIA L40S", 8, 9, 142, 1536, 24, 100 * KiB, 99 * KiB, KiB, 96 * MiB);
    case 90:
        return DeviceLimits {}; // H200 (docs/gpu-facts.md, "H200 ceilings")
    case 100:
        return limits("NVIDIA B200", 10, 0, 148, 2048, 32, 228 * KiB, 227 * KiB, KiB, 126 * MiB);
    default:
        throw Error("device.unknown-arch", {}, "arch",
            "no device limits known for " + quotedForMessage(arch)
                + " (known: sm_75, sm_80, sm_86, sm_89, sm_90, sm_100)");
    }
}

const char* occupancyLimiterName(OccupancyLimiter limiter)
{
    switch (limiter) {
    case OccupancyLimiter::Warps:
        return "warps";
    case OccupancyLimiter::Registers:
        return "registers";
    case OccupancyLimiter::SharedMemory:
        return "shared memory";
    case OccupancyLimiter::Blocks:
        return "blocks";
    case OccupancyLimiter::Barriers:
        return "barriers";
    case OccupancyLimiter::None:
        return "none";
    }
    return "none";
}

Occupancy theoreticalOccupancy(const DeviceLimits& device, int threadsPerBlock, int registersPerThread,
    std::int64_t sharedBytesPerBlock, int barriersPerBlock)
{
    Occupancy o;
    o.maxWarpsPerSm = device.maxThreadsPerSm / device.warpSize;
    if (threadsPerBlock <= 0 || threadsPerBlock > device.maxThreadsPerBlock) {
        o.error = std::to_string(threadsPerBlock) + " threads per block; the device allows 1 to "
            + std::to_string(device.maxThreadsPerBlock);
        return o;
    }
    if (registersPerThread < 0 || sharedBytesPerBlock < 0) {
        o.error = "negative registers or shared memory";
        return o;
    }

    cudaOccDeviceProp prop;
    prop.computeMajor = device.computeMajor;
    prop.computeMinor = device.computeMinor;
    prop.maxThreadsPerBlock = device.maxThreadsPerBlock;
    prop.maxThreadsPerMultiprocessor = device.maxThreadsPerSm;
    prop.regsPerBlock = device.registersPerBlock;
    prop.regsPerMultiprocessor = device.registersPerSm;
    prop.warpSize = device.warpSize;
    prop.sharedMemPerBlock = static_cast<std::size_t>(device.sharedPerBlock);
    prop.sharedMemPerMultiprocessor = static_cast<std::size_t>(device.sharedPerSm);
    prop.numSms = device.smCount;
    prop.sharedMemPerBlockOptin = static_cast<std::size_t>(device.sharedPerBlockOptin);
    prop.reservedSharedMemPerBlock = static_cast<std::size_t>(device.reservedSharedPerBlock);

    const auto shared = static_cast<std::size_t>(sharedBytesPerBlock);
    cudaOccFuncAttributes attributes;
    attributes.maxThreadsPerBlock = device.maxThreadsPerBlock;
    attributes.numRegs = registersPerThread;
    attributes.sharedSizeBytes = 0; // static and dynamic are one budget here
    attributes.partitionedGCConfig = PARTITIONED_GC_OFF;
    attributes.shmemLimitConfig
        = sharedBytesPerBlock > device.sharedPerBlock ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
    attributes.maxDynamicSharedSizeBytes = shared;
    attributes.numBlockBarriers = std::max(1, barriersPerBlock);
    cudaOccDeviceState state;
    cudaOccResult result {};
    if (cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attributes, &state, threadsPerBlock, shared)
        != CUDA_OCC_SUCCESS) {
        o.error = "the occupancy calculator does not know compute capability " + std::to_string(device.computeMajor)
            + "." + std::to_string(device.computeMinor);
        return o;
    }

    o.blocksPerSm = result.activeBlocksPerMultiprocessor;
    o.limitWarps = result.blockLimitWarps;
    o.limitRegisters = result.blockLimitRegs;
    o.limitSharedMemory = result.blockLimitSharedMem;
    o.limitBlocks = result.blockLimitBlocks;
    o.limitBarriers = result.blockLimitBarriers;
    o.allocatedSharedBytes = static_cast<std::int64_t>(result.allocatedSharedMemPerBlock);
    const int warpsPerBlock = (threadsPerBlock + device.warpSize - 1) / device.warpSize;
    o.activeWarpsPerSm = o.blocksPerSm * warpsPerBlock;
    o.theoretical = o.maxWarpsPerSm > 0 ? static_cast<double>(o.activeWarpsPerSm) / o.maxWarpsPerSm : 0.0;

    if (o.blocksPerSm == 0) {
        if (o.limitRegisters == 0) {
            o.limiter = OccupancyLimiter::Registers;
            o.error = "cannot launch: " + blocksText(threadsPerBlock, registersPerThread, sharedBytesPerBlock)
                + " needs more registers than an SM has (" + std::to_string(device.registersPerSm)
                + ", at most 255 per thread)";
        } else if (o.limitSharedMemory == 0) {
            o.limiter = OccupancyLimiter::SharedMemory;
            o.error = "cannot launch: " + std::to_string(sharedBytesPerBlock)
                + " B of shared memory per block; a block may have at most "
                + std::to_string(device.sharedPerBlockOptin) + " B";
        } else {
            o.limiter = OccupancyLimiter::Warps;
            o.error = "cannot launch: " + blocksText(threadsPerBlock, registersPerThread, sharedBytesPerBlock);
        }
        return o;
    }
    if (o.activeWarpsPerSm >= o.maxWarpsPerSm) {
        o.limiter = OccupancyLimiter::Warps;
        return o;
    }
    // Ties name the resource an engineer can act on first.
    const std::array<std::pair<int, OccupancyLimiter>, 5> order { {
        { o.limitRegisters, OccupancyLimiter::Registers },
        { o.limitSharedMemory, OccupancyLimiter::SharedMemory },
        { o.limitBarriers, OccupancyLimiter::Barriers },
        { o.limitBlocks, OccupancyLimiter::Blocks },
        { o.limitWarps, OccupancyLimiter::Warps },
    } };
    for (const auto& [limit, limiter] : order)
        if (limit == o.blocksPerSm) {
            o.limiter = limiter;
            break;
        }
    return o;
}

} // namespace kl

#include "runner/clock_reader.h"

#include <dlfcn.h>

namespace kl::runner {

namespace {
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlTemperatureGpu = 0;
using Init = int (*)();
using HandleByUuid = int (*)(const char*, void**);
} // namespace

ClockReader::ClockReader(const std::string& deviceUuid)
{
    m_library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!m_library)
        return;
    auto init = reinterpret_cast<Init>(dlsym(m_library, "nvmlInit_v2"));
    auto byUuid = reinterpret_cast<HandleByUuid>(dlsym(m_library, "nvmlDeviceGetHandleByUUID"));
    m_getClock = reinterpret_cast<GetClock>(dlsym(m_library, "nvmlDeviceGetClockInfo"));
    m_getTemperature = reinterpret_cast<GetClock>(dlsym(m_library, "nvmlDeviceGetTemperature"));
    if (!init || !byUuid || !m_getClock || init() != kNvmlSuccess
        || byUuid(deviceUuid.c_str(), &m_device) != kNvmlSuccess)
        m_device = nullptr;
}

ClockReader::~ClockReader()
{
    // NVML stays initialised for the life of the process; nvmlShutdown at exit buys nothing.
}

std::optional<double> ClockReader::smClockMhz() const
{
    unsigned mhz = 0;
    if (!m_device || m_getClock(m_device, kNvmlClockSm, &mhz) != kNvmlSuccess)
        return std::nullopt;
    return static_cast<double>(mhz);
}

std::optional<double> ClockReader::temperatureC() const
{
    unsigned celsius = 0;
    if (!m_device || !m_getTemperature || m_getTemperature(m_device, kNvmlTemperatureGpu, &celsius) != kNvmlSuccess)
        return std::nullopt;
    return static_cast<double>(celsius);
}

} // namespace kl::runner

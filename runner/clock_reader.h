#pragma once
// The SM clock right now, through NVML opened at run time (libnvidia-ml.so.1). The driver API only
// gives the maximum clock; clocks are not locked on our machines, so results record the real one.
#include <optional>
#include <string>

namespace kl::runner {

class ClockReader {
public:
    explicit ClockReader(const std::string& deviceUuid); // "GPU-…" as the driver spells it
    ~ClockReader();
    ClockReader(const ClockReader&) = delete;
    ClockReader& operator=(const ClockReader&) = delete;

    // Null when NVML is absent or does not answer.
    std::optional<double> smClockMhz() const;
    // The GPU die's temperature (°C), or null: the copy ceiling is re-measured when it moves.
    std::optional<double> temperatureC() const;

private:
    void* m_library = nullptr;
    void* m_device = nullptr;
    using GetClock = int (*)(void*, int, unsigned*);
    GetClock m_getClock = nullptr;
    GetClock m_getTemperature = nullptr; // same shape: (device, which, unsigned*)
};

} // namespace kl::runner

#pragma once
// Step 4 of evaluate: hardware counters through CUPTI's Range Profiler and Profiler Host API
// (CUDA 13), auto range + kernel replay: one range per kernel launch, CUPTI replaying each kernel
// for as many passes as the metric set needs. Never runs while timing.
#include "core/protocol/messages.h"
#include "runner/device.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kl::runner {

class Profiler {
public:
    explicit Profiler(const Device& device);
    ~Profiler();
    Profiler(const Profiler&) = delete;
    Profiler& operator=(const Profiler&) = delete;

    // `runOnce` enqueues the program's launches once and waits for them; `beforePass` runs before each
    // pass the runner replays itself ($KL_PROFILE_REPLAY=user, outside the profiled range; kernel replay,
    // the default, never calls it). `kernelNames` name the
    // launches in order (a range per launch). Never throws for CUPTI trouble: the profile comes
    // back unavailable with the reason, and `detail` says what CUPTI said. `phasesMs` gets where the
    // time went: profile_init (CUPTI and the metric set's configuration, once per runner and set),
    // profile_enable, profile_config (counter data image, SetConfig), profile_replay (the launches
    // with CUPTI's passes and its save/restore of device memory), profile_decode (decode and
    // evaluate), profile_disable.
    protocol::Profile profile(protocol::MetricSet set, const std::function<void()>& runOnce,
        const std::function<void()>& beforePass, const std::vector<std::string>& kernelNames,
        const std::string& caseLabel, std::string& detail, std::map<std::string, double>& phasesMs);

    struct State;

private:
    const Device& m_device;
    std::unique_ptr<State> m_state;
};

} // namespace kl::runner

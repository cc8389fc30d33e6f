// How many passes a metric list costs, asked of CUPTI's host side only: the runner's pass budget is
// checked on a machine without a GPU (tests/runner/test_metric_passes). The same host calls as the
// profiler makes (runner/cupti_host_config), without a device's counter availability.
#include "runner/metric_sets.h"

#include "runner/cupti_failure.h"
#include "runner/cupti_host_config.h"

#include <cstdint>

namespace kl::runner {

int hostPasses(const std::string& chip, const std::vector<std::string>& metrics, std::string& why)
{
    CUpti_Profiler_Host_Object* host = nullptr;
    try {
        host = startHost(chip, nullptr);
    } catch (const CuptiFailure& failure) {
        why = failure.what();
        return 0;
    }
    std::vector<const char*> names;
    for (const std::string& m : metrics)
        names.push_back(m.c_str());
    int passes = 0;
    try {
        std::vector<std::uint8_t> image;
        passes = static_cast<int>(buildConfigImage(host, names, image));
    } catch (const CuptiFailure& failure) {
        // The first CUPTI refusal is the answer; a message already in `why` stays, as it always has here.
        if (why.empty())
            why = failure.what();
    }
    stopHost(host);
    return passes;
}

} // namespace kl::runner

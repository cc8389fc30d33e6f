#pragma once
// CUPTI's Profiler Host API, the part that needs no device: a host object for a chip, and the
// configuration image with its pass count for a metric list. The range profiler and the offline pass
// count (hostPasses, tested on CI without a GPU) both go through here, so that the count the test checks
// is the count the profiler gets.
#ifdef KL_WITH_CUPTI

#include <cupti_profiler_host.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kl::runner {

// CUPTI's parameter blocks: zeroed, with their size set, as every CUPTI call requires.
template <class Params> Params cuptiParams(std::size_t size)
{
    Params params {};
    params.structSize = size;
    return params;
}

// The range profiler's host object for `chip` ("GH100"). `availability` is the device's counter
// availability image, or null when there is no device. Throws CuptiFailure.
CUpti_Profiler_Host_Object* startHost(const std::string& chip, const std::uint8_t* availability);

// Adds `metrics` to `host`'s configuration, fills `configImage` with the configuration image and
// returns the passes it needs. Throws CuptiFailure at the first call CUPTI refuses.
std::size_t buildConfigImage(
    CUpti_Profiler_Host_Object* host, const std::vector<const char*>& metrics, std::vector<std::uint8_t>& configImage);

// Ends `host`; CUPTI's answer is ignored, as at every teardown.
void stopHost(CUpti_Profiler_Host_Object* host);

} // namespace kl::runner

#endif

#include "runner/cupti_host_config.h"

#ifdef KL_WITH_CUPTI

#include "runner/cupti_failure.h"

namespace kl::runner {

// KL_CUPTI quotes the call, so the parameter blocks' names (hostInit, add, size, image, passes) are part
// of the failure messages the profiler has always reported: keep them.
CUpti_Profiler_Host_Object* startHost(const std::string& chip, const std::uint8_t* availability)
{
    auto hostInit
        = cuptiParams<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    hostInit.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hostInit.pChipName = chip.c_str();
    hostInit.pCounterAvailabilityImage = availability;
    KL_CUPTI(cuptiProfilerHostInitialize(&hostInit));
    return hostInit.pHostObject;
}

std::size_t buildConfigImage(
    CUpti_Profiler_Host_Object* host, const std::vector<const char*>& metrics, std::vector<std::uint8_t>& configImage)
{
    auto add = cuptiParams<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = host;
    add.ppMetricNames = const_cast<const char**>(metrics.data()); // CUPTI only reads the names
    add.numMetrics = metrics.size();
    KL_CUPTI(cuptiProfilerHostConfigAddMetrics(&add));
    auto size = cuptiParams<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = host;
    KL_CUPTI(cuptiProfilerHostGetConfigImageSize(&size));
    configImage.assign(size.configImageSize, 0);
    auto image
        = cuptiParams<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    image.pHostObject = host;
    image.configImageSize = configImage.size();
    image.pConfigImage = configImage.data();
    KL_CUPTI(cuptiProfilerHostGetConfigImage(&image));
    auto passes
        = cuptiParams<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    passes.configImageSize = configImage.size();
    passes.pConfigImage = configImage.data();
    KL_CUPTI(cuptiProfilerHostGetNumOfPasses(&passes));
    return passes.numOfPasses;
}

void stopHost(CUpti_Profiler_Host_Object* host)
{
    auto p = cuptiParams<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    p.pHostObject = host;
    cuptiProfilerHostDeinitialize(&p);
}

} // namespace kl::runner

#endif

// How many passes a metric list costs, asked of CUPTI's host side only: the runner's pass budget is
// checked on a machine without a GPU (tests/runner/test_metric_passes).
#include "runner/metric_sets.h"

#include <cupti_profiler_host.h>

#include <cstdint>
#include <cstring>

namespace kl::runner {

namespace {

template <class Params> Params cleared(std::size_t size)
{
    Params params;
    std::memset(&params, 0, sizeof params);
    params.structSize = size;
    return params;
}

std::string failed(const char* call, CUptiResult result)
{
    const char* text = nullptr;
    cuptiGetResultString(result, &text);
    return std::string(call) + ": " + (text ? text : "CUPTI error " + std::to_string(result));
}

} // namespace

int hostPasses(const std::string& chip, const std::vector<std::string>& metrics, std::string& why)
{
    auto init = cleared<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    init.pChipName = chip.c_str();
    if (const CUptiResult r = cuptiProfilerHostInitialize(&init); r != CUPTI_SUCCESS) {
        why = failed("cuptiProfilerHostInitialize", r);
        return 0;
    }
    std::vector<const char*> names;
    for (const std::string& m : metrics)
        names.push_back(m.c_str());
    // Each step in turn; the first CUPTI refusal is the answer.
    const auto ok = [&why](const char* call, CUptiResult result) {
        if (result != CUPTI_SUCCESS && why.empty())
            why = failed(call, result);
        return result == CUPTI_SUCCESS;
    };
    auto add
        = cleared<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = init.pHostObject;
    add.ppMetricNames = names.data();
    add.numMetrics = names.size();
    auto size = cleared<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = init.pHostObject;
    std::vector<std::uint8_t> image;
    auto get
        = cleared<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    auto count
        = cleared<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    int passes = 0;
    if (ok("cuptiProfilerHostConfigAddMetrics", cuptiProfilerHostConfigAddMetrics(&add))
        && ok("cuptiProfilerHostGetConfigImageSize", cuptiProfilerHostGetConfigImageSize(&size))) {
        image.resize(size.configImageSize);
        get.pHostObject = init.pHostObject;
        get.configImageSize = image.size();
        get.pConfigImage = image.data();
        count.configImageSize = image.size();
        count.pConfigImage = image.data();
        if (ok("cuptiProfilerHostGetConfigImage", cuptiProfilerHostGetConfigImage(&get))
            && ok("cuptiProfilerHostGetNumOfPasses", cuptiProfilerHostGetNumOfPasses(&count)))
            passes = static_cast<int>(count.numOfPasses);
    }
    auto done = cleared<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    done.pHostObject = init.pHostObject;
    cuptiProfilerHostDeinitialize(&done);
    return passes;
}

} // namespace kl::runner

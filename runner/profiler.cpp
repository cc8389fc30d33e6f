#include "runner/profiler.h"

#include "runner/metric_sets.h"

#ifdef KL_WITH_CUPTI
#include "runner/cupti_failure.h"
#include "runner/cupti_host_config.h"
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#endif

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace kl::runner {

#ifndef KL_WITH_CUPTI

struct Profiler::State { };

Profiler::Profiler(const Device& device)
    : m_device(device)
{
}

Profiler::~Profiler() = default;

protocol::Profile Profiler::profile(protocol::MetricSet set, const std::function<void()>&, const std::function<void()>&,
    const std::vector<std::string>&, const std::string&, std::string& detail, std::map<std::string, double>&)
{
    protocol::Profile profile;
    profile.status = protocol::ProfileStatus::Unavailable;
    profile.reason = "not-built";
    profile.metricSet = set;
    detail = "the runner was built without CUPTI";
    return profile;
}

#else

namespace {

// What the host side computes once per metric set: the configuration image and its pass count; and
// the counter data image's storage, reused by every job (initialised again for each).
struct MetricConfiguration {
    std::vector<std::string> names;
    std::vector<const char*> pointers;
    CUpti_Profiler_Host_Object* host = nullptr;
    std::vector<std::uint8_t> image;
    std::size_t passes = 0;
    std::vector<std::uint8_t> counterData;
};

// Milliseconds since `mark`, which moves on to now.
double lap(std::chrono::steady_clock::time_point& mark)
{
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - mark).count();
    mark = now;
    return ms;
}

void disableQuietly(CUpti_RangeProfiler_Object* object)
{
    if (!object)
        return;
    auto disable = cuptiParams<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    disable.pRangeProfilerObject = object;
    cuptiRangeProfilerDisable(&disable);
}

// $KL_PROFILE_REPLAY=user: auto range with user replay, the runner launching the kernel again for each
// pass (after `beforePass`: the same flush as before a timed run) instead of CUPTI's kernel replay,
// which saves and restores device memory around every pass. Measured beside kernel replay
// (docs/measurements.md); kernel replay stays the default.
bool userReplay()
{
    const char* text = std::getenv("KL_PROFILE_REPLAY");
    return text && std::string(text) == "user";
}

} // namespace

struct Profiler::State {
    bool initialised = false;
    std::string chip;
    std::vector<std::uint8_t> availability;
    std::map<protocol::MetricSet, MetricConfiguration> configurations;

    ~State()
    {
        for (auto& [set, configuration] : configurations) {
            if (configuration.host)
                stopHost(configuration.host);
        }
    }

    void initialise(const Device& device)
    {
        if (initialised)
            return;
        auto supported
            = cuptiParams<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
        supported.cuDevice = device.handle();
        supported.api = CUPTI_PROFILER_RANGE_PROFILING;
        KL_CUPTI(cuptiProfilerDeviceSupported(&supported));
        if (supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
            throw CuptiFailure(CUPTI_ERROR_NOT_SUPPORTED, "cuptiProfilerDeviceSupported");

        auto init = cuptiParams<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
        KL_CUPTI(cuptiProfilerInitialize(&init));
        auto chipName = cuptiParams<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
        chipName.deviceIndex = static_cast<std::size_t>(device.index());
        KL_CUPTI(cuptiDeviceGetChipName(&chipName));
        chip = chipName.pChipName;

        auto counters = cuptiParams<CUpti_Profiler_GetCounterAvailability_Params>(
            CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
        counters.ctx = device.context();
        KL_CUPTI(cuptiProfilerGetCounterAvailability(&counters));
        availability.assign(counters.counterAvailabilityImageSize, 0);
        counters.pCounterAvailabilityImage = availability.data();
        KL_CUPTI(cuptiProfilerGetCounterAvailability(&counters));
        initialised = true;
    }

    MetricConfiguration& configuration(protocol::MetricSet set)
    {
        if (const auto it = configurations.find(set); it != configurations.end())
            return it->second;
        MetricConfiguration c;
        c.names = metricsFor(set);
        for (const std::string& name : c.names)
            c.pointers.push_back(name.c_str());

        c.host = startHost(chip, availability.data());

        MetricConfiguration& stored = configurations.emplace(set, std::move(c)).first->second;
        // The names' storage moved with the vector: point again.
        stored.pointers.clear();
        for (const std::string& name : stored.names)
            stored.pointers.push_back(name.c_str());
        try {
            stored.passes = buildConfigImage(stored.host, stored.pointers, stored.image);
        } catch (...) {
            stopHost(stored.host);
            configurations.erase(set);
            throw;
        }
        return stored;
    }
};

Profiler::Profiler(const Device& device)
    : m_device(device)
    , m_state(std::make_unique<State>())
{
}

Profiler::~Profiler() = default;

protocol::Profile Profiler::profile(protocol::MetricSet set, const std::function<void()>& runOnce,
    const std::function<void()>& beforePass, const std::vector<std::string>& kernelNames, const std::string& caseLabel,
    std::string& detail, std::map<std::string, double>& phasesMs)
{
    protocol::Profile profile;
    profile.metricSet = set;
    if (set == protocol::MetricSet::None || kernelNames.empty()) {
        profile.status = protocol::ProfileStatus::Skipped;
        return profile;
    }
    CUpti_RangeProfiler_Object* object = nullptr;
    auto mark = std::chrono::steady_clock::now();
    try {
        m_state->initialise(m_device);
        MetricConfiguration& config = m_state->configuration(set);
        profile.passes = static_cast<int>(config.passes);
        phasesMs["profile_init"] = lap(mark);

        auto enable = cuptiParams<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
        enable.ctx = m_device.context();
        KL_CUPTI(cuptiRangeProfilerEnable(&enable));
        object = enable.pRangeProfilerObject;
        phasesMs["profile_enable"] = lap(mark);

        const std::size_t ranges = kernelNames.size();
        auto size = cuptiParams<CUpti_RangeProfiler_GetCounterDataSize_Params>(
            CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
        size.pRangeProfilerObject = object;
        size.pMetricNames = config.pointers.data();
        size.numMetrics = config.pointers.size();
        size.maxNumOfRanges = ranges;
        size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(ranges);
        KL_CUPTI(cuptiRangeProfilerGetCounterDataSize(&size));
        std::vector<std::uint8_t>& counterData = config.counterData;
        counterData.assign(size.counterDataSize, 0);
        auto initData = cuptiParams<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
            CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
        initData.pRangeProfilerObject = object;
        initData.counterDataSize = counterData.size();
        initData.pCounterData = counterData.data();
        KL_CUPTI(cuptiRangeProfilerCounterDataImageInitialize(&initData));

        auto setConfig
            = cuptiParams<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
        setConfig.pRangeProfilerObject = object;
        setConfig.configSize = config.image.size();
        setConfig.pConfig = config.image.data();
        setConfig.counterDataImageSize = counterData.size();
        setConfig.pCounterDataImage = counterData.data();
        setConfig.range = CUPTI_AutoRange;
        const bool user = userReplay();
        setConfig.replayMode = user ? CUPTI_UserReplay : CUPTI_KernelReplay;
        setConfig.maxRangesPerPass = ranges;
        setConfig.numNestingLevels = 1;
        setConfig.minNestingLevel = 1;
        setConfig.passIndex = 0;
        setConfig.targetNestingLevel = 1;
        KL_CUPTI(cuptiRangeProfilerSetConfig(&setConfig));
        phasesMs["profile_config"] = lap(mark);

        // With kernel replay CUPTI replays every pass inside each launch (the loop only matters if it
        // ever asks for another round); with user replay each round is one pass.
        for (int round = 0; round < 64; ++round) {
            if (user && beforePass)
                beforePass();
            auto start = cuptiParams<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
            start.pRangeProfilerObject = object;
            KL_CUPTI(cuptiRangeProfilerStart(&start));
            runOnce();
            auto stop = cuptiParams<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
            stop.pRangeProfilerObject = object;
            KL_CUPTI(cuptiRangeProfilerStop(&stop));
            if (stop.isAllPassSubmitted)
                break;
        }
        phasesMs["profile_replay"] = lap(mark);
        auto decode
            = cuptiParams<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
        decode.pRangeProfilerObject = object;
        KL_CUPTI(cuptiRangeProfilerDecodeData(&decode));

        auto info = cuptiParams<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
            CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
        info.pCounterDataImage = counterData.data();
        info.counterDataImageSize = counterData.size();
        KL_CUPTI(cuptiRangeProfilerGetCounterDataInfo(&info));
        std::vector<double> values(config.pointers.size(), 0.0);
        for (std::size_t range = 0; range < info.numTotalRanges; ++range) {
            auto evaluate = cuptiParams<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
                CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
            evaluate.pHostObject = config.host;
            evaluate.pCounterDataImage = counterData.data();
            evaluate.counterDataImageSize = counterData.size();
            evaluate.rangeIndex = range;
            evaluate.ppMetricNames = config.pointers.data();
            evaluate.numMetrics = config.pointers.size();
            evaluate.pMetricValues = values.data();
            KL_CUPTI(cuptiProfilerHostEvaluateToGpuValues(&evaluate));
            protocol::KernelProfile kernel;
            kernel.kernel = range < kernelNames.size() ? kernelNames[range] : "range " + std::to_string(range);
            kernel.caseLabel = caseLabel;
            for (std::size_t m = 0; m < config.names.size(); ++m)
                kernel.metrics[config.names[m]] = clampPercentage(config.names[m], values[m]);
            profile.kernels.push_back(std::move(kernel));
        }
        phasesMs["profile_decode"] = lap(mark);
        auto disable = cuptiParams<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
        disable.pRangeProfilerObject = object;
        object = nullptr;
        KL_CUPTI(cuptiRangeProfilerDisable(&disable));
        phasesMs["profile_disable"] = lap(mark);
        profile.status = protocol::ProfileStatus::Ok;
        if (decode.numOfRangeDropped > 0)
            detail = std::to_string(decode.numOfRangeDropped) + " profiler ranges dropped";
    } catch (const CuptiFailure& failure) {
        disableQuietly(object);
        profile.status = protocol::ProfileStatus::Unavailable;
        profile.reason = failure.reason();
        profile.kernels.clear();
        detail = failure.what();
    } catch (...) {
        // A CUDA failure while the kernels replayed: leave the profiler off, let the caller decide.
        disableQuietly(object);
        throw;
    }
    return profile;
}

#endif

} // namespace kl::runner

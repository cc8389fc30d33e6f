#include "runner/pc_sampling.h"

#ifdef KL_WITH_CUPTI
#include "runner/cupti_failure.h"
#include <cupti_pcsampling.h>
#endif

#include <chrono>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kl::runner {

using lines::PcSampling;
using lines::SamplingStatus;

PcSampler::PcSampler(const Device& device)
    : m_device(device)
{
}

#ifndef KL_WITH_CUPTI

PcSampling PcSampler::sample(
    const std::string&, const std::function<void(LoadedModule&)>&, const std::string& caseLabel)
{
    PcSampling s;
    s.status = SamplingStatus::Unavailable;
    s.reason = "not-built";
    s.detail = "the runner was built without CUPTI";
    s.caseLabel = caseLabel;
    return s;
}

#else

namespace {

constexpr std::size_t kPcsPerRead = 2048;
constexpr int kPeriodLog2 = 12; // one sample per 4096 cycles per SM: ~60k samples per ms on an H200
constexpr std::int64_t kEnoughSamples = 20000;
constexpr int kMostRuns = 50;
constexpr double kMostMillis = 400.0;

// The buffer CUPTI writes parsed records into: kPcsPerRead PCs, each with room for every stall reason.
struct ReadBuffer {
    CUpti_PCSamplingData data {};
    std::vector<CUpti_PCSamplingPCData> pcs;
    std::vector<std::vector<CUpti_PCSamplingStallReason>> stalls;

    explicit ReadBuffer(std::size_t reasons)
        : pcs(kPcsPerRead)
        , stalls(kPcsPerRead, std::vector<CUpti_PCSamplingStallReason>(reasons))
    {
        data.size = sizeof(CUpti_PCSamplingData);
        data.collectNumPcs = kPcsPerRead;
        data.pPcData = pcs.data();
        reset();
    }
    void reset()
    {
        for (std::size_t i = 0; i < pcs.size(); ++i) {
            pcs[i] = {};
            pcs[i].size = sizeof(CUpti_PCSamplingPCData);
            pcs[i].stallReason = stalls[i].data();
        }
        data.totalNumPcs = 0;
        data.remainingNumPcs = 0;
    }
};

struct PcKey {
    std::string function;
    std::uint64_t offset;
    auto operator<=>(const PcKey&) const = default;
};

struct Collected {
    std::map<PcKey, std::map<std::string, std::int64_t>> stalls;
    std::map<PcKey, std::uint64_t> crc;
    std::int64_t total = 0, dropped = 0, other = 0;
    bool bufferFull = false;
};

class Session {
public:
    explicit Session(CUcontext context)
        : m_context(context)
    {
        CUpti_PCSamplingEnableParams enable {};
        enable.size = CUpti_PCSamplingEnableParamsSize;
        enable.ctx = context;
        KL_CUPTI(cuptiPCSamplingEnable(&enable));
        m_enabled = true;
    }
    ~Session() { disable(); }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    void disable()
    {
        if (!m_enabled)
            return;
        m_enabled = false;
        CUpti_PCSamplingDisableParams p {};
        p.size = CUpti_PCSamplingDisableParamsSize;
        p.ctx = m_context;
        cuptiPCSamplingDisable(&p);
    }

private:
    CUcontext m_context;
    bool m_enabled = false;
};

std::map<std::uint32_t, std::string> stallReasons(CUcontext context)
{
    std::size_t count = 0;
    CUpti_PCSamplingGetNumStallReasonsParams n {};
    n.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
    n.ctx = context;
    n.numStallReasons = &count;
    KL_CUPTI(cuptiPCSamplingGetNumStallReasons(&n));
    std::vector<std::vector<char>> names(count, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE, 0));
    std::vector<char*> pointers;
    for (auto& name : names)
        pointers.push_back(name.data());
    std::vector<std::uint32_t> indices(count, 0);
    CUpti_PCSamplingGetStallReasonsParams r {};
    r.size = CUpti_PCSamplingGetStallReasonsParamsSize;
    r.ctx = context;
    r.numStallReasons = count;
    r.stallReasonIndex = indices.data();
    r.stallReasons = pointers.data();
    KL_CUPTI(cuptiPCSamplingGetStallReasons(&r));
    std::map<std::uint32_t, std::string> byIndex;
    for (std::size_t i = 0; i < count; ++i)
        byIndex[indices[i]] = lines::stallName(names[i].data());
    return byIndex;
}

void configure(CUcontext context, ReadBuffer& buffer)
{
    std::vector<CUpti_PCSamplingConfigurationInfo> info(5);
    info[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    info[0].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
    info[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    info[1].attributeData.samplingPeriodData.samplingPeriod = kPeriodLog2;
    info[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
    info[2].attributeData.enableStartStopControlData.enableStartStopControl = 1;
    info[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
    info[3].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
    info[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    info[4].attributeData.samplingDataBufferData.samplingDataBuffer = &buffer.data;
    CUpti_PCSamplingConfigurationInfoParams p {};
    p.size = CUpti_PCSamplingConfigurationInfoParamsSize;
    p.ctx = context;
    p.numAttributes = info.size();
    p.pPCSamplingConfigurationInfo = info.data();
    KL_CUPTI(cuptiPCSamplingSetConfigurationAttribute(&p));
}

// Drains what CUPTI holds after a stop: several reads when more PCs than one buffer holds.
void drain(CUcontext context, ReadBuffer& buffer, const std::map<std::uint32_t, std::string>& reasons, Collected& into)
{
    std::map<std::uint64_t, std::pair<std::int64_t, std::int64_t>> ranges; // range → (total, dropped)
    std::map<std::uint64_t, std::int64_t> others;
    for (int read = 0; read < 10000; ++read) {
        buffer.reset();
        CUpti_PCSamplingGetDataParams get {};
        get.size = CUpti_PCSamplingGetDataParamsSize;
        get.ctx = context;
        get.pcSamplingData = &buffer.data;
        KL_CUPTI(cuptiPCSamplingGetData(&get));
        const CUpti_PCSamplingData& d = buffer.data;
        auto& range = ranges[d.rangeId];
        range.first = std::max<std::int64_t>(range.first, static_cast<std::int64_t>(d.totalSamples));
        range.second = std::max<std::int64_t>(range.second, static_cast<std::int64_t>(d.droppedSamples));
        others[d.rangeId]
            = std::max<std::int64_t>(others[d.rangeId], static_cast<std::int64_t>(d.nonUsrKernelsTotalSamples));
        into.bufferFull = into.bufferFull || d.hardwareBufferFull;
        for (std::size_t i = 0; i < d.totalNumPcs && i < buffer.pcs.size(); ++i) {
            CUpti_PCSamplingPCData& pc = buffer.pcs[i];
            const PcKey key { pc.functionName ? pc.functionName : "", pc.pcOffset };
            auto& stalls = into.stalls[key];
            into.crc[key] = pc.cubinCrc;
            for (std::size_t s = 0; s < pc.stallReasonCount; ++s) {
                const auto it = reasons.find(pc.stallReason[s].pcSamplingStallReasonIndex);
                const std::string name = it == reasons.end()
                    ? "reason_" + std::to_string(pc.stallReason[s].pcSamplingStallReasonIndex)
                    : it->second;
                stalls[name] += pc.stallReason[s].samples;
            }
        }
        if (d.remainingNumPcs == 0)
            break;
    }
    for (const auto& [id, counts] : ranges) {
        into.total += counts.first;
        into.dropped += counts.second;
    }
    for (const auto& [id, n] : others)
        into.other += n;
}

std::uint64_t cubinCrc(const std::string& cubin)
{
    CUpti_GetCubinCrcParams p {};
    p.size = CUpti_GetCubinCrcParamsSize;
    p.cubin = cubin.data();
    p.cubinSize = cubin.size();
    return cuptiGetCubinCrc(&p) == CUPTI_SUCCESS ? p.cubinCrc : 0;
}

// Source file and line of one PC; line 0 when the cubin has no line info there.
std::pair<std::string, int> sourceOf(const std::string& cubin, const std::string& function, std::uint64_t offset)
{
    CUpti_GetSassToSourceCorrelationParams p {};
    p.size = CUpti_GetSassToSourceCorrelationParamsSize;
    p.cubin = cubin.data();
    p.cubinSize = cubin.size();
    p.functionName = function.c_str();
    p.pcOffset = offset;
    if (cuptiGetSassToSourceCorrelation(&p) != CUPTI_SUCCESS)
        return { {}, 0 };
    std::string file = p.fileName ? p.fileName : "";
    std::free(p.fileName);
    std::free(p.dirName);
    return { file, static_cast<int>(p.lineNumber) };
}

} // namespace

PcSampling PcSampler::sample(
    const std::string& cubin, const std::function<void(LoadedModule&)>& runOnce, const std::string& caseLabel)
{
    using Clock = std::chrono::steady_clock;
    const auto started = Clock::now();
    PcSampling s;
    s.caseLabel = caseLabel;
    s.periodLog2 = kPeriodLog2;
    const CUcontext context = m_device.context();
    Collected collected;
    try {
        m_device.synchronize();
        Session session(context);
        const auto reasons = stallReasons(context);
        // Two buffers: at each stop CUPTI copies the range into the configured one, and GetData hands the
        // same range out again into the buffer it is given. Reading with the configured buffer itself
        // found it already consumed (0 samples on the H200, scripts/pc-sampling-probe.cu); so the
        // records are read through a second buffer. Its function names alias the configured copy's,
        // which CUPTI frees itself at the next stop: freeing them here was a double free.
        ReadBuffer configured(std::max<std::size_t>(reasons.size(), 1));
        ReadBuffer buffer(std::max<std::size_t>(reasons.size(), 1));
        configure(context, configured);
        LoadedModule module(m_device, cubin, "candidate (sampled)");
        auto millis = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - started).count(); };
        while (s.runs < kMostRuns && (s.runs == 0 || millis() < kMostMillis)) {
            CUpti_PCSamplingStartParams start {};
            start.size = CUpti_PCSamplingStartParamsSize;
            start.ctx = context;
            KL_CUPTI(cuptiPCSamplingStart(&start));
            runOnce(module);
            ++s.runs;
            CUpti_PCSamplingStopParams stop {};
            stop.size = CUpti_PCSamplingStopParamsSize;
            stop.ctx = context;
            KL_CUPTI(cuptiPCSamplingStop(&stop));
            drain(context, buffer, reasons, collected);
            std::int64_t sampled = 0;
            for (const auto& [key, stalls] : collected.stalls)
                for (const auto& [name, n] : stalls)
                    sampled += lines::isNotIssuedSubset(name) ? 0 : n;
            if (sampled >= kEnoughSamples)
                break;
        }
        session.disable();
    } catch (const CuptiFailure& failure) {
        s.status = SamplingStatus::Unavailable;
        s.reason = failure.reason();
        s.detail = failure.what();
        s.milliseconds = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
        return s;
    }

    const std::uint64_t ours = cubinCrc(cubin);
    for (const auto& [key, stalls] : collected.stalls) {
        const auto crc = collected.crc.find(key);
        lines::PcSample pc;
        pc.function = key.function;
        pc.pcOffset = key.offset;
        pc.stalls = stalls;
        if (ours != 0 && crc != collected.crc.end() && crc->second != ours) {
            collected.other += pc.samples(); // another module's kernel ran in the window
            continue;
        }
        std::tie(pc.file, pc.line) = sourceOf(cubin, key.function, key.offset);
        s.pcs.push_back(std::move(pc));
    }
    s.totalSamples = collected.total;
    s.droppedSamples = collected.dropped;
    s.otherSamples = collected.other;
    s.hardwareBufferFull = collected.bufferFull;
    s.status = SamplingStatus::Ok;
    if (s.sampledInCandidate() == 0) {
        s.status = SamplingStatus::Unavailable;
        s.reason = "no-samples";
        s.detail = "CUPTI took no samples in the candidate's kernels (" + std::to_string(s.runs) + " runs)";
    } else if (s.droppedSamples > 0 || s.hardwareBufferFull) {
        s.reason = "samples-dropped";
        s.detail = std::to_string(s.droppedSamples) + " of " + std::to_string(s.totalSamples) + " samples dropped";
    }
    s.milliseconds = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    return s;
}

#endif

} // namespace kl::runner

#include "core/loop/evaluation.h"

#include "core/model/error.h"
#include "core/protocol/finite.h"
#include "core/protocol/profile_policy.h"
#include "core/store/code_listings.h"
#include "core/store/compile_columns.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace kl {

Telemetry staticTelemetry(const StaticReport& report, const std::string& kernel)
{
    const StaticReport::PerLaunch* chosen = nullptr;
    for (const auto& l : report.launches) {
        if (!report.launches.empty() && l.sizes.label != report.launches.front().sizes.label)
            break; // first main size only
        if (kernel.empty() || l.kernel == kernel || l.resources.loweredName == kernel) {
            chosen = &l;
            break;
        }
    }
    if (!chosen && !report.launches.empty())
        chosen = &report.launches.front();
    Telemetry t;
    if (!chosen)
        return t;
    const auto& r = chosen->resources;
    t.kernel = chosen->kernel;
    t.registers = r.registers;
    t.threadsPerBlock = static_cast<int>(chosen->launch.threadsPerBlock());
    t.staticShared = r.staticSharedBytes;
    t.dynamicShared = chosen->launch.sharedBytes;
    t.stackFrame = r.stackFrameBytes;
    t.spillStores = r.spillStoreBytes;
    t.spillLoads = r.spillLoadBytes;
    t.blocksPerSm = chosen->occupancy.blocksPerSm;
    t.theoreticalOccupancy = chosen->occupancy.theoretical;
    t.occupancyLimiter = occupancyLimiterName(chosen->occupancy.limiter);
    t.gridBlocks = chosen->launch.blocks();
    // From the PTX NVRTC or Triton gave (the SASS is disassembled later, beside the stored listing):
    // stored with the rest, so that a result answered from the cache knows the code as well.
    t.tensorInstructions = lines::countTensorInstructions({}, report.compile.ptx);
    return t;
}

std::optional<lines::TensorInstructions> storedTensorInstructions(const store::CompileRecord& compile)
{
    const auto listings = store::codeListingsOf(compile);
    return lines::countTensorInstructions(listings.sass, listings.ptx);
}

namespace {

using protocol::finite;

[[noreturn]] void badTelemetry(const std::string& where, const std::string& message)
{
    throw Error("findings.bad-telemetry", {}, where, message);
}

void readTiming(Telemetry& t, const protocol::Timing& timing, const std::string& sizeLabel, double deviceCopyGbps)
{
    const protocol::CaseTiming* chosen = nullptr;
    for (const auto& c : timing.cases)
        if (sizeLabel.empty() || c.label == sizeLabel) {
            chosen = &c;
            break;
        }
    if (!chosen) {
        if (!sizeLabel.empty() && !timing.cases.empty())
            badTelemetry("timing.cases", "no timed case labelled \"" + sizeLabel + "\"");
        return;
    }
    const auto& c = *chosen;
    t.sizeLabel = c.label;
    t.bytes = finite(c.bytes);
    t.flops = finite(c.flops);
    t.medianUs = finite(c.candidate.medianUs);
    t.cv = finite(c.candidate.cv);
    t.graphMedianUs = finite(c.candidate.graphMedianUs);
    t.gbps = finite(c.gbps);
    t.tflops = finite(c.tflops);
    t.pctOfCopy = finite(c.pctOfCopy);
    t.pctOfSol = finite(c.pctOfSol);
    t.solBound = c.solBound;
    t.precision = c.compute;
    if (c.ceilingTflops && *c.ceilingTflops > 0)
        t.peakTflops = *c.ceilingTflops; // the precision's, at the timing's clock
    deriveRates(t, c.copy ? finite(c.copy->medianUs) : std::nullopt, deviceCopyGbps);
}

// A named kernel must be in the profile; otherwise the static report's
// kernel is preferred and the first one at the size taken when it is not there.
void readProfile(Telemetry& t, const protocol::Profile& profile, const std::string& kernel,
    const std::string& sizeLabel, bool strict)
{
    if (profile.status != protocol::ProfileStatus::Ok)
        return; // unavailable or skipped: the counter rules stay silent
    const protocol::KernelProfile* chosen = nullptr;
    const protocol::KernelProfile* sameCase = nullptr;
    bool kernelSeen = false;
    for (const auto& k : profile.kernels) {
        kernelSeen = kernelSeen || k.kernel == kernel;
        if (!sizeLabel.empty() && k.caseLabel != sizeLabel)
            continue;
        if (!sameCase)
            sameCase = &k;
        if (kernel.empty() || k.kernel == kernel) {
            chosen = &k;
            break;
        }
    }
    if (strict && !kernelSeen && !profile.kernels.empty())
        badTelemetry("profile.kernels", "no profile for kernel \"" + kernel + "\"");
    if (!chosen && !strict)
        chosen = sameCase;
    if (!chosen)
        return; // profiled at another size only
    if (t.kernel.empty())
        t.kernel = chosen->kernel;
    for (const auto& [name, value] : chosen->metrics)
        t.metrics[name] = value;
}

} // namespace

Telemetry telemetryFromResult(
    const protocol::EvaluateResult& result, Telemetry t, const std::string& kernel, const std::string& sizeLabel)
{
    if (t.kernel.empty())
        t.kernel = kernel;
    if (result.device)
        t.smCount = result.device->smCount;
    // Prefer the clock recorded with the timing: clocks are not locked (docs/gpu-facts.md, "Timing").
    const auto clock = result.timing ? finite(result.timing->smClockMhz) : std::nullopt;
    t.peakTflops = peakFp32Tflops(t.smCount,
        clock               ? *clock
            : result.device ? result.device->smClockMhz
                            : 0.0,
        result.device ? result.device->computeCapability : std::string());
    if (result.timing)
        readTiming(t, *result.timing, sizeLabel, result.device ? result.device->copyBandwidthGbps : 0.0);
    if (result.profile)
        readProfile(t, *result.profile, kernel.empty() ? t.kernel : kernel, sizeLabel.empty() ? t.sizeLabel : sizeLabel,
            !kernel.empty());
    t.lineSamples = result.pcSampling; // samples that did not decode give no line findings
    return t;
}

Telemetry telemetryFromRecordedReply(
    const nlohmann::json& reply, const std::string& kernel, const std::string& sizeLabel)
{
    if (!reply.is_object())
        badTelemetry({}, "a runner result must be a JSON object");
    protocol::EvaluateResult result;
    try {
        result = reply.get<protocol::EvaluateResult>();
    } catch (const Error& e) {
        badTelemetry(e.where(), e.message());
    } catch (const nlohmann::json::exception& e) {
        badTelemetry({}, e.what());
    }
    const auto statics = reply.find("static");
    const bool hasStatics = statics != reply.end() && !statics->is_null();
    if (!result.timing && !result.profile && !hasStatics)
        badTelemetry({}, "neither timing, profile nor static resources");
    if (!result.pcSamplingUnreadable.empty())
        badTelemetry("pc_sampling", result.pcSamplingUnreadable);
    return telemetryFromResult(
        result, hasStatics ? store::staticTelemetryFromJson(*statics) : Telemetry {}, kernel, sizeLabel);
}

Telemetry loadTelemetry(const std::filesystem::path& path, const std::string& kernel, const std::string& sizeLabel)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error("findings.unreadable", path.string(), {}, "cannot open the file");
    std::stringstream buffer;
    buffer << in.rdbuf();
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(buffer.str());
    } catch (const nlohmann::json::parse_error& e) {
        throw Error("findings.bad-json", path.string(), "byte " + std::to_string(e.byte), e.what());
    }
    try {
        return telemetryFromRecordedReply(doc, kernel, sizeLabel);
    } catch (const Error& e) {
        throw Error(e.category(), path.string(), e.where(), e.message());
    }
}

std::string dominantKernel(const protocol::EvaluateResult& result)
{
    if (!result.profile)
        return {};
    std::string best;
    double longest = -1.0;
    for (const auto& k : result.profile->kernels) {
        auto it = k.metrics.find("gpu__time_duration.sum");
        if (it != k.metrics.end() && it->second > longest) {
            longest = it->second;
            best = k.kernel;
        }
    }
    return best;
}

std::vector<SizeTiming> timingsOf(const protocol::Timing& timing)
{
    std::vector<SizeTiming> out;
    for (const auto& c : timing.cases)
        out.push_back({ c.label, c.candidate.samplesUs, c.baseline ? c.baseline->medianUs : 0.0 });
    return out;
}

void takeFigures(IterationOutcome& o, const protocol::Timing& timing)
{
    std::vector<double> speedups;
    for (std::size_t i = 0; i < timing.cases.size(); ++i) {
        const auto& c = timing.cases[i];
        if (i == 0) {
            o.medianUs = c.candidate.medianUs;
            o.gbps = c.gbps;
            o.pctOfCopy = c.pctOfCopy;
            o.pctOfSol = c.pctOfSol;
            o.solBound = c.solBound;
        }
        if (const auto speedup = protocol::speedupVsJobBaseline(c)) {
            speedups.push_back(*speedup);
            o.speedupBySize[c.label] = *speedup;
        }
    }
    if (!speedups.empty())
        o.speedup = geometricMean(speedups);
}

std::string verificationBrief(const protocol::EvaluateResult& result)
{
    if (!result.verification)
        return result.header.detail;
    for (const auto& c : result.verification->cases) {
        if (c.passed)
            continue;
        char buf[512];
        std::string index;
        for (auto i : c.worstIndex)
            index += (index.empty() ? "" : ",") + std::to_string(i);
        std::snprintf(buf, sizeof buf,
            "%s at %s (%s, trial %d): %lld of %lld elements off, %lld unwritten, %lld NaN; max abs %.3g, "
            "max rel %.3g at %s[%s]",
            std::string(protocol::categoryName(c.category.value_or(protocol::Category::WrongResult))).c_str(),
            c.label.c_str(), std::string(protocol::caseKindName(c.kind)).c_str(), c.trial,
            static_cast<long long>(c.mismatches), static_cast<long long>(c.elements),
            static_cast<long long>(c.unwritten), static_cast<long long>(c.nan), c.maxAbsError, c.maxRelError,
            c.worstOutput.c_str(), index.c_str());
        return buf;
    }
    return result.header.detail;
}

} // namespace kl

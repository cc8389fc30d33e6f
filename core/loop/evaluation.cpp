#include "core/loop/evaluation.h"

#include <cstdio>

namespace kl {

nlohmann::json telemetryStatic(const StaticReport& report, const std::string& kernel)
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
    if (!chosen)
        return nlohmann::json::object();
    const auto& r = chosen->resources;
    return {
        { "kernel", chosen->kernel },
        { "registers", r.registers },
        { "threads_per_block", chosen->launch.threadsPerBlock() },
        { "static_shared", r.staticSharedBytes },
        { "dynamic_shared", chosen->launch.sharedBytes },
        { "stack_frame", r.stackFrameBytes },
        { "spill_stores", r.spillStoreBytes },
        { "spill_loads", r.spillLoadBytes },
        { "blocks_per_sm", chosen->occupancy.blocksPerSm },
        { "theoretical_occupancy", chosen->occupancy.theoretical },
        { "occupancy_limiter", occupancyLimiterName(chosen->occupancy.limiter) },
        { "grid_blocks", chosen->launch.blocks() },
    };
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
        }
        if (c.speedupVsBaseline) {
            speedups.push_back(*c.speedupVsBaseline);
            o.speedupBySize[c.label] = *c.speedupVsBaseline;
        }
    }
    if (!speedups.empty())
        o.speedup = geometricMean(speedups);
}

std::optional<protocol::EvaluateResult> storedReply(const store::ResultRecord& r)
{
    nlohmann::json j = { { "v", protocol::kProtocolVersion }, { "type", "result" }, { "id", "" },
        { "status", r.status }, { "category", r.category }, { "detail", r.detail } };
    for (const auto& [key, value] : { std::pair<const char*, const nlohmann::json*> { "device", &r.device },
             { "verification", &r.verification }, { "timing", &r.timing }, { "profile", &r.profile } })
        if (!value->is_null())
            j[key] = *value;
    try {
        return j.get<protocol::EvaluateResult>();
    } catch (const std::exception&) {
        return std::nullopt;
    }
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

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

std::vector<SizeTiming> timingsFromJson(const nlohmann::json& timing)
{
    std::vector<SizeTiming> out;
    if (!timing.is_object() || !timing.contains("cases"))
        return out;
    for (const auto& c : timing["cases"]) {
        SizeTiming t;
        t.label = c.value("label", "");
        if (c.contains("candidate") && c["candidate"].contains("samples_us"))
            t.samplesUs = c["candidate"]["samples_us"].get<std::vector<double>>();
        if (c.contains("baseline") && c["baseline"].is_object())
            t.baselineMedianUs = c["baseline"].value("median_us", 0.0);
        out.push_back(std::move(t));
    }
    return out;
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

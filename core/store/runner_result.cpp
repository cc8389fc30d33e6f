#include "core/store/runner_result.h"

#include "core/model/geometric_mean.h"
#include "core/protocol/finite.h"
#include "core/store/compile_columns.h"
#include "core/store/result_columns.h"

#include <cmath>

namespace kl::store {

namespace {

using protocol::finite;

// The headline figures all come from one size, the first; only the speedup is averaged.
void takeHeadline(ResultRecord& result)
{
    if (result.sizes.empty())
        return;
    const auto& first = result.sizes.front();
    static_cast<TimingFigures&>(result) = first;
    std::vector<std::optional<double>> speedups;
    for (const auto& size : result.sizes)
        speedups.push_back(size.speedup);
    result.speedup = result.sizes.size() == 1 ? first.speedup : geometricMean(speedups);
}

} // namespace

nlohmann::json storedColumns(const ResultRecord& r)
{
    return { { "status", r.status }, { "category", r.category }, { "detail", r.detail },
        { "verification", columnJson(r.verification) }, { "timing", columnJson(r.timing) },
        { "profile", columnJson(r.profile) }, { "compile", compileColumn(r.compile) },
        { "device", columnJson(r.device) }, { "pc_sampling", columnJson(r.pcSampling) } };
}

std::vector<SizeResult> sizeResultsOf(const protocol::Timing& timing)
{
    std::vector<SizeResult> sizes;
    for (const auto& timed : timing.cases) {
        SizeResult size;
        size.label = timed.label;
        size.medianUs = finite(timed.candidate.medianUs);
        size.p20Us = finite(timed.candidate.p20Us);
        size.p80Us = finite(timed.candidate.p80Us);
        size.cv = finite(timed.candidate.cv);
        size.gbps = finite(timed.gbps);
        size.pctOfCopy = finite(timed.pctOfCopy);
        size.speedup = finite(timed.speedupVsBaseline);
        size.pctOfSol = finite(timed.pctOfSol);
        size.solBound = timed.solBound;
        size.compute = timed.compute;
        size.computeReason = timed.computeReason;
        sizes.push_back(std::move(size));
    }
    return sizes;
}

ResultRecord resultFromEvaluateResult(const protocol::EvaluateResult& reply, const std::string& toolkit)
{
    ResultRecord result;
    result.status = protocol::statusName(reply.header.status);
    result.category = protocol::categoryName(reply.category());
    result.detail = reply.header.detail;
    result.verification = reply.verification;
    result.timing = reply.timing;
    result.device = reply.device;
    result.profile = reply.profile;
    result.pcSampling = reply.pcSampling;
    result.toolkit = !toolkit.empty() ? toolkit : reply.device ? reply.device->runtimeToolkit : std::string();
    if (reply.timing && reply.timing->smClockMhz)
        result.smClockMhz = reply.timing->smClockMhz;
    else if (reply.device)
        result.smClockMhz = reply.device->smClockMhz;

    if (reply.timing)
        result.sizes = sizeResultsOf(*reply.timing);
    takeHeadline(result);

    if (reply.profile)
        for (const auto& kernel : reply.profile->kernels)
            for (const auto& [name, value] : kernel.metrics)
                result.metrics[{ kernel.kernel, kernel.caseLabel, name }] = value;
    return result;
}

std::optional<protocol::EvaluateResult> storedReply(const ResultRecord& r)
{
    const auto status = protocol::parseStatus(r.status);
    const auto category = protocol::parseCategory(r.category);
    if (!status || !category)
        return std::nullopt;
    protocol::EvaluateResult reply;
    reply.header = { {}, *status, *category, r.detail };
    reply.device = r.device;
    reply.verification = r.verification;
    reply.timing = r.timing;
    reply.profile = r.profile;
    // a cache hit asked for with ";lines=1" answers with its samples
    reply.pcSampling = r.pcSampling;
    return reply;
}

KernelStatics storedStatics(const CompileRecord& compile)
{
    KernelStatics k;
    if (!compile.statics)
        return k;
    const Telemetry& telemetry = *compile.statics;
    if (telemetry.registers > 0)
        k.registers = telemetry.registers;
    if (telemetry.theoreticalOccupancy > 0)
        k.theoreticalOccupancy = telemetry.theoreticalOccupancy;
    k.occupancyLimiter = telemetry.occupancyLimiter;
    return k;
}

} // namespace kl::store

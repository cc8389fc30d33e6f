#include "core/figures/iteration_figures.h"

#include "core/figures/contenders.h"
#include "core/protocol/finite.h"

#include "core/findings/stall_reasons.h"
#include "core/findings/telemetry.h"
#include "core/model/geometric_mean.h"
#include "core/store/runner_result.h"
#include "core/store/store.h"

#include <algorithm>
#include <cmath>

namespace kl::figures {

namespace {

// One kernel's metrics by (size, counter): where several kernels were profiled at a size, the first
// by name, as the charts have always drawn it.
using MainKernelMetrics = std::map<std::pair<std::string, std::string>, double>;

MainKernelMetrics mainKernelMetrics(const store::MetricValues& metrics)
{
    MainKernelMetrics index;
    for (const auto& [key, value] : metrics)
        if (!key.kernel.empty())
            index.emplace(std::pair { key.caseLabel, key.metric }, value);
    return index;
}

void readStatic(const store::KernelStatics& statics, IterationFigures& figures)
{
    figures.registers = statics.registers;
    figures.theoreticalOccupancy = statics.theoreticalOccupancy;
    figures.occupancyLimiter = statics.occupancyLimiter;
}

void readProfile(const MainKernelMetrics& metrics, SizeFigures& size)
{
    if (const auto it = metrics.find({ size.size, metric::kAchievedOccupancy }); it != metrics.end())
        size.achievedOccupancy = it->second;
    for (const StallReason& reason : stallReasons())
        if (const auto it = metrics.find({ size.size, metric::stallRatio(reason.name) });
            reason.isStall && it != metrics.end())
            size.stalls.emplace_back(reason.name, it->second);
}

IterationFigures rowFigures(const store::IterationRow& row)
{
    IterationFigures figures;
    figures.index = row.index;
    figures.status = row.status;
    figures.category = row.category.empty() ? row.state : row.category;
    figures.passed = row.status == "ok" && row.category == "passed";
    figures.proposer = row.proposer;
    return figures;
}

// One stored size row as the charts draw it. The runner's speedup is the baseline's median over
// the candidate's, both timed in the same job, so the baseline's median is their product.
SizeFigures sizeFigures(const store::SizeResult& stored, const MainKernelMetrics& profile)
{
    SizeFigures size;
    size.size = stored.label;
    size.medianUs = stored.medianUs;
    size.p20Us = stored.p20Us;
    size.p80Us = stored.p80Us;
    if (stored.medianUs && stored.speedup)
        size.baselineUs = *stored.medianUs * *stored.speedup;
    size.gbps = stored.gbps;
    size.pctOfCopy = stored.pctOfCopy;
    size.speedup = stored.speedup;
    size.pctOfSol = stored.pctOfSol;
    size.solBound = stored.solBound;
    size.compute = stored.compute;
    size.computeReason = stored.computeReason;
    readProfile(profile, size);
    return size;
}

using protocol::finite;

SizeFigures sizeFigures(const protocol::CaseTiming& timedCase, const MainKernelMetrics& metrics)
{
    SizeFigures size;
    size.size = timedCase.label;
    size.medianUs = finite(timedCase.candidate.medianUs);
    size.p20Us = finite(timedCase.candidate.p20Us);
    size.p80Us = finite(timedCase.candidate.p80Us);
    if (timedCase.baseline)
        size.baselineUs = finite(timedCase.baseline->medianUs);
    size.gbps = finite(timedCase.gbps);
    size.pctOfCopy = finite(timedCase.pctOfCopy);
    size.speedup = finite(timedCase.speedupVsBaseline);
    size.pctOfSol = finite(timedCase.pctOfSol);
    size.solBound = timedCase.solBound;
    size.compute = timedCase.compute;
    size.computeReason = timedCase.computeReason;
    readProfile(metrics, size);
    return size;
}

void addContenders(std::vector<SizeFigures>& sizes, const std::vector<Contenders>& contenders)
{
    for (const Contenders& c : contenders)
        for (SizeFigures& size : sizes)
            if (size.size == c.size) {
                size.eagerUs = c.eagerUs;
                size.torchCompileUs = c.torchCompileUs;
                size.speedupVsEager = c.speedupVsEager;
                size.speedupVsCompile = c.speedupVsCompile;
                size.torchCompileError = c.torchCompileError;
            }
}

} // namespace

const SizeFigures* IterationFigures::atSize(const std::string& size) const
{
    const auto it = std::find_if(sizes.begin(), sizes.end(), [&](const SizeFigures& s) { return s.size == size; });
    return it == sizes.end() ? nullptr : &*it;
}

IterationFigures figuresOf(const store::IterationDetail& detail)
{
    IterationFigures figures = rowFigures(detail.row);
    if (!detail.result)
        return figures;
    const store::ResultRecord& result = *detail.result;
    figures.endpoint = result.endpoint;
    if (result.device) {
        figures.gpuModel = result.device->name;
        figures.gpu = result.device->index;
    }
    readStatic(store::storedStatics(result.compile), figures);
    if (result.timing) {
        const auto metrics = mainKernelMetrics(result.metrics);
        for (const protocol::CaseTiming& timedCase : result.timing->cases)
            figures.sizes.push_back(sizeFigures(timedCase, metrics));
        addContenders(figures.sizes, contendersOf(*result.timing));
    }
    return figures;
}

std::vector<IterationFigures> readFigures(const store::Store& store, std::int64_t sessionId)
{
    // A few queries for the whole session (rows, size rows, the profile's metrics, static telemetry,
    // runners, and timings only for a PyTorch reference), not one full iteration read each: 10,000
    // iterations took 1.1 s that way.
    const auto sizes = store.sizeResults(sessionId);
    const auto runners = store.sessionRunners(sessionId);
    const auto metrics
        = store.sessionMetrics(sessionId, { std::string(metric::kAchievedOccupancy), metric::stallRatio("%") });
    const auto statics = store.sessionStatics(sessionId);
    const auto contenders = readContenders(store, sessionId);
    const MainKernelMetrics none;
    std::vector<IterationFigures> figures;
    for (const store::IterationRow& row : store.listIterations(sessionId)) {
        IterationFigures f = rowFigures(row);
        const auto profiled = metrics.find(row.index);
        if (const auto timed = sizes.find(row.index); timed != sizes.end()) {
            const auto profile = profiled == metrics.end() ? none : mainKernelMetrics(profiled->second);
            for (const store::SizeResult& size : timed->second)
                f.sizes.push_back(sizeFigures(size, profile));
        }
        if (const auto s = statics.find(row.index); s != statics.end())
            readStatic(s->second, f);
        if (const auto c = contenders.find(row.index); c != contenders.end())
            addContenders(f.sizes, c->second);
        if (const auto ran = runners.find(row.index); ran != runners.end()) {
            f.endpoint = ran->second.endpoint;
            f.gpuModel = ran->second.model;
            f.gpu = ran->second.gpu;
        }
        figures.push_back(std::move(f));
    }
    return figures;
}

namespace {
std::optional<double> geometricMean(const IterationFigures& f, std::optional<double> SizeFigures::*member)
{
    std::vector<std::optional<double>> values;
    for (const SizeFigures& size : f.sizes)
        values.push_back(size.*member);
    return kl::geometricMean(values);
}
} // namespace

std::optional<double> speedupVsEager(const IterationFigures& figures)
{
    return geometricMean(figures, &SizeFigures::speedupVsEager);
}

std::optional<double> speedupVsCompile(const IterationFigures& figures)
{
    return geometricMean(figures, &SizeFigures::speedupVsCompile);
}

bool hasContenders(const std::vector<IterationFigures>& figures)
{
    return std::any_of(figures.begin(), figures.end(), [](const IterationFigures& f) {
        return std::any_of(f.sizes.begin(), f.sizes.end(),
            [](const SizeFigures& s) { return s.eagerUs || s.torchCompileUs || !s.torchCompileError.empty(); });
    });
}

bool hasMeasuredOn(const std::vector<IterationFigures>& figures)
{
    return std::any_of(figures.begin(), figures.end(),
        [](const IterationFigures& f) { return !f.endpoint.empty() || !f.gpuModel.empty(); });
}

std::vector<std::string> timedSizes(const std::vector<IterationFigures>& figures)
{
    std::vector<std::string> sizes;
    for (const IterationFigures& iteration : figures)
        for (const SizeFigures& size : iteration.sizes)
            if (std::find(sizes.begin(), sizes.end(), size.size) == sizes.end())
                sizes.push_back(size.size);
    return sizes;
}

} // namespace kl::figures

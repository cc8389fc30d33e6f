#include "core/figures/iteration_figures.h"

#include "core/figures/contenders.h"

#include "core/findings/stall_reasons.h"
#include "core/findings/telemetry.h"
#include "core/model/geometric_mean.h"
#include "core/store/runner_result.h"
#include "core/store/store.h"

#include <algorithm>
#include <cmath>

namespace kl::figures {

namespace {

// Stored metric names are "<kernel>/<size>/<metric>"; the first kernel profiled at a size is the
// main one (the runner profiles the main kernel first).
std::optional<double> metricAt(
    const std::map<std::string, double>& metrics, const std::string& size, const std::string& name)
{
    const std::string suffix = "/" + size + "/" + name;
    for (const auto& [key, value] : metrics)
        if (key.size() > suffix.size() && key.ends_with(suffix))
            return value;
    return std::nullopt;
}

void readStatic(const store::KernelStatics& statics, IterationFigures& figures)
{
    figures.registers = statics.registers;
    figures.theoreticalOccupancy = statics.theoreticalOccupancy;
    figures.occupancyLimiter = statics.occupancyLimiter;
}

// `at(size, name)`: the main kernel's metric at a size.
template <typename Lookup> void readProfile(const Lookup& at, SizeFigures& size)
{
    size.achievedOccupancy = at(size.size, metric::kAchievedOccupancy);
    for (const StallReason& reason : stallReasons()) {
        if (!reason.isStall)
            continue;
        if (const auto ratio = at(size.size, metric::stallRatio(reason.name)))
            size.stalls.emplace_back(reason.name, *ratio);
    }
}

// One iteration's metrics by "<size>/<metric>", the main (first) kernel's where several were
// profiled: what metricAt finds, without scanning every metric per lookup.
std::map<std::string, double> byMetricAtSize(const std::map<std::string, double>& metrics)
{
    std::map<std::string, double> index;
    for (const auto& [key, value] : metrics)
        if (const auto slash = key.find('/'); slash != std::string::npos && slash > 0)
            index.emplace(key.substr(slash + 1), value);
    return index;
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
SizeFigures sizeFigures(const store::SizeResult& stored, const std::map<std::string, double>& profile)
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
    readProfile(
        [&profile](const std::string& at, const std::string& name) -> std::optional<double> {
            const auto it = profile.find(at + "/" + name);
            return it == profile.end() ? std::nullopt : std::optional<double>(it->second);
        },
        size);
    return size;
}

std::optional<double> finite(std::optional<double> value)
{
    return value && std::isfinite(*value) ? value : std::nullopt;
}

SizeFigures sizeFigures(const protocol::CaseTiming& timedCase, const std::map<std::string, double>& metrics)
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
    readProfile(
        [&metrics](const std::string& at, const std::string& name) { return metricAt(metrics, at, name); }, size);
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
    if (const auto device = store::storedDevice(result.device)) {
        figures.gpuModel = device->name;
        figures.gpu = device->index;
    }
    readStatic(store::storedStatics(result.compile), figures);
    if (const auto timing = store::storedTiming(result.timing)) {
        for (const protocol::CaseTiming& timedCase : timing->cases)
            figures.sizes.push_back(sizeFigures(timedCase, result.metrics));
        addContenders(figures.sizes, contendersOf(*timing));
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
    const auto metrics = store.sessionMetrics(
        sessionId, { "%/" + std::string(metric::kAchievedOccupancy), "%/" + metric::stallRatio("%") });
    const auto statics = store.sessionStatics(sessionId);
    const auto contenders = readContenders(store, sessionId);
    const std::map<std::string, double> none;
    std::vector<IterationFigures> figures;
    for (const store::IterationRow& row : store.listIterations(sessionId)) {
        IterationFigures f = rowFigures(row);
        const auto profiled = metrics.find(row.index);
        if (const auto timed = sizes.find(row.index); timed != sizes.end()) {
            const auto profile = profiled == metrics.end() ? none : byMetricAtSize(profiled->second);
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

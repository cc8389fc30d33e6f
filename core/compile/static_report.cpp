#include "core/compile/static_report.h"

#include "core/compile/launch_args.h"
#include "core/compile/triton_compiler.h"

#include <cmath>

namespace kl {

bool StaticReport::ok() const { return firstProblem().empty(); }

std::string StaticReport::firstProblem() const
{
    if (!compile.ok)
        return compile.summary.empty() ? "the candidate did not compile" : compile.summary;
    for (const auto& l : launches)
        if (!l.occupancy.error.empty())
            return l.kernel + " at " + l.sizes.label + ": " + l.occupancy.error;
    return {};
}

StaticReport analyseCandidate(const Problem& problem, const Candidate& candidate, const TunableValues& tunables,
    const CompileOptions& options, const DeviceLimits& device)
{
    StaticReport report;
    report.problem = problem.name;
    report.candidate = candidate.fileName;
    report.arch = options.arch;
    report.device = device;
    report.tunables = candidate.withOverrides(tunables);

    // Input errors first: a constraint broken at a main size is the caller's mistake, and cheap.
    std::vector<LaunchPlan> plans;
    for (const auto& sizes : problem.mainSizes)
        plans.push_back(planLaunches(problem, candidate, sizes, report.tunables));
    // Verification also launches at the fuzz sizes, and on padded rows: a grid of zero or a scratch
    // buffer out of range there is as much the candidate's mistake.
    const bool padded = problem.hasRowPadding();
    for (const auto* list : { &problem.mainSizes, &problem.fuzzSizes })
        for (const auto& sizes : *list) {
            if (list == &problem.fuzzSizes)
                planLaunches(problem, candidate, sizes, report.tunables);
            if (padded)
                planLaunches(problem, candidate, sizes, report.tunables, true);
        }

    CompileOptions compileOptions = options;
    compileOptions.tunables = report.tunables;
    if (compileOptions.includeDir.empty())
        compileOptions.includeDir = problem.dir;
    if (candidate.language == CandidateLanguage::Triton)
        compileOptions.tritonSignature = tritonSignature(problem, candidate, &report.tunables);
    report.compile = compileCandidate(candidate, compileOptions);
    if (!report.compile.ok)
        return report;
    if (!plans.empty())
        checkLaunchArgs(candidate, plans.front(), report.compile);

    for (const auto& plan : plans)
        for (const auto& launch : plan.launches) {
            StaticReport::PerLaunch l;
            l.kernel = launch.kernel;
            l.sizes = plan.sizes;
            l.launch = launch;
            if (const auto* k = report.compile.kernel(launch.kernel))
                l.resources = *k;
            // Triton's shared memory is all dynamic and sized by its compiler (launchSharedBytes).
            l.sharedBytes = l.resources.staticSharedBytes + launch.sharedBytes + l.resources.launchSharedBytes;
            l.needsSharedOptIn = l.sharedBytes > device.sharedPerBlock;
            l.occupancy = theoreticalOccupancy(device, static_cast<int>(launch.threadsPerBlock()),
                l.resources.registers, l.sharedBytes, l.resources.barriers);
            if (l.occupancy.blocksPerSm > 0) {
                const double perWave = static_cast<double>(l.occupancy.blocksPerSm) * device.smCount;
                l.waves = static_cast<double>(launch.blocks()) / perWave;
                l.wholeWaves = static_cast<std::int64_t>(std::ceil(l.waves));
            }
            report.launches.push_back(std::move(l));
        }
    return report;
}

} // namespace kl

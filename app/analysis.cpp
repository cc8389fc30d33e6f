#include "app/analysis.h"

#include <algorithm>
#include <chrono>

namespace kl::gui {

std::shared_ptr<const AnalysisOutcome> analyse(const AnalysisRequest& request)
{
    const auto start = std::chrono::steady_clock::now();
    auto outcome = std::make_shared<AnalysisOutcome>();
    outcome->id = request.id;
    try {
        if (!request.problem)
            throw Error("gui.no-problem", {}, {}, "no problem is open");
        const Problem& problem = *request.problem;
        auto candidate = std::make_shared<const Candidate>(parseCandidate(request.source, request.fileName));
        outcome->candidate = candidate;
        // The declared tunables with the engineer's values where they are still valid: the editor may
        // just have removed a tunable or narrowed its set.
        outcome->tunables = candidate->applicable(request.tunables);

        CompileOptions options;
        options.arch = problem.arch;
        options.tunables = outcome->tunables;
        options.includeDir = problem.dir;
        outcome->report = std::make_shared<const StaticReport>(
            analyseCandidate(problem, *candidate, outcome->tunables, options, DeviceLimits::forArch(problem.arch)));
    } catch (const Error& error) {
        outcome->error = error;
    } catch (const std::exception& error) {
        outcome->error = Error("internal", request.fileName, {}, error.what());
    }
    outcome->wallMillis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return outcome;
}

} // namespace kl::gui

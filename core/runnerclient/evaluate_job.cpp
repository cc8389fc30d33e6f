// compileEvaluateJob: the three programs of an evaluation through NVRTC, with the problem's arch
// and include folder.
#include "core/runnerclient/evaluate_job.h"

namespace kl {

namespace {
CompiledCandidate compileOne(TunedCandidate tuned, const Problem& problem, CompileOptions options)
{
    options.arch = problem.arch;
    options.tunables = tuned.tunables;
    options.includeDir = problem.dir;
    CompiledCandidate out { std::move(tuned), {} };
    out.compiled = compileCandidate(out.tuned.candidate, options);
    return out;
}
} // namespace

EvaluateJob compileEvaluateJob(
    const Problem& problem, TunedCandidate candidate, std::optional<TunedCandidate> baseline, CompileOptions base)
{
    EvaluateJob job;
    job.reference = compileOne(TunedCandidate { problem.reference, problem.reference.defaults() }, problem, base);
    job.candidate = compileOne(std::move(candidate), problem, base);
    if (baseline)
        job.baseline = compileOne(std::move(*baseline), problem, base);
    return job;
}

} // namespace kl

// compileEvaluateJob: the three programs of an evaluation through NVRTC, with the problem's arch
// and include folder.
#include "core/runnerclient/evaluate_job.h"

#include "core/compile/triton_compiler.h"

namespace kl {

namespace {
CompiledCandidate compileOne(TunedCandidate tuned, const Problem& problem, CompileOptions options)
{
    options.arch = problem.arch;
    options.tunables = tuned.tunables;
    options.includeDir = problem.dir;
    CompiledCandidate out { std::move(tuned), {} };
    if (out.tuned.candidate.language == CandidateLanguage::Triton)
        options.tritonSignature = tritonSignature(problem, out.tuned.candidate, &out.tuned.tunables);
    out.compiled = compileCandidate(out.tuned.candidate, options);
    return out;
}
} // namespace

CompiledCandidate compileReference(const Problem& problem, CompileOptions base)
{
    if (!problem.pythonReference)
        return compileOne(TunedCandidate { problem.reference, problem.reference.defaults() }, problem, base);
    // Nothing to compile: the runner's Python worker runs it (request.pythonReference).
    CompiledCandidate reference;
    reference.tuned = TunedCandidate { problem.reference, {} };
    reference.compiled.ok = true;
    reference.compiled.summary = "PyTorch reference, run by the runner's Python worker";
    return reference;
}

EvaluateJob compileEvaluateJob(
    const Problem& problem, TunedCandidate candidate, std::optional<TunedCandidate> baseline, CompileOptions base)
{
    EvaluateJob job;
    job.reference = compileReference(problem, base);
    job.candidate = compileOne(std::move(candidate), problem, base);
    if (baseline)
        job.baseline = compileOne(std::move(*baseline), problem, base);
    return job;
}

} // namespace kl

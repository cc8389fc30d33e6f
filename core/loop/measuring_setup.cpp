#include "core/loop/measuring_setup.h"

#include "core/model/error.h"
#include "core/pool/pool_trace.h"
#include "core/pool/runner_pool.h"
#include "core/store/records.h"
#include "core/store/store.h"

#include <future>

namespace kl {

MeasuringSetup startMeasuring(const Problem& problem, pool::RunnerPool& runners, store::Store& store)
{
    // The reference and the baseline compile while the runners start (CUDA, the first describe's copy
    // bandwidth): neither needs the other.
    const bool kernel = problem.hasBaselineKernel();
    auto compiling = std::async(std::launch::async, [&problem, kernel] {
        if (!kernel)
            return EvaluateJob { compileReference(problem), {}, std::nullopt };
        return compileEvaluateJob(
            problem, TunedCandidate { problem.baseline, problem.baseline.defaults() }, std::nullopt);
    });
    MeasuringSetup setup;
    pool::trace("starting the runners");
    setup.device = runners.start(); // throws runner.no-device when no runner has a GPU (the compile is waited for)
    setup.limits = limitsOf(setup.device, problem.arch);
    pool::trace("runners started: " + setup.device.name);

    auto job = compiling.get();
    if (!job.reference.compiled.ok)
        throw Error("problem.reference-compile", problem.referencePath.string(), {},
            "the reference does not compile: " + job.reference.compiled.summary);
    if (kernel && !job.candidate.compiled.ok)
        throw Error("problem.baseline-compile", problem.baselinePath.string(), {},
            "the baseline does not compile: " + job.candidate.compiled.summary);
    setup.reference = job.reference;
    if (kernel) {
        setup.baseline = job.candidate;
        setup.toolkit = job.candidate.compiled.nvrtcVersion;
    } else {
        // No baseline compiled to read the compiler's version from: the language stands in for it.
        setup.toolkit = std::string("first-kernel ") + candidateLanguageName(problem.language());
    }
    pool::trace(kernel ? "reference and baseline compiled" : "reference ready; no baseline kernel (PyTorch eager)");

    setup.problemHash = store.addProblem(store::problemRecord(problem));
    return setup;
}

} // namespace kl

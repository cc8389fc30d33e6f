#pragma once
// What the GPU suites share: where the runner and the examples are (the environment overrides the
// build-time paths, so a build carried to a GPU machine still finds them), and requests built the
// way the core builds them (NVRTC compile, launch plans, the runner client's request builder).
#include "core/model/problem.h"
#include "core/protocol/messages.h"
#include "core/runnerclient/evaluate_job.h"
#include "core/runnerclient/runner_client.h"

#include <QByteArray>
#include <QString>

#include <filesystem>
#include <string>

namespace kl::gputest {

inline std::filesystem::path sourceDir()
{
    const QByteArray fromEnvironment = qgetenv("KL_SOURCE_DIR");
    return fromEnvironment.isEmpty() ? std::filesystem::path(KL_SOURCE_DIR)
                                     : std::filesystem::path(fromEnvironment.toStdString());
}

inline std::filesystem::path runnerPath()
{
    const QByteArray fromEnvironment = qgetenv("KL_RUNNER");
    return fromEnvironment.isEmpty() ? std::filesystem::path(KL_RUNNER_PATH)
                                     : std::filesystem::path(fromEnvironment.toStdString());
}

inline RunnerConfig runnerConfig()
{
    RunnerConfig config;
    config.path = runnerPath();
    return config;
}

inline Problem example(const std::string& name)
{
    return loadProblem(sourceDir() / "resources" / "examples" / name / "problem.json");
}

// Options for a suite: two trials, default timing budget, the cheap metric set.
inline protocol::EvaluateOptions suiteOptions(bool time, protocol::MetricSet profile)
{
    protocol::EvaluateOptions options;
    options.seed = 20240611;
    options.trials = 2;
    options.time = time;
    options.profile = profile;
    options.timeBudgetMs = 200.0;
    return options;
}

// Compiles and builds the request. Fails the calling test (returns false) with the compiler's
// summary when a program does not compile.
inline bool buildRequest(const Problem& problem, const TunedCandidate& candidate,
    const std::optional<TunedCandidate>& baseline, const protocol::EvaluateOptions& options,
    protocol::EvaluateRequest& request, std::string& why)
{
    const EvaluateJob job = compileEvaluateJob(problem, candidate, baseline);
    if (const CompiledCandidate* failed = job.firstCompileFailure()) {
        why = failed->tuned.candidate.fileName + ": " + failed->compiled.summary + "\n" + failed->compiled.log;
        return false;
    }
    request = buildEvaluateRequest(problem, job, options);
    return true;
}

// "wrong-result: y: 12 of 7000 elements off ..." for failure messages.
inline std::string describeResult(const protocol::EvaluateResult& result)
{
    return std::string(protocol::statusName(result.header.status)) + " / "
        + std::string(protocol::categoryName(result.category())) + ": " + result.header.detail;
}

} // namespace kl::gputest

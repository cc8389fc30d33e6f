#pragma once
// What the loop suites share: the bundled example problem, the process double of the runner
// (tests/loop/model_runner.cpp, whose path the build passes in as KL_MODEL_RUNNER) and a plain loop
// configuration.
#include "core/loop/tuning_session.h"
#include "core/model/problem.h"
#include "core/runnerclient/runner_client.h"

#include <string>

namespace kl::test {

inline Problem layernormProblem()
{
    return loadProblem(std::string(KL_SOURCE_DIR) + "/resources/examples/layernorm_gelu/problem.json");
}

inline RunnerConfig modelRunner()
{
    RunnerConfig c;
    c.path = KL_MODEL_RUNNER;
    return c;
}

// A loop of `budget` rounds of k candidates that never stops early and profiles nothing.
inline LoopConfig loopConfig(int budget, int k, std::string proposerDetail)
{
    LoopConfig c;
    c.stop.maxIterations = budget;
    c.stop.patience = 0;
    c.candidatesPerIteration = k;
    c.evaluate.profile = protocol::MetricSet::None;
    c.proposerDetail = std::move(proposerDetail);
    return c;
}

} // namespace kl::test

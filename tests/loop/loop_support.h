#pragma once
// What the loop suites share: the bundled example problem and the process double of the runner
// (tests/loop/model_runner.cpp), whose path the build passes in as KL_MODEL_RUNNER.
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

} // namespace kl::test

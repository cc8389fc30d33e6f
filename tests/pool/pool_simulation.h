#pragma once
// The pool simulation of issue 14: N "GPUs" are runner doubles (tests/loop/model_runner.cpp, real
// processes behind a real RunnerPool) that spend the H200's measured time in each phase
// (KL_MODEL_RUNNER_PHASE_MS), and a round of k = N candidates is compiled the way the loop does it
// (core/pool/compile_stage.h; the compile itself is a sleep of the measured length, as if the host
// had a core per GPU) and waited for as a whole, as the loop waits before deciding. Used by
// bench_pool (the table in docs/measurements.md) and test_pool_scaling.
#include "core/pool/compile_stage.h"
#include "core/pool/runner_pool.h"

#include <chrono>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace kl::test {

struct PhaseLatencies {
    int compileMs = 250; // NVRTC + ptxas + static report, in the core (docs/measurements.md)
    int verifyMs = 70;
    int timeMs = 340;
    int profileMs = 185;
    std::string runnerSpec() const // for KL_MODEL_RUNNER_PHASE_MS
    {
        return "verify=" + std::to_string(verifyMs) + ",time=" + std::to_string(timeMs)
            + ",profile=" + std::to_string(profileMs);
    }
    int candidateMs() const { return compileMs + verifyMs + timeMs + profileMs; }
};

struct SimulatedPool {
    int gpus = 0;
    int candidates = 0;
    double seconds = 0.0;
    double perMinute() const { return seconds > 0 ? 60.0 * candidates / seconds : 0.0; }
};

// `rounds` rounds of k = gpus candidates over a pool of `gpus` runner doubles; `compileWidth`
// candidates compile at once (1: one after another, the loop's schedule before compile_stage).
inline SimulatedPool simulatePool(
    const std::string& runner, int gpus, int rounds, const PhaseLatencies& latencies, int compileWidth)
{
    ::setenv("KL_MODEL_RUNNER_PHASE_MS", latencies.runnerSpec().c_str(), 1);
    std::vector<pool::Endpoint> endpoints;
    for (int g = 0; g < gpus; ++g)
        endpoints.push_back(pool::parseEndpoint("local:" + std::to_string(g)));
    pool::PoolOptions options;
    options.endpoints.localRunner = runner;
    options.endpoints.base.startTimeout = std::chrono::milliseconds(15'000);
    pool::RunnerPool runners(std::move(endpoints), options);
    runners.start(); // runner start-up is not part of the throughput
    ::unsetenv("KL_MODEL_RUNNER_PHASE_MS");

    SimulatedPool out;
    out.gpus = gpus;
    auto t0 = std::chrono::steady_clock::now();
    for (int round = -1; round < rounds; ++round) { // round -1 warms each runner up, uncounted
        if (round == 0) {
            out.candidates = 0;
            t0 = std::chrono::steady_clock::now();
        }
        std::vector<std::future<pool::PooledResult>> jobs(static_cast<std::size_t>(gpus));
        pool::compileConcurrently(gpus, compileWidth, [&](int i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(latencies.compileMs));
            protocol::EvaluateRequest r;
            r.id = "r" + std::to_string(round) + "c" + std::to_string(i);
            r.modules.reference.cubin = "reference";
            r.modules.baseline = protocol::Module { "baseline" };
            r.modules.candidate.cubin = "candidate " + r.id;
            protocol::Case c;
            c.label = "main";
            c.timed = true;
            c.bytes = 64.0 * 1024 * 1024;
            protocol::Launch launch;
            launch.kernel = "kernel";
            c.programs.reference.launches = { launch };
            c.programs.candidate.launches = { launch };
            c.programs.baseline = c.programs.candidate;
            r.cases.push_back(c);
            jobs[std::size_t(i)] = runners.submit(std::move(r));
        });
        for (auto& j : jobs)
            if (j.get().result.category() == protocol::Category::Passed)
                ++out.candidates;
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    runners.stop();
    return out;
}

} // namespace kl::test

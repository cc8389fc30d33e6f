// The pool simulation of issue 14 (tests/pool/pool_simulation.h): N = 1, 2, 4, 8 runner doubles with
// the H200's measured phase latencies, a round of k = N candidates at a time; candidates per minute
// and the scaling against one GPU, for one compile at a time and for the round compiled side by side.
// Usage: bench_pool [rounds]   (prints a markdown table)
#include "tests/pool/pool_simulation.h"

#include <cstdio>
#include <cstdlib>

using namespace kl::test;

int main(int argc, char** argv)
{
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 6;
    const PhaseLatencies latencies; // compile 250, verify 70, time 340, profile 185 ms
    std::printf("phases: compile %d, verify %d, time %d, profile %d ms (%d ms a candidate); %d rounds of k = N\n\n",
        latencies.compileMs, latencies.verifyMs, latencies.timeMs, latencies.profileMs, latencies.candidateMs(),
        rounds);
    std::printf(
        "| GPUs | one compile at a time: cand/min | scaling | side by side: cand/min | scaling | goal 0.9 N |\n");
    std::printf("|---:|---:|---:|---:|---:|---:|\n");
    double one = 0.0;
    for (const int gpus : { 1, 2, 4, 8 }) {
        const auto serial = simulatePool(KL_MODEL_RUNNER, gpus, rounds, latencies, 1);
        const auto side = gpus == 1 ? serial : simulatePool(KL_MODEL_RUNNER, gpus, rounds, latencies, gpus);
        if (gpus == 1)
            one = serial.perMinute();
        std::printf("| %d | %.1f | %.2f | %.1f | %.2f | %.1f |\n", gpus, serial.perMinute(), serial.perMinute() / one,
            side.perMinute(), side.perMinute() / one, 0.9 * gpus);
        std::fflush(stdout);
    }
    return 0;
}

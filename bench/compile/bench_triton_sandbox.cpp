// What the sandbox for model-written Python costs a Triton compile: the same compile request through
// the real helper (python/kernelloop/triton_aot.py), warm (one server, N requests) and cold (a Python
// per request), with the helper as it is (Trusted: no bubblewrap, the in-process half only) and in
// bubblewrap (Sandboxed, what a session uses). Prints a markdown table of medians.
// Usage: bench_triton_sandbox PROBLEM.json [N [REQUEST_OUT]]   (KL_PYTHON picks the interpreter; PYTHONPATH a
// stand-in; REQUEST_OUT: the compile request is written there, for warm_latency_before.py)
#include "core/compile/confinement.h"
#include "core/compile/python_tool.h"
#include "core/compile/triton_compiler.h"
#include "core/compile/warm_python_tool.h"
#include "core/model/problem.h"
#include "core/tuner/search_space.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

using namespace kl;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values.empty() ? 0.0 : values[values.size() / 2];
}

bool replyOk(const PythonToolRun& run)
{
    const auto reply = nlohmann::json::parse(run.reply, nullptr, false);
    if (reply.is_object() && reply.value("ok", false))
        return true;
    static bool said = false;
    if (!said) // the first failure, whole, on stderr
        std::fprintf(stderr, "a compile failed (status %d): %s\n%s\n", run.exitStatus,
            run.reply.substr(0, 2000).c_str(), run.stderrText.c_str());
    said = true;
    return false;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s PROBLEM.json [N]\n", argv[0]);
        return 2;
    }
    const Problem problem = loadProblem(argv[1]);
    const int n = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
    // N distinct configurations (the first tunable's values, then the next's, ...): every compile is new to
    // Triton, as a tuner's are; a repeated request would measure Triton's on-disk cache instead.
    std::vector<std::string> requests;
    const Candidate& candidate = problem.baseline;
    const SearchSpace space(problem, candidate);
    for (const auto& config : space.all()) {
        if (int(requests.size()) >= n + 1 + n / 4 * 2)
            break;
        CompileOptions options;
        options.tunables = config;
        options.tritonSignature = tritonSignature(problem, candidate, &config);
        requests.push_back(tritonCompileRequest(candidate, options));
    }
    if (argc > 3) {
        std::ofstream out(argv[3]);
        for (const auto& r : requests)
            out << r << '\n';
    }
    std::size_t next = 0;
    auto request = [&]() -> const std::string& { return requests[next++ % requests.size()]; };
    const std::string python = pythonExecutable();
    const auto helper = tritonHelperPath();
    std::printf("helper %s, python %s, %d compiles of %s's baseline per row; bubblewrap: %s\n\n", helper.c_str(),
        python.c_str(), n, problem.name.c_str(),
        modelCodePolicy().mode == ConfinementMode::Sandboxed ? "works" : modelCodePolicy().detail.c_str());
    std::printf("| mode | server ready (ms) | warm compile, median (ms) | cold compile, median (ms) | all ok |\n");
    std::printf("|---|---:|---:|---:|---|\n");
    for (const auto mode : { ConfinementMode::Trusted, ConfinementMode::Sandboxed }) {
        next = 0; // both rows compile the same configurations in the same order
        bool ok = true;
        WarmPythonTool warm(python, helper, 1, mode);
        const auto start = Clock::now();
        const auto first = warm.run(request(), std::chrono::minutes(3)); // includes the server's start
        const double ready = since(start); // the first request waits for the server to start
        ok = ok && replyOk(first);
        std::vector<double> warmMs, coldMs;
        for (int i = 0; i < n; ++i) {
            const auto t = Clock::now();
            const auto run = warm.run(request(), std::chrono::minutes(3));
            warmMs.push_back(since(t));
            ok = ok && replyOk(run);
        }
        for (int i = 0; i < std::max(1, n / 4); ++i) {
            const auto t = Clock::now();
            const auto run = runPythonTool(python, helper, request(), std::chrono::minutes(3), mode);
            coldMs.push_back(since(t));
            ok = ok && replyOk(run);
        }
        std::printf("| %s | %.0f (start + first compile) | %.1f | %.1f | %s |\n",
            mode == ConfinementMode::Trusted ? "no bubblewrap" : "bubblewrap", ready, median(warmMs), median(coldMs),
            ok ? "yes" : "NO");
        std::fflush(stdout);
    }
    return 0;
}

// kernelloop-cli model-check FILE.py --patch patch.py [--batch N] [--repeats N] [--atol A] [--rtol R]
// The patched model against the original on fresh inputs, both timed, each kernel's fallbacks counted,
// the expected gain (Amdahl) beside the measured one. core/model_capture/model_check.h.
#include "cli/command.h"
#include "cli/table_text.h"

#include "core/model/error.h"
#include "core/model_capture/model_check.h"

#include <iostream>
#include <memory>

namespace kl::cli {

namespace {

struct CheckCommandOptions : model_capture::CheckRequest {
    int batchGiven = 0;
    int timeoutSeconds = 300;
    bool eval = false;
};

int runCheck(CheckCommandOptions o)
{
    if (o.batchGiven != 0)
        o.batch = o.batchGiven;
    if (o.eval)
        o.evalMode = true;
    if (o.repeats < 1 || o.repeats > 1000)
        throw Error("cli.bad-option", {}, "--repeats", "give 1 to 1000");
    const auto r = model_capture::checkPatchedModel(o, o.timeoutSeconds);
    std::cout << "inputs: " << r.inputs << "\n"
              << "registration: " << r.registration << "\n";
    std::cout << (r.matches ? "matches" : "DOES NOT MATCH") << " the original: max |difference| "
              << (r.maxAbsDiff < 0 ? std::string("-") : fixed(r.maxAbsDiff, 8)) << " over " << r.trials
              << " input sets (atol " << o.atol << ", rtol " << o.rtol << ")"
              << (r.mismatch.empty() ? "" : ": " + r.mismatch) << "\n";
    std::cout << "kernels:\n";
    for (const auto& p : r.ops) {
        std::cout << "  " << p.name << " (" << p.kind << "): ";
        if (!p.applied) {
            std::cout << "not applied, " << p.why << "\n";
            continue;
        }
        std::cout << p.calls << " calls, " << p.fallbacks << " fell back to PyTorch"
                  << (p.lastFallback.empty() ? "" : " (" + p.lastFallback + ")") << "; share "
                  << fixed(100.0 * p.share, 1) << "% of the original forward, speedup "
                  << (p.speedup ? fixed(*p.speedup, 2) + "x" : std::string("-")) << "\n";
    }
    std::cout << "time (" << r.timing << "): original " << fixed(r.originalMs, 3) << " ms, patched "
              << fixed(r.patchedMs, 3) << " ms\n";
    std::cout << "end to end: measured " << fixed(r.measuredSpeedup, 3) << "x, expected "
              << (r.expectedSpeedup ? fixed(*r.expectedSpeedup, 3) + "x" : std::string("-"))
              << " (Amdahl from the kernels' speedups and shares, the same clock)\n";
    if (r.measuredSpeedup <= 1.0)
        std::cout << "the patched model is not faster than the original here\n";
    return r.matches ? Ok : Failure;
}

const CommandRegistration registration([](CLI::App& app) -> std::function<int()> {
    auto o = std::make_shared<CheckCommandOptions>();
    auto* sub = app.add_subcommand(
        "model-check", "Check a patched model against the original on fresh inputs, and time both");
    sub->add_option("file", o->file, "the model file (.py)")->required();
    sub->add_option("--patch", o->patch, "the patch module kernelloop-cli model-patch wrote")->required();
    sub->add_option("--batch", o->batchGiven,
        "inputs with this first dimension (rows repeated): kernels verified at another size must fall back");
    sub->add_option("--seed", o->seed, "torch.manual_seed of the model's weights, as captured (default 0)");
    sub->add_option("--input-seed", o->inputSeed, "seed of the fresh inputs (default 1000)");
    sub->add_option("--repeats", o->repeats, "timed forwards of each (default 5)");
    sub->add_option("--atol", o->atol, "absolute tolerance (default 1e-4)");
    sub->add_option("--rtol", o->rtol, "relative tolerance (default 1e-4)");
    sub->add_flag("--eval", o->eval, "run in eval mode (as captured with --eval)");
    sub->add_option("--timeout", o->timeoutSeconds, "seconds the check may take (default 300)");
    return [o] { return runCheck(*o); };
});

} // namespace

} // namespace kl::cli

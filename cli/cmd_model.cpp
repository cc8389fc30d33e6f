// kernelloop-cli model FILE.py [-o DIR] [--top N] [--seed S] [--eval|--train] [--timeout S] [--force]
// A whole model in: its operator graph captured at its own sizes, ranked (an estimate without a GPU, and
// labelled so), the hot operators written as problem folders under DIR with model.json and ranking.txt.
// The capture is core/model_capture/capture_run.h.
#include "cli/command.h"
#include "cli/table_text.h"

#include "core/model/error.h"
#include "core/model_capture/capture_run.h"
#include "core/model_capture/ranking_text.h"

#include <iostream>
#include <memory>

namespace kl::cli {

namespace {

struct ModelCommandOptions : model_capture::ModelOptions {
    int top = 0;
    bool eval = false;
    bool train = false;
};

int runModel(ModelCommandOptions o)
{
    if (o.top != 0)
        o.ModelOptions::top = o.top;
    if (o.eval && o.train)
        throw Error("cli.bad-option", {}, "--eval", "--eval and --train together");
    if (o.eval || o.train)
        o.evalMode = o.eval;
    const auto run = model_capture::captureModel(o);
    const auto& m = run.capture.model;
    std::cout << "model " << m.name << " (" << m.file << "): " << (m.spec == "kernelbench" ? "KernelBench" : "module")
              << " file, " << m.mode << " mode, " << m.parameters << " parameters, weights " << m.weights
              << ", PyTorch " << m.torchVersion << "\n";
    std::cout << "capture: " << run.capture.method << " (" << run.capture.note << "), " << run.capture.operators.size()
              << " operators, " << run.capture.fusion.size() << " fusion candidates\n";
    std::cout << "forward here: " << fixed(m.forwardMs, 2) << " ms CPU call time (context only, not a GPU figure)\n\n";
    std::cout << model_capture::rankingText(run.folder) << "\n" << model_capture::problemsText(run.folder) << "\n";
    std::cout << "wrote " << run.dir.string() << "/ (model.json, ranking.txt, one folder per problem)\n"
              << "next: kernelloop-cli check " << run.dir.string() << "/<problem>/problem.json; kernelloop-cli "
              << "campaign --dir " << run.dir.string() << " (GPU); then a winner in each folder and "
              << "kernelloop-cli model-patch " << run.dir.string() << " -o patch.py\n";
    return run.folder.problems.empty() ? Failure : Ok;
}

const CommandRegistration registration([](CLI::App& app) -> std::function<int()> {
    auto o = std::make_shared<ModelCommandOptions>();
    auto* sub = app.add_subcommand("model",
        "Capture a model (KernelBench-style Model/get_inputs/get_init_inputs, or get_model/get_inputs): rank its "
        "operators and write the hot ones as problem folders");
    sub->add_option("file", o->file, "the model file (.py)")->required();
    sub->add_option("-o,--output", o->output, "the folder to write (default: the file's name, here)");
    sub->add_option("--top", o->top,
        "this many operators become problems (default: the fewest covering 80% of the estimate, at most 8)");
    sub->add_option("--seed", o->seed, "torch.manual_seed for the model's weights (default 0)");
    sub->add_flag("--eval", o->eval, "capture in eval mode (default: the file's KL_EVAL, else as built)");
    sub->add_flag("--train", o->train, "capture in training mode");
    sub->add_option("--timeout", o->timeoutSeconds, "seconds each helper run may take (default 300)");
    sub->add_flag("--force", o->force, "replace a capture already in the folder");
    return [o] { return runModel(*o); };
});

} // namespace

} // namespace kl::cli

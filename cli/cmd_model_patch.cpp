// kernelloop-cli model-patch DIR -o patch.py [--force]
// The winners of a captured model's problems (winner.py: a PyTorch function, the CPU stand-in for a
// kernel; kernel.cu: a CUDA kernel, compiled here into a cubin) put back into the model as one Python
// module of guarded custom operators. core/model_capture/patch_writer.h.
#include "cli/command.h"

#include "core/model_capture/patch_writer.h"

#include <cstdio>
#include <iostream>
#include <memory>

namespace kl::cli {

namespace {

int runPatch(const model_capture::PatchOptions& o)
{
    const auto written = model_capture::writePatch(o);
    std::cout << "wrote " << written.file.string() << ": " << written.included << " of " << written.problems.size()
              << " problems put back\n";
    for (const auto& line : written.problems) {
        char share[16];
        std::snprintf(share, sizeof share, "%.1f%%", 100.0 * line.share);
        std::cout << "  " << line.name << " (" << share
                  << " of the estimate): " << (line.kind.empty() ? "left out, " + line.why : line.kind) << "\n";
    }
    std::cout << "a cuda-cubin kernel needs a GPU to test (its driver path has not run yet); a pytorch-function "
                 "winner is the CPU stand-in for a kernel\n"
              << "next: kernelloop-cli model-check MODEL.py --patch " << written.file.string() << "\n";
    return Ok;
}

const CommandRegistration registration([](CLI::App& app) -> std::function<int()> {
    auto o = std::make_shared<model_capture::PatchOptions>();
    auto* sub = app.add_subcommand("model-patch",
        "Write one Python module that puts the winners of a captured model's problems back into the model");
    sub->add_option("dir", o->from, "the folder kernelloop-cli model wrote")->required();
    sub->add_option("-o,--output", o->output, "the patch module to write (default: patch.py)");
    sub->add_flag("--force", o->force, "replace an existing patch file");
    return [o] { return runPatch(*o); };
});

} // namespace

} // namespace kl::cli

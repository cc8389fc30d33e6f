// kernelloop-cli import-kernelbench FILE.py|DIR... [-o DIR] [--baseline FILE] [--force] [--timeout S]
// Turns a KernelBench problem (a torch.nn.Module Model with get_inputs() / get_init_inputs()) into a
// KernelLoop problem folder: problem.json and reference.py (a PyTorch reference around Model); a
// baseline only when one is given (without one, PyTorch eager is the baseline and the session's first
// kernel comes from a model or from torch.compile). Several files or a folder: one problem folder each
// under -o, and a summary of what was imported and what was refused, and why. The import itself is
// core/session/kernelbench_import.h.
#include "cli/command.h"

#include "core/model/error.h"
#include "core/session/kernelbench_import.h"

#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

namespace kl::cli {

namespace {

namespace fs = std::filesystem;

struct ImportOptions : session::KernelBenchImport {
    std::vector<std::string> files; // as given: files and folders
};

int runImport(const ImportOptions& o)
{
    const auto imported = session::importKernelBench(o);
    const Problem& problem = imported.problem;
    std::cout << "imported " << fs::path(o.file).filename().string() << " into " << imported.problemFile.string()
              << "\n  sizes: ";
    for (const auto& [name, value] : problem.mainSizes.front().values)
        std::cout << name << "=" << value << " ";
    std::cout << "(main), " << problem.fuzzSizes.size() << " fuzz size sets\n  inputs:";
    for (const auto& t : problem.inputs)
        std::cout << " " << t.name;
    std::cout << "  outputs:";
    for (const auto& t : problem.outputs)
        std::cout << " " << t.name;
    std::cout << "\n  bytes: " << problem.bytesExpression << "\n";
    for (const auto& note : imported.notes)
        std::cout << "  " << note << "\n";
    for (const auto& c : problem.sizeConstraints)
        std::cout << "  constraint: " << c << "\n";
    if (!problem.fixedSizes.empty())
        std::cout << "  fixed sizes: " << problem.fixedSizes << "\n";
    for (const auto& [sizes, reason] : imported.droppedFuzz)
        std::cout << "  left out fuzz sizes " << sizes << ": " << reason << "\n";
    if (!problem.flopsExpression.empty())
        std::cout << "  flops: " << problem.flopsExpression << "\n";
    if (!problem.hasBaselineKernel())
        std::cout << "  no kernel yet: PyTorch eager is the baseline; `tune --proposer llm` has a model write the "
                     "first kernel, `tune` alone starts from torch.compile's\n";
    return Ok;
}

// Several problems: one folder each under -o (the current folder by default), each refusal a row of the
// summary rather than the end of the import. Failure unless every file was imported.
int runImports(ImportOptions o)
{
    if (o.timeoutSeconds < 1 || o.timeoutSeconds > 3600)
        throw Error("cli.bad-option", {}, "--timeout", "give 1 to 3600 seconds");
    const auto files = session::kernelBenchFiles(o.files);
    if (files.empty())
        throw Error("kernelbench.no-file", o.files.empty() ? std::string() : o.files.front(), {},
            "no KernelBench .py files to import");
    const bool one = files.size() == 1 && !fs::is_directory(o.files.front());
    if (one) {
        o.file = files.front();
        return runImport(o);
    }
    if (!o.baseline.empty())
        throw Error("cli.bad-option", {}, "--baseline", "a baseline goes with one file, not with several");
    const fs::path parent = o.output.empty() ? fs::path(".") : fs::path(o.output);
    std::vector<std::pair<std::string, std::string>> refused; // file, "category: message"
    int imported = 0;
    for (const auto& file : files) {
        ImportOptions each = o;
        each.file = file;
        each.output = (parent / fs::path(file).stem()).string();
        try {
            runImport(each);
            ++imported;
        } catch (const Error& e) {
            refused.emplace_back(file, e.category() + ": " + e.message());
        }
    }
    std::cout << "\nimported " << imported << " of " << files.size() << " into " << parent.string() << "\n";
    for (const auto& [file, why] : refused)
        std::cout << "  refused " << fs::path(file).filename().string() << ": " << why << "\n";
    return refused.empty() ? Ok : Failure;
}

const CommandRegistration registration([](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<ImportOptions>();
    auto* sub = app.add_subcommand(
        "import-kernelbench", "Turn a KernelBench problem (Model, get_inputs, get_init_inputs) into a problem folder");
    sub->add_option("files", options->files, "KernelBench problems (.py files, or folders of them)")->required();
    sub->add_option("-o,--output", options->output,
        "the problem folder to write (default: the file's name); with several files, the folder that holds one "
        "problem folder each (default: here)");
    sub->add_option("--baseline", options->baseline, "a starting candidate (.py Triton or .cu CUDA) to copy in");
    sub->add_option("--timeout", options->timeoutSeconds, "seconds the import may take (default 120)");
    sub->add_flag("--force", options->force, "replace a problem already in the folder");
    return [options] { return runImports(*options); };
});

} // namespace

} // namespace kl::cli

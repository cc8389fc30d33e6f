#include "core/model_capture/patch_writer.h"

#include "core/compile/compiler.h"
#include "core/compile/python_tool.h"
#include "core/model/candidate.h"
#include "core/model/error.h"
#include "core/model/input_file.h"
#include "core/model/launch_plan.h"
#include "core/model/problem.h"
#include "core/model_capture/capture_json.h"

#include <fstream>

namespace kl::model_capture {

namespace {

namespace fs = std::filesystem;

// A CUDA winner compiled here (NVRTC needs no GPU) and planned at the problem's one size set.
bool cudaEntry(const fs::path& dir, PatchEntry& entry, std::string& why)
{
    const Problem problem = loadProblem(dir / "problem.json");
    const Candidate candidate = loadCandidate((dir / "kernel.cu").string());
    const auto tunables = candidate.defaults();
    CompileOptions options;
    options.arch = problem.arch.empty() ? "sm_90" : problem.arch;
    options.tunables = tunables;
    options.includeDir = dir;
    const auto compiled = compileCandidate(candidate, options);
    if (!compiled.ok) {
        why = "kernel.cu does not compile: " + compiled.summary;
        return false;
    }
    const auto plan = planLaunches(problem, candidate, problem.mainSizes.front(), tunables);
    entry.cubin = compiled.cubin;
    for (const auto& b : plan.buffers)
        if (b.role == PlannedBuffer::Role::Scratch)
            entry.scratch.emplace_back(b.name, b.bytes());
    for (const auto& l : plan.launches) {
        PatchLaunch launch;
        const auto* resources = compiled.kernel(l.kernel);
        launch.symbol = resources ? resources->loweredName : l.kernel;
        launch.grid = l.grid;
        launch.block = l.block;
        launch.sharedBytes = l.sharedBytes;
        for (const auto& a : l.args)
            launch.args.push_back(
                { a.kind == PlannedArg::Kind::Buffer, a.buffer, std::string(dtypeName(a.type)), a.value });
        entry.launches.push_back(std::move(launch));
    }
    entry.source = candidate.source;
    return true;
}

} // namespace

PatchWritten writePatch(const PatchOptions& o)
{
    const fs::path dir(o.from);
    const ModelFolder folder = readModelFolder(dir);
    const fs::path out = o.output.empty() ? fs::path("patch.py") : fs::path(o.output);
    if (fs::exists(out) && !o.force)
        throw Error("model.exists", out.string(), {}, "the patch file exists; --force replaces it");
    const auto runtimePath = pythonHelperPath("model_patch_runtime.py", "KL_MODEL_PATCH_RUNTIME");
    if (!fs::is_regular_file(runtimePath))
        throw Error("model.missing-helper", runtimePath.string(), {},
            missingHelperMessage(runtimePath, "KL_MODEL_PATCH_RUNTIME"));
    PatchWritten written;
    written.file = out;
    std::vector<PatchEntry> entries;
    for (const auto& p : folder.problems) {
        PatchProblemLine line { p.name, {}, {}, p.share };
        const fs::path pdir = dir / p.name;
        PatchEntry entry;
        entry.problem = &p;
        if (p.patchMode == "none") {
            line.why = "no place in the model to put it back: " + p.patchWhy;
        } else if (fs::is_regular_file(pdir / "winner.py")) {
            entry.kind = "pytorch-function";
            entry.file = "winner.py";
            entry.source = readInputFile(pdir / "winner.py", 512 * 1024, "winner");
            if (entry.source.find("def kernel(") == std::string::npos
                && entry.source.find("\nkernel =") == std::string::npos)
                line.why = "winner.py defines no kernel(...)";
        } else if (fs::is_regular_file(pdir / "kernel.cu")) {
            entry.kind = "cuda-cubin";
            entry.file = "kernel.cu";
            try {
                if (!cudaEntry(pdir, entry, line.why))
                    entry.kind.clear();
            } catch (const Error& e) {
                line.why = "kernel.cu: [" + e.category() + "] " + e.message();
            }
        } else if (fs::is_regular_file(pdir / "kernel.py")) {
            line.why = "a Triton winner (kernel.py) is not put back by this version: export its cubin as "
                       "kernel.cu's, or write winner.py";
        } else {
            line.why = "no winner (winner.py or kernel.cu) in " + pdir.string();
        }
        if (line.why.empty() && !entry.kind.empty()) {
            line.kind = entry.kind;
            entries.push_back(std::move(entry));
            ++written.included;
        }
        written.problems.push_back(std::move(line));
    }
    if (entries.empty())
        throw Error("model.no-winners", dir.string(), {},
            "no problem of this model has a winner to put back (winner.py, a PyTorch function kernel(...), or "
            "kernel.cu)");
    std::string text = "\"\"\"KernelLoop patch for the model " + folder.model.file
        + ", written by kernelloop-cli model-patch from " + fs::absolute(dir).string() + ".\n\n"
        + "    import patch; fast = patch.apply(model); fast(*inputs); print(patch.report())\n\n" + "Kernels put back ("
        + std::to_string(written.included) + "):\n";
    for (const auto& line : written.problems)
        if (!line.kind.empty())
            text += "  " + line.name + " (" + line.kind + ")\n";
    text += "\"\"\"\n";
    text += readInputFile(runtimePath, 1024 * 1024, "patch runtime");
    text += "\n\nKL_TABLE = _kl_json.loads(" + pythonStringLiteral(patchTableJson(folder, entries)) + ")\n";
    text += "OPERATORS = _load_operators()\n";
    std::ofstream file(out, std::ios::binary);
    file << text;
    if (!file)
        throw Error("model.cannot-write", out.string(), {}, "cannot write the patch");
    return written;
}

} // namespace kl::model_capture

#pragma once
// A KernelBench problem (a torch.nn.Module Model with get_inputs() / get_init_inputs()) turned into a
// KernelLoop problem folder: problem.json and reference.py (a PyTorch reference around Model), and a
// baseline only when one is given: without one the problem has no kernel yet, PyTorch eager is its
// baseline and the first kernel comes from a model or torch.compile. The Python helper
// python/kernelloop/kernelbench_import.py does the introspection (Debian's CPU PyTorch will do);
// here the folder is written and loaded back as any problem is, so what is written is checked.
// The CLI's import-kernelbench and a .py file given to `tune` or to the GUI's New Session use it.
#include "core/model/problem.h"

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace kl::session {

struct KernelBenchImport {
    std::string file; // the KernelBench .py file
    std::string output; // the problem folder; empty: the problem's name, here
    std::string baseline; // a starting candidate (.py Triton or .cu CUDA) to copy in; empty: none
    int timeoutSeconds = 120;
    bool force = false; // replace a problem already in the folder
};

struct ImportedProblem {
    std::filesystem::path problemFile;
    Problem problem;
    std::vector<std::pair<std::string, std::string>> droppedFuzz; // size set (JSON), why it was left out
    // What the import decided and why: a size held to a constraint the Model declares (a multiple of its
    // groups, at least its kernel), a size left at KernelBench's value, parameters packed into one buffer.
    std::vector<std::string> notes;
};

// Throws kl::Error "kernelbench.<kind>": no-file, exists, cannot-write, missing-helper (the
// installation lacks python/kernelloop/kernelbench_import.py), needs-pytorch, timeout,
// helper-died, random-ops, data-dependent, forward-failed, ... with the helper's message; and the
// problem's own categories when what was written does not load.
ImportedProblem importKernelBench(const KernelBenchImport& options);

// A folder's files import in one warm helper (python/kernelloop/kernelbench_import.py --serve: PyTorch
// imported once, a forked child per file, killed at its time limit); KL_KERNELBENCH_WARM=0 starts a
// Python per file instead.

// The .py files to import: each file given, and the .py files directly in each folder given (sorted).
std::vector<std::string> kernelBenchFiles(const std::vector<std::string>& given);

// The problem of a PyTorch (KernelBench) file: FOLDER/STEM/problem.json beside it when an earlier
// import wrote one, else imported there now.
ImportedProblem problemFromPyTorchFile(const std::string& file);

} // namespace kl::session

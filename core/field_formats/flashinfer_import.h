#pragma once
// A FlashInfer Trace Definition as a KernelLoop problem folder (problem.json and its reference), so a
// FlashInfer-Bench problem can be tuned here.
//
// Axes become size symbols; each workload of the definition (workloads/**.jsonl) gives a size set, its
// var axes and the const axes' values (a workload marked "fuzz" by an export of ours is a fuzz size, the
// rest main sizes, at most 64; more go to the fuzz sizes). Tensor inputs and outputs keep their names,
// dtypes and shapes; inputs of shape null become scalars with the workloads' value. The reference is the
// definition's PyTorch code as written, then a reference(**tensors, **scalars) that calls its run(...) in
// the definition's order, as KernelLoop's reference worker calls it. There is no baseline kernel: PyTorch
// eager is the time to beat, the first kernel comes from `tune`. bytes is each input read and each output
// written once. What FlashInfer Trace cannot say (tolerances, distributions, FLOPs) is taken from the
// definition's "kernelloop" field where an export of ours wrote one, else KernelLoop's defaults.
//
// Refusals are kl::Error "trace.*": not-a-dataset, no-definition, which-definition (several, none named),
// unknown-definition, bad-definition (the schema check's first problems), unsupported-dtype, scalar-output,
// unsupported-shape (a 0-D tensor), no-workload, no-scalar-value, no-reference (a CUDA reference stub without its
// source), output-exists.
#include <filesystem>
#include <string>
#include <vector>

namespace kl::fieldformats {

struct TraceImportOptions {
    std::string definition; // which definition, when the dataset holds several
    std::filesystem::path output; // the problem folder to write (default: ./<definition name>)
    bool overwrite = false;
};

struct ImportedProblem {
    std::string definition;
    std::filesystem::path problemFile;
    int mainSizes = 0;
    int fuzzSizes = 0;
    std::vector<std::string> notes; // what was changed on the way (inputs read from files drawn instead, ...)
};

// `source`: a dataset folder (definitions/ ...) or one definition's .json file inside one.
ImportedProblem importFlashInferTrace(const std::filesystem::path& source, const TraceImportOptions& options);

} // namespace kl::fieldformats

#pragma once
// kernelloop-cli model-patch: one Python module that registers each problem's winner as a PyTorch custom
// operator and puts it back into the model where it was captured, guarded at call time by the shapes,
// dtypes and strides it was verified for (python/kernelloop/model_patch_runtime.py, copied in; the table
// of kernels follows it).
//
// A winner is a file in its problem folder:
//   winner.py  a PyTorch function kernel(<the reference's arguments>) returning the outputs: the CPU
//              stand-in for a kernel, so the whole path runs and is tested without a GPU
//   kernel.cu  a CUDA candidate (the campaign's winner, `campaign-report --kernels` or `export-kernel`):
//              compiled here by NVRTC into a cubin, launched at the patch's site through the CUDA driver
//              with no compiler there, planned at the problem's size with its tunables' defaults.
//              NEEDS A GPU TO TEST: written and compiled here, never launched yet.
//   kernel.py  a Triton candidate: not put back by this version (named in the output, why).
#include "core/model_capture/model_folder.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kl::model_capture {

struct PatchLaunchArg {
    bool buffer = false;
    std::string name; // buffer
    std::string type; // value: i32, i64, f32, f64
    double value = 0.0;
};

struct PatchLaunch {
    std::string symbol; // the cubin's (lowered) name
    std::array<std::int64_t, 3> grid { 1, 1, 1 };
    std::array<std::int64_t, 3> block { 1, 1, 1 };
    std::int64_t sharedBytes = 0;
    std::vector<PatchLaunchArg> args;
};

struct PatchEntry {
    const FolderProblem* problem = nullptr;
    std::string kind; // pytorch-function | cuda-cubin
    std::string file; // winner.py, kernel.cu
    std::string source;
    std::string cubin; // binary
    std::vector<PatchLaunch> launches;
    std::vector<std::pair<std::string, std::int64_t>> scratch; // name, bytes
};

struct PatchOptions {
    std::string from; // the model folder
    std::string output; // patch.py
    bool force = false;
};

struct PatchProblemLine {
    std::string name;
    std::string kind; // what was put in; empty: nothing
    std::string why; // left out: why
    double share = 0.0;
};

struct PatchWritten {
    std::filesystem::path file;
    std::vector<PatchProblemLine> problems;
    int included = 0;
};

// Throws kl::Error "model.not-a-model-folder", "model.exists" (patch.py there, no --force),
// "model.no-winners" (no problem has a winner), "model.missing-helper", "model.cannot-write".
PatchWritten writePatch(const PatchOptions& options);

// The table the runtime reads (JSON text, capture_json.cpp).
std::string patchTableJson(const ModelFolder& folder, const std::vector<PatchEntry>& entries);

} // namespace kl::model_capture

#pragma once
// The folder `kernelloop-cli model` writes: one problem folder per chosen group of operators and
// model.json, which records the model, the capture, the ranking (labelled estimate or measured) and for
// each problem where it goes back into the model and the tensors it was verified for (the patch's guards).
// model-patch reads it back.
#include "core/model_capture/model_capture.h"
#include "core/model_capture/ranking.h"

#include <filesystem>
#include <string>
#include <vector>

namespace kl::model_capture {

struct FolderProblem {
    std::string name; // its folder, under the model folder
    std::vector<std::string> ops;
    std::vector<std::string> labels;
    bool fused = false;
    double share = 0.0;
    double timeUs = 0.0;
    std::vector<ProblemTensor> inputs;
    std::vector<ProblemTensor> outputs;
    std::string patchMode;
    std::string patchWhy;
    std::string patchSpec;
};

struct ModelFolder {
    ModelInfo model;
    std::string method;
    std::string note;
    Ranking ranking;
    std::vector<FolderProblem> problems;
    std::vector<ProblemRefusal> refused;
};

// Throws kl::Error "model.not-a-model-folder" (no model.json) and "model.bad-folder" (unreadable).
ModelFolder readModelFolder(const std::filesystem::path& dir);
void writeModelFolder(const std::filesystem::path& dir, const ModelFolder& folder);

} // namespace kl::model_capture

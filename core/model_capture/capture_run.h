#pragma once
// `kernelloop-cli model FILE.py`: the model captured at its own sizes by the helper, its operators
// ranked (an estimate without a GPU, said so), the chosen groups written as problem folders beside
// model.json, each loaded back as any problem is, so what `check` would refuse is refused here.
#include "core/model_capture/model_capture.h"
#include "core/model_capture/model_folder.h"
#include "core/model_capture/ranking.h"

#include <filesystem>
#include <optional>
#include <string>

namespace kl::model_capture {

struct ModelOptions {
    std::string file;
    std::string output; // the folder; empty: the file's stem, here
    std::optional<int> top;
    int seed = 0;
    std::optional<bool> evalMode;
    int timeoutSeconds = 300;
    bool force = false;
};

struct ModelRun {
    std::filesystem::path dir;
    Capture capture;
    ModelFolder folder;
};

// Throws kl::Error "model.<category>": no-file, missing-helper, missing-package (no PyTorch), timeout,
// helper-died, syntax-error, import-failed, no-model, no-inputs, init-failed, forward-failed, exists,
// cannot-write, ...
ModelRun captureModel(const ModelOptions& options);

// Runs python/kernelloop/model_capture.py with `request`; the reply's text. Shared with model-check.
std::string runModelHelper(const std::string& request, const std::string& file, int timeoutSeconds);

} // namespace kl::model_capture

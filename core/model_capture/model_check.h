#pragma once
// kernelloop-cli model-check: the patched model against the original on fresh inputs (tolerances), both
// timed, the fallbacks of each patched operator counted, the gain expected from the per-operator speedups
// and shares (Amdahl) beside the measured one. Where it ran on the CPU every time is CPU call time
// (wall clock around the Python call), never a GPU figure; the report says which.
#include <optional>
#include <string>
#include <vector>

namespace kl::model_capture {

struct CheckRequest {
    std::string file; // the model file, absolute
    std::string patch; // the patch module, absolute
    int seed = 0; // the model's weights, as captured
    int inputSeed = 1000; // fresh inputs: not the captured ones
    std::optional<int> batch; // inputs with another first dimension: the guards must fall back
    int repeats = 5;
    double atol = 1e-4;
    double rtol = 1e-4;
    std::optional<bool> evalMode;
};

struct PatchedOperator {
    std::string name;
    std::string kind; // pytorch-function | triton | cuda-cubin
    bool applied = false;
    std::string why; // not applied: why
    int calls = 0;
    int fallbacks = 0; // calls whose inputs were not what it was verified for: PyTorch ran
    std::string lastFallback; // the guard that failed last
    double share = 0.0; // of the original forward's time (measured here)
    std::optional<double> speedup; // its own time in the model, original over patched
};

struct ModelCheckReport {
    std::string timing; // "CPU call time ..." or the GPU's
    std::string registration; // how the ops were registered (torch.library.Library, custom_op, triton_op)
    bool matches = false;
    double maxAbsDiff = 0.0;
    std::string mismatch; // where it did not match
    int trials = 0;
    double originalMs = 0.0;
    double patchedMs = 0.0;
    double measuredSpeedup = 0.0;
    std::optional<double> expectedSpeedup; // Amdahl from the per-operator speedups and shares
    std::vector<PatchedOperator> ops;
    std::string inputs; // what the fresh inputs were
};

ModelCheckReport checkPatchedModel(const CheckRequest& request, int timeoutSeconds);

} // namespace kl::model_capture

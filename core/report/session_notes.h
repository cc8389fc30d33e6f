#pragma once
// What a reader of a session is told beside its iterations, by `kernelloop-cli history` and by the
// window's history alike: how the session stopped (with pass@k and speedup@k, the test-time scaling
// of k candidates a round), a warning when its results come from more than one GPU model (speedups
// of two models never compare), and the hypothesis log: what each proposer expected against what was
// measured against the best of its time.
#include "core/figures/iteration_figures.h"
#include "core/loop/loop_values.h"
#include "core/store/records.h"
#include "core/store/store.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kl::report {

// "stopped: iteration budget of 4 spent; 5 candidates in 5.6 s (53.7/min); k=1: pass@k 0.75, speedup@k
// 1.19x; 34554 LLM tokens" (pass@k where the summary has it, tokens where there were any).
std::string stopLine(const LoopSummary& summary);

// The GPU models that measured a session's results, with how many results each.
using GpuModels = std::map<std::string, int>;
GpuModels gpuModelsOf(const std::map<int, store::Store::MeasuredOn>& runners);
GpuModels gpuModelsOf(const std::vector<figures::IterationFigures>& figures);
// "warning [store.mixed-gpu-models]: results of 2 GPU models (NVIDIA A100: 3, NVIDIA H200: 5); each
// speedup is against the baseline on its own GPU, never compare across models"; empty for one model.
std::string mixedModelsWarning(const GpuModels& models);

// One line of the hypothesis log: an iteration whose proposer said what it expected.
struct HypothesisEntry {
    int index = 0;
    std::string proposer; // store::proposedBy, "-" when unknown
    std::string verdict; // the result's category, else the iteration's state
    std::optional<double> predictedSpeedup; // over the incumbent, as the proposer expected
    std::optional<double> speedup; // measured, over the baseline
    std::string measured; // the iteration's last decision: measured against the best then
    std::string hypothesis; // its first line
};
// The iterations of `rows` with a hypothesis or a prediction, in order; `decisionReasons` by iteration
// index (Store::sessionDecisionReasons).
std::vector<HypothesisEntry> hypothesisLog(
    const std::vector<store::IterationRow>& rows, const std::map<int, std::string>& decisionReasons);

} // namespace kl::report

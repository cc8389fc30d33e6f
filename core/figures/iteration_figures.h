#pragma once
// The figures of one stored iteration as the workbench's charts draw them: per timed main size the
// latency (median, p20, p80), the baseline timed in the same job, bandwidth and % of the same-size
// copy, achieved occupancy and the warp stall reasons; per iteration the main kernel's registers and
// theoretical occupancy. Read from stored results; never mixes figures of two sizes.
#include "core/store/records.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kl::store {
class Store;
}

namespace kl::figures {

struct SizeFigures {
    std::string size; // the timed case's label: "8192x4096"
    std::optional<double> medianUs, p20Us, p80Us;
    std::optional<double> baselineUs; // the problem's baseline, timed in the same job
    std::optional<double> gbps, pctOfCopy, speedup;
    // Speed of light: the floor (copy or FLOPs ÷ the precision's ceiling) over the median, and which binds.
    std::optional<double> pctOfSol;
    std::optional<Bound> solBound;
    // The ceiling the FLOPs are held to and why ("FP32 CUDA cores: not a matrix product"); absent in
    // results of older runners.
    std::optional<Precision> compute;
    std::optional<CeilingReason> computeReason;
    std::optional<double> achievedOccupancy; // % of peak warps (CUPTI)
    // Cycles per issued instruction in each stall reason, in stallReasons() order, "selected"
    // left out; empty when the iteration was profiled without the stall metric set.
    std::vector<std::pair<std::string, double>> stalls;
    // PyTorch as a contender (problems with a PyTorch reference; contenders.h reads them): the
    // reference's eager and torch.compile medians timed in the same job, the candidate's speedups
    // over them, and why torch.compile was not timed when it was not.
    std::optional<double> eagerUs, torchCompileUs, speedupVsEager, speedupVsCompile;
    std::string torchCompileError;
};

struct IterationFigures {
    int index = 0;
    std::string status; // "ok" | "failed" | "error"; empty without a result
    std::string category; // "passed", "wrong-result", "compile.syntax", ... or the iteration's state
    bool passed = false;
    std::optional<store::CandidateRecord::Proposer> proposer;
    std::vector<SizeFigures> sizes; // in timing order; empty when the iteration was not timed
    std::optional<int> registers; // per thread, of the main kernel
    std::optional<double> theoreticalOccupancy; // 0..1
    std::string occupancyLimiter;
    // Which runner measured it and on which GPU (results.runner_endpoint and the device), for the
    // history's GPU column: "local:0", "NVIDIA H200", 0. Empty (and -1) without a result.
    std::string endpoint;
    std::string gpuModel;
    int gpu = -1;

    const SizeFigures* atSize(const std::string& size) const; // nullptr when not timed at it
};

IterationFigures figuresOf(const store::IterationDetail& detail);

// Every committed iteration of a session, in index order, read for the whole session in a few
// queries (the per-size rows, the profile's metrics, the static telemetry, the runners). The same figures as
// figuresOf() of each iteration; the baseline's median comes from the size's speedup there.
std::vector<IterationFigures> readFigures(const store::Store& store, std::int64_t sessionId);

// The iteration's speedup over PyTorch eager (torch.compile) for the history: each size's own,
// against the contender timed in the same job; over several sizes their geometric mean, as the
// history's speedup is. Absent when a timed size lacks it (not a PyTorch reference, or not compiled).
std::optional<double> speedupVsEager(const IterationFigures& figures);
std::optional<double> speedupVsCompile(const IterationFigures& figures);
// Whether any iteration was timed against PyTorch contenders (a problem with a PyTorch reference).
bool hasContenders(const std::vector<IterationFigures>& figures);
// Whether any iteration says which runner or GPU measured it.
bool hasMeasuredOn(const std::vector<IterationFigures>& figures);

// The sizes timed in any iteration, in first-seen order.
std::vector<std::string> timedSizes(const std::vector<IterationFigures>& figures);

} // namespace kl::figures

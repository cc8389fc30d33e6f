#pragma once
// Where a model's time goes. Without a GPU it is an ESTIMATE, never a measurement: each operator's FLOPs
// and bytes at the model's shapes against the stated ceilings of a nominal device, max(bytes ÷ copy
// bandwidth, FLOPs ÷ the precision's ceiling) — a matrix product in its inputs' precision, anything else
// on the CUDA cores (core/model/precision.h). With a runner GPU (later) the same table holds measured
// device time, and `measured` says so. Then the operators that become problems: the top N, or by
// default the fewest covering 80% of the total (at most 8), each fusion chain headed by a chosen
// operator offered as one problem.
#include "core/model/precision.h"
#include "core/model_capture/model_capture.h"

#include <optional>
#include <string>
#include <vector>

namespace kl::model_capture {

struct RankedOperator {
    std::string id;
    std::string label;
    std::string kind;
    double flops = 0.0;
    double bytes = 0.0;
    double timeUs = 0.0; // estimated (or measured, when the ranking is)
    double share = 0.0; // of the forward's total, 0..1
    Bound bound = Bound::Memory;
    Precision precision = Precision::Fp32;
};

struct Ranking {
    bool measured = false; // false: an estimate from FLOPs and bytes
    std::string basis; // how the times were had: the formula, the device and its ceilings
    std::string device;
    double copyGbps = 0.0;
    double totalUs = 0.0;
    std::vector<RankedOperator> rows; // the costliest first; operators that move nothing left out
};

// Throws kl::Error "model.no-device-table" when the architecture is not one the ceilings know.
Ranking estimateRanking(const Capture& capture, const std::string& computeCapability = "9.0");

struct ProblemGroup {
    std::string name; // the problem folder's name: "01_network_0" ("_fused" for a chain)
    std::vector<std::string> ops;
    bool fused = false;
    double share = 0.0; // of the ranking's total: the operators it replaces
    double timeUs = 0.0;
};

// `top`: exactly that many of the ranking's operators (chains counted once); none: the fewest covering
// 80% of the total, at most 8. Operators that draw random numbers or have no activation input are
// passed over (nothing a kernel could match or speed up).
std::vector<ProblemGroup> chooseProblems(const Capture& capture, const Ranking& ranking, std::optional<int> top);

// "estimate, not measured" or "measured": the label every table of the ranking carries.
std::string rankingLabel(const Ranking& ranking);

} // namespace kl::model_capture

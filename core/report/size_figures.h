#pragma once
// How a main size's figures read in text (show, history, the exported kernel's header), so that
// no line mixes the figures of two sizes and an aggregate says that it is one.
#include "core/figures/iteration_figures.h"

#include <optional>
#include <string>

namespace kl::report {

// A figure with `decimals` places, "-" when absent.
std::string figureText(const std::optional<double>& value, int decimals);

// "71.2% of SOL (compute; ceiling FP16 tensor: a matrix product)": speed of light, the bound that binds
// and the ceiling the FLOPs are held to and why (ceilingText()), each where known; empty when the runner
// gave no speed of light.
std::string solText(const std::optional<double>& pctOfSol, const std::optional<Bound>& bound,
    const std::optional<Precision>& compute = std::nullopt, const std::optional<CeilingReason>& reason = std::nullopt);
std::string solText(const figures::SizeFigures& figures);

// "M=4096,N=1024: median 72.13 us (p20 71.90, p80 72.40), 1599 GB/s, 37.4% of copy, 37.4% of SOL (memory;
// ceiling FP32 CUDA cores: not a matrix product), 1.23x"
std::string sizeFiguresText(const figures::SizeFigures& figures);

// The size's PyTorch contenders: "vs eager 1.42x (eager 128.70 us), vs torch.compile 0.97x
// (torch.compile 88.10 us)", or "torch.compile not timed: ..."; empty without a PyTorch reference.
// sizeFiguresText appends it after "; ".
std::string contendersText(const figures::SizeFigures& figures);

// "1.23x (geometric mean over 2 main sizes)", or "1.23x" for one size; "-" when absent.
std::string aggregateSpeedupText(const std::optional<double>& speedup, std::size_t sizes);

} // namespace kl::report

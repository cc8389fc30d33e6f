#pragma once
// Step 5 of evaluate, opt-in: CUPTI PC sampling (cupti_pcsampling.h) of the candidate at one main
// size, after timing and range profiling and never overlapping either. Each sampled PC is mapped to
// its source file and line through the cubin's line info (cuptiGetSassToSourceCorrelation).
#include "core/lines/pc_sampling.h"
#include "runner/device.h"
#include "runner/program.h"

#include <functional>
#include <string>

namespace kl::runner {

class PcSampler {
public:
    explicit PcSampler(const Device& device);

    // Turns sampling on for the context, loads `cubin` afresh (CUPTI maps the PCs of the modules
    // it sees loaded) and calls `runOnce` with that module until enough samples are in (or a
    // bound on runs and time). Never throws for CUPTI trouble: the value comes back unavailable
    // with the reason. A CUDA failure while the kernels run is rethrown (after sampling is off).
    lines::PcSampling sample(
        const std::string& cubin, const std::function<void(LoadedModule&)>& runOnce, const std::string& caseLabel);

private:
    const Device& m_device;
};

} // namespace kl::runner

#pragma once
// The device's measured tensor ceiling for describe: the runner kernel kl_mma_peak (mma.sync m16n8k16,
// fp16 in, fp32 accumulate, registers only) on 8 warps per block and 4 blocks per SM, timed like a
// candidate; measured once per process, beside the copy bandwidth. Speed of light uses the theoretical
// ceiling (core/model/precision.h); this says how much of it a plain mma.sync loop reaches here.
#include "runner/runner_kernels.h"
#include "runner/timer.h"

namespace kl::runner {

// FLOP of one launch of kl_mma_peak: blocks x 8 warps x iterations x 8 chains x 4096 (2 x 16 x 8 x 16).
double mmaPeakFlops(std::int64_t blocks, int iterations);

// TFLOP/s; 0 before sm_80 (no m16n8k16 on the device).
double measureTensorPeak(const Device& device, const RunnerKernels& ownKernels, Timer& timer);

} // namespace kl::runner

#pragma once
// The kernel torch.compile (Inductor) writes for a problem's PyTorch reference, as a Triton candidate
// whose block sizes, num_warps and num_stages are tunables: a start for a problem with no kernel
// and no model (`tune --start inductor`). The Python helper python/kernelloop/inductor_kernel.py
// compiles the reference with dynamic shapes at two sizes and converts the one kernel it wrote; here
// the request is made, the reply read and its refusals categorised ("inductor.<kind>").
#include "core/model/candidate.h"
#include "core/model/problem.h"

#include <chrono>
#include <string>
#include <vector>

namespace kl {

struct InductorKernel {
    Candidate candidate;
    std::vector<std::string> notes; // where Inductor specialised (a literal size in the body, ...)
};

// The two sizes the helper runs at: the first main size, then the second main size, else the
// largest fuzz size whose every symbol differs from it and is at least 2 (torch.compile specialises
// 0 and 1), else the first fuzz size.
std::vector<const SizeSet*> inductorSizes(const Problem& problem);

// The helper's request: the reference, both sizes, every tensor's shape at each, the scalars.
// Throws "problem.no-pytorch-reference" when the reference is not PyTorch.
std::string inductorRequest(const Problem& problem);

// The helper's reply as a candidate (parsed as any Triton candidate), or kl::Error "inductor.<kind>"
// with the helper's message: several-kernels, no-kernel, specialised, launches, needs-inductor,
// needs-gpu, failed, ...
InductorKernel readInductorReply(const std::string& replyJson, const Problem& problem);

// The whole run (PyTorch 2 with Inductor, Triton and a GPU where the helper runs): $KL_INDUCTOR_HELPER,
// else pythonHelperPath("inductor_kernel.py").
InductorKernel inductorKernel(const Problem& problem, std::chrono::seconds limit = std::chrono::seconds(300));

} // namespace kl

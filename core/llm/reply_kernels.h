#pragma once
// The kernels a candidate's source defines, with their parameter lists, as the reply parser checks
// them against the launch lines: `__global__` functions in CUDA C++, `@triton.jit` functions in a
// Triton file. A light reading of the text, not a compiler: the compiler has the last word.
#include "core/model/candidate.h"

#include <map>
#include <string>
#include <vector>

namespace kl::reply {

struct KernelSignature {
    std::vector<std::string> parameters; // as written: "const half* __restrict__ x", "BLOCK_N: tl.constexpr"
};

std::map<std::string, KernelSignature> kernelsIn(const std::string& source, CandidateLanguage language);

bool isPointerParameter(const std::string& parameter); // CUDA: "T* x", "T x[]"
bool isConstexprParameter(const std::string& parameter); // Triton: "NAME: tl.constexpr"
std::string parameterName(const std::string& parameter); // Triton: "BLOCK_N: tl.constexpr = 64" → "BLOCK_N"

} // namespace kl::reply

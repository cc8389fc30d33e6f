#pragma once
// Compiler flags a CUDA candidate declares as tunables ("// @kl flag maxrregcount = 0 in 0, 32, 64"), so
// that a problem's baseline, the tuner and the engineer can vary them like any tunable: their values
// live in the candidate's TunableValues (stored, compared, shown with the others) and reach NVRTC as
// options instead of -D macros.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kl {

struct CompilerFlag {
    std::string_view name; // as declared: "maxrregcount"
    std::string_view meaning; // one clause for the review and the docs
    std::int64_t lowest = 0; // the values a declaration may list
    std::int64_t highest = 1;
};

// use_fast_math, lineinfo, maxrregcount (0: no limit), extra_device_vectorization, ftz, prec_div,
// prec_sqrt, fmad, ptxas_opt_level (ptxas -O0..-O3).
const std::vector<CompilerFlag>& compilerFlags();
const CompilerFlag* compilerFlag(std::string_view name);

// Why `value` is not a value of `flag` ("maxrregcount takes 0 (no limit) or 16..255"); empty when it is.
std::string compilerFlagValueProblem(const CompilerFlag& flag, std::int64_t value);

// The NVRTC options of one flag at `value`: {"-maxrregcount=32"}, {} for maxrregcount 0 or
// use_fast_math 0, {"--ftz=false"} for ftz 0.
std::vector<std::string> compilerFlagOptions(const CompilerFlag& flag, std::int64_t value);

// The options joined by spaces, for the review and `show`: "-use_fast_math -maxrregcount=32".
std::string compilerOptionsText(const std::vector<std::string>& options);

// The options of the flags a stored candidate's source declares, at `values` (its tunables), joined;
// empty when it declares none or its source does not parse. What the review's source header shows.
std::string compilerFlagsText(
    const std::string& source, const std::string& fileName, const std::map<std::string, std::int64_t>& values);

} // namespace kl

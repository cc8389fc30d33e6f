#pragma once
// A candidate: CUDA C++ source whose launch rule, tunable parameters, constraints and scratch
// buffers are declared in the source itself, in comment lines that start with "// @kl":
//
//   // @kl tunable THREADS = 256 in 64, 128, 256, 512, 1024
//   // @kl tunable VEC = 4 in 1..8 pow2
//   // @kl constraint THREADS * VEC <= 8192
//   // @kl scratch partial f32 [M * 64] zero
//   // @kl launch ln_gelu grid=(cdiv(M, ROWS)) block=(THREADS) smem=(0) args=(x, gamma, beta, y, M, N, eps)
//   // @kl flag maxrregcount = 0 in 0, 32, 64
//
// Tunables reach the kernel as preprocessor macros; a flag (core/model/compiler_flags.h) is a tunable
// that reaches NVRTC as an option instead. Launches run in the order written.
// A Triton candidate (a .py file) writes the same directives after "#" and launches with
//   # @kl launch ln_gelu grid=(M) num_warps=(W) num_stages=(S) args=(x, y, M, N, BLOCK_N=BLOCK_N)
// where NAME=EXPR arguments are the kernel's tl.constexpr parameters (over tunables only), the block
// is num_warps * 32 threads and shared memory is what Triton's compiler says.
// docs/formats.md is the reference for users.
#include "core/model/dtype.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kl {

using TunableValues = std::map<std::string, std::int64_t>;

struct Tunable {
    std::string name;
    std::int64_t defaultValue = 0;
    std::vector<std::int64_t> values; // allowed values, ascending, default among them
    int line = 0;
    bool compilerFlag = false; // declared with "@kl flag": an NVRTC option, not a macro
};

struct Constraint {
    std::string expression; // true (non-zero) when the configuration is allowed
    int line = 0;
};

struct ScratchBuffer {
    std::string name;
    DType dtype = DType::F32;
    std::string count; // element count, an expression over sizes and tunables
    bool zeroed = false; // cleared before every launch sequence
    int line = 0;
};

struct LaunchArg {
    std::string expression; // a buffer or scalar name, or an expression over sizes and tunables
    DType type = DType::I32; // for expressions: the C type passed ("x as i64"); ignored for names
    bool typeGiven = false;
};

// A tl.constexpr parameter of a Triton kernel: NAME=EXPR in args=(..), EXPR over tunables.
struct ConstexprArg {
    std::string name;
    std::string expression;
};

struct LaunchRule {
    std::string kernel;
    std::array<std::string, 3> grid { "1", "1", "1" };
    std::array<std::string, 3> block { "1", "1", "1" };
    std::string sharedBytes = "0"; // dynamic shared memory
    std::vector<LaunchArg> args;
    int line = 0;
    // Triton only: compile-time choices, expressions over tunables (Triton's defaults 4 and 3).
    std::string numWarps = "4";
    std::string numStages = "3";
    std::vector<ConstexprArg> constexprs;
};

enum class CandidateLanguage { Cuda, Triton };
const char* candidateLanguageName(CandidateLanguage language); // "cuda" | "triton"
// Triton for a file ending in ".py", else CUDA C++.
CandidateLanguage candidateLanguageOf(const std::string& fileName);

struct Candidate {
    std::string source;
    std::string fileName; // for messages; "candidate.cu" when it came from an editor or an LLM
    CandidateLanguage language = CandidateLanguage::Cuda; // from fileName's extension
    std::vector<Tunable> tunables;
    std::vector<Constraint> constraints;
    std::vector<ScratchBuffer> scratch;
    std::vector<LaunchRule> launches;

    const Tunable* tunable(const std::string& name) const;
    TunableValues defaults() const;
    // Defaults overridden by `overrides`; throws kl::Error ("candidate.unknown-tunable",
    // "candidate.value-not-allowed") for a name not declared or a value outside its set.
    TunableValues withOverrides(const TunableValues& overrides) const;
    // The one rule for values that may no longer fit (the editor's panel after the source changed):
    // the defaults, overridden by each requested value of a declared tunable that allows it; the rest
    // is dropped. withOverrides is the same rule, refusing instead of dropping.
    TunableValues applicable(const TunableValues& requested) const;
    // The values that become -D macros (every tunable but the compiler flags) and the NVRTC options of
    // the declared flags at `values` (a flag missing from `values` at its default).
    TunableValues macros(const TunableValues& values) const;
    std::vector<std::string> compilerOptions(const TunableValues& values) const;
};

// Largest source accepted (bytes): bigger is refused before it reaches the compiler.
constexpr std::size_t kMaxCandidateSourceBytes = 512 * 1024;
// Most values one tunable may have, and the largest magnitude of one (exact in a double).
constexpr std::size_t kMaxTunableValues = 100000;
constexpr std::int64_t kMaxTunableMagnitude = std::int64_t(1) << 53;

// Parses the declarations ("// @kl" in CUDA, "# @kl" in a Triton .py file). Throws kl::Error with category
// "candidate.*" and "line N": bad-name (not an identifier, or longer than kMaxNameLength), reserved-name (a tunable
// named like a keyword or __CUDA_ARCH__), bad-tunable, bad-constraint, bad-scratch, bad-launch, duplicate, ...
Candidate parseCandidate(std::string source, std::string fileName = "candidate.cu");
Candidate loadCandidate(const std::string& path);

} // namespace kl

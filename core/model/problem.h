#pragma once
// A problem: the operator to optimise, the shapes that matter, how to make inputs, how close a
// candidate must be to the reference, and how many bytes and FLOPs one call costs. The user
// writes it as JSON (docs/formats.md); loadProblem() checks every field and names the bad one.
#include "core/model/candidate.h"
#include "core/model/dtype.h"
#include "core/model/expression.h"
#include "core/model/precision.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kl {

struct SizeSet {
    std::string label; // "8192x4096", or what the file calls it
    std::map<std::string, std::int64_t> values;
    Symbols symbols() const;
};

struct Distribution {
    enum class Kind { Normal, Uniform, Constant, Integers };
    Kind kind = Kind::Normal;
    double a = 0.0; // normal: mean; uniform/integers: low; constant: value
    double b = 1.0; // normal: standard deviation; uniform/integers: high
};

struct TensorSpec {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::string> shape; // expressions over the size symbols, outermost first
    Distribution distribution; // inputs only
    // Extra elements after each row (an expression), so verification also runs on a strided,
    // non-contiguous layout. The kernel sees the row stride as the symbol stride_<name>.
    std::string rowPadding;
};

struct ScalarSpec {
    std::string name;
    DType dtype = DType::F32;
    double value = 0.0;
};

struct Tolerance {
    double atol = 0.0;
    double rtol = 0.0;
};

// A PyTorch reference: a .py file defining reference(**tensors, **scalars) that returns the
// outputs (one tensor, a tuple in the problem's order, or a dict by name) or writes them in place.
struct PythonReference {
    std::string source;
    std::string fileName;
};

struct Problem {
    std::string name;
    std::string description;
    std::string arch = "sm_90";
    std::filesystem::path file; // where it was loaded from
    std::filesystem::path dir; // its folder: the only folder candidates may #include from

    std::vector<std::string> symbols;
    std::vector<SizeSet> mainSizes;
    std::vector<SizeSet> fuzzSizes;
    std::vector<std::string> sizeConstraints; // every size set must satisfy these
    // "sizes.fixed": why the problem is verified at its main sizes only (an imported KernelBench problem
    // no size rule could be derived for: no fuzz sizes, values fresh every trial); empty: sizes vary.
    std::string fixedSizes;

    std::vector<TensorSpec> inputs;
    std::vector<TensorSpec> outputs;
    std::vector<ScalarSpec> scalars;
    std::map<DType, Tolerance> tolerances;

    std::filesystem::path referencePath;
    std::filesystem::path baselinePath;
    Candidate reference; // empty (no launches) when the reference is a PyTorch .py file
    // Empty (no source) when the problem has no kernel yet: "baseline" omitted or "eager". Only a
    // PyTorch reference allows that; PyTorch eager, timed in every job, is then the time to beat.
    Candidate baseline;
    std::optional<PythonReference> pythonReference;
    // What candidates are written in when there is no baseline kernel ("language"; Triton by default).
    CandidateLanguage preferredLanguage = CandidateLanguage::Triton;
    bool hasBaselineKernel() const { return !baseline.source.empty(); }
    // The language candidates are written in: the baseline's (a .py baseline is Triton), else the
    // problem's preferred one.
    CandidateLanguage language() const { return hasBaselineKernel() ? baseline.language : preferredLanguage; }
    // The file name a candidate written for this problem goes by: the baseline's, else kernel.py or
    // kernel.cu (by language) in the problem's folder.
    std::string candidateFileName() const;

    std::string bytesExpression;
    std::string flopsExpression;
    // What the FLOPs run in ("compute"); absent: derived from what the operator is (computeCeiling()).
    std::optional<Precision> compute;
    // Whether the problem is a matrix product (matmul, bmm, convolution, an einsum contraction,
    // attention's products): its arithmetic intensity, flops ÷ bytes from its own expressions, grows
    // with the sizes (each operand element feeds a whole row or column of products), where element-wise,
    // reduction and normalisation operators do a fixed number of FLOPs per byte at any size. Read at the
    // first main size against every symbol doubled; false without "flops".
    bool isMatrixProduct() const;
    // The ceiling its FLOPs are held to and why: "compute" where given; else a matrix product runs in
    // the inputs' narrowest precision (defaultPrecision(): tensor cores for f16/bf16/i8), anything else
    // on the CUDA cores (cudaCorePrecision()). A kernel whose code issues tensor-core instructions is held
    // to the inputs' tensor precision (tensorPrecision()) where the rule gave the CUDA cores.
    ComputeCeiling computeCeiling(bool kernelIssuesTensorInstructions = false) const;
    Precision computePrecision() const { return computeCeiling().precision; }

    std::string contentHash; // of the JSON and both sources: same problem, same hash

    const TensorSpec* tensor(const std::string& name) const;
    const ScalarSpec* scalar(const std::string& name) const;
    // Whether any tensor has padded rows: verification then also launches on padded buffers.
    bool hasRowPadding() const;
    Tolerance tolerance(DType type) const;
    double bytes(const SizeSet& sizes) const;
    double flops(const SizeSet& sizes) const;
};

// Throws kl::Error with category "problem.*", the file, and the JSON field path.
Problem loadProblem(const std::filesystem::path& path);
// As loadProblem, from text already read; `path` locates the sources and names the file in errors.
Problem parseProblem(const std::string& json, const std::filesystem::path& path);
// The architecture a stored problem file names ("arch"), for compiling a stored candidate again as
// the loop did; sm_90 (the default) when it names none or does not read. Never throws.
std::string problemArchOf(const std::string& problemJson);
// Its "sizes.fixed" (why it is verified at its main sizes only), empty when it has none. Never throws.
std::string problemFixedSizesOf(const std::string& problemJson);

// Default tolerances when a problem gives none for a dtype.
Tolerance defaultTolerance(DType type);

} // namespace kl

#pragma once
// The precision a problem's FLOPs run in, and what each architecture's SMs can do in it per clock:
// the compute side of speed of light. Dense rates only; a sparse tensor rate is twice the dense one and
// a kernel is dense unless it says otherwise. Where each figure comes from: docs/compute-ceilings.md.
#include "core/model/dtype.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kl {

enum class Precision {
    Fp64, // CUDA cores (DFMA)
    Fp32, // CUDA cores (FFMA)
    Tf32, // tensor cores, fp32 accumulate
    Fp16, // tensor cores, fp32 accumulate
    Bf16, // tensor cores, fp32 accumulate
    Fp8, // tensor cores (e4m3/e5m2), fp32 accumulate
    Int8, // tensor cores, int32 accumulate (integer ops, counted as FLOPs)
    Fp64Tensor, // tensor cores (DMMA)
};

// "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp64-tensor".
std::optional<Precision> parsePrecision(std::string_view name);
std::string_view precisionName(Precision precision);
// "FP16 tensor", "FP32 CUDA cores", ...: for tables and findings.
std::string_view precisionLabel(Precision precision);
bool isTensorPrecision(Precision precision);
std::vector<Precision> allPrecisions();

// What a problem's FLOPs run in when it does not say: the narrowest floating type among the inputs
// (f16 → fp16, bf16 → bf16, f32 → fp32, f64 → fp64), else int8 for i8/u8 inputs, else fp32. The
// narrowest has the highest ceiling, so a guess never makes the compute floor stricter than the truth.
Precision defaultPrecision(const std::vector<DType>& inputTypes);

// What a problem's FLOPs run in when it does not say and is not a matrix product: the CUDA cores.
// Element-wise, reduction and normalisation FLOPs never reach the tensor cores, which only multiply
// matrices; fp16/bf16/f32 inputs are computed in fp32 (as PyTorch does), f64 in fp64, integers on the
// FP32 pipe's ceiling (no narrower integer path is faster there).
Precision cudaCorePrecision(const std::vector<DType>& inputTypes);
// The tensor-core precision of the inputs, for a kernel whose code issues tensor-core instructions:
// f16 → fp16, bf16 → bf16, f32 → tf32, f64 → fp64-tensor, else int8 for i8/u8, else tf32.
Precision tensorPrecision(const std::vector<DType>& inputTypes);

// Why the FLOPs are held to the ceiling they are (docs/compute-ceilings.md): the problem's "compute",
// a matrix product (tensor cores where the inputs' dtype has them), not a matrix product (CUDA cores),
// or the kernel's own code issuing tensor-core instructions.
enum class CeilingReason { Declared, MatrixProduct, NotMatrixProduct, TensorInstructions };
// "declared", "matrix-product", "not-matrix-product", "tensor-instructions": on the wire and stored.
std::string_view ceilingReasonName(CeilingReason reason);
std::optional<CeilingReason> parseCeilingReason(std::string_view name);
// Why, in words: the problem's "compute", a matrix product, not a matrix product, the kernel issues
// tensor-core instructions.
std::string_view ceilingReasonText(CeilingReason reason);

// The ceiling a problem's FLOPs are held to and why.
struct ComputeCeiling {
    Precision precision = Precision::Fp32;
    CeilingReason reason = CeilingReason::NotMatrixProduct;
    bool operator==(const ComputeCeiling&) const = default;
};
// "FP32 CUDA cores: not a matrix product", "FP16 tensor: a matrix product"; the label alone without a
// reason (results of older runners).
std::string ceilingText(Precision precision, std::optional<CeilingReason> reason);

// Which floor of speed of light binds a timed size: moving its bytes or doing its FLOPs.
enum class Bound { Memory, Compute };
std::string_view boundName(Bound bound); // "memory" | "compute"
std::optional<Bound> parseBound(std::string_view name);

// Dense FLOP (ops for int8) per SM per clock of an architecture ("9.0" or "sm_90"), 0 where the
// architecture has no such path (no FP8 tensor cores before sm_89, no FP64 tensor cores on sm_86/89),
// nothing for an architecture the table does not hold.
std::optional<double> flopsPerSmPerClock(std::string_view computeCapability, Precision precision);
// The architectures the table holds, as compute capabilities ("8.0", ...).
std::vector<std::string> knownArchitectures();

// A device of the architecture to reason about before anything is measured (`check`): its SMs, the SM
// clock under load and a device-to-device copy's bandwidth. The H200's are measured (docs/gpu-facts.md); the
// others are the spec sheet's, the copy taken as 85% of the quoted DRAM bandwidth [inferred].
struct NominalDevice {
    std::string name;
    int smCount = 0;
    double smClockMhz = 0.0;
    double copyGbps = 0.0;
};
std::optional<NominalDevice> nominalDevice(std::string_view computeCapability);

// Theoretical ceiling in TFLOP/s: rate × SMs × SM clock (the clock measured with the timing: clocks
// are not locked). 0 when any part is unknown or the architecture lacks the path.
double ceilingTflops(Precision precision, std::string_view computeCapability, int smCount, double smClockMhz);

} // namespace kl

#include "core/model/precision.h"

#include <algorithm>
#include <array>

namespace kl {

namespace {

struct PrecisionInfo {
    Precision precision;
    std::string_view name;
    std::string_view label;
    bool tensor;
};

constexpr std::array<PrecisionInfo, 8> kPrecisions { {
    { Precision::Fp64, "fp64", "FP64 CUDA cores", false },
    { Precision::Fp32, "fp32", "FP32 CUDA cores", false },
    { Precision::Tf32, "tf32", "TF32 tensor", true },
    { Precision::Fp16, "fp16", "FP16 tensor", true },
    { Precision::Bf16, "bf16", "BF16 tensor", true },
    { Precision::Fp8, "fp8", "FP8 tensor", true },
    { Precision::Int8, "int8", "INT8 tensor", true },
    { Precision::Fp64Tensor, "fp64-tensor", "FP64 tensor", true },
} };

// Dense FLOP per SM per clock, in kPrecisions' order: FP64, FP32, TF32, FP16, BF16, FP8, INT8, FP64
// tensor. Each is a published peak ÷ SMs ÷ the clock it is quoted at; docs/compute-ceilings.md gives
// the sources and the sums.
struct Architecture {
    std::string_view cc;
    std::array<double, 8> rates;
    std::string_view device; // the nominal device: name, SMs, SM clock, copy GB/s
    int sms;
    double clockMhz;
    double copyGbps;
};

constexpr std::array<Architecture, 6> kArchitectures { {
    // A100 SXM: 108 SMs, 1410 MHz.
    { "8.0", { 64, 128, 1024, 2048, 2048, 0, 4096, 128 }, "A100 SXM", 108, 1410, 0.85 * 2039 },
    // A40 (GA102): 84 SMs, 1740 MHz. GeForce GA102 boards halve fp16/bf16 with fp32 accumulate.
    { "8.6", { 4, 256, 512, 1024, 1024, 0, 2048, 0 }, "A40", 84, 1740, 0.85 * 696 },
    // L40S (AD102): 142 SMs, 2520 MHz.
    { "8.9", { 4, 256, 512, 1024, 1024, 2048, 2048, 0 }, "L40S", 142, 2520, 0.85 * 864 },
    // H100 SXM: 132 SMs; tensor peaks quoted at 1830 MHz, CUDA-core and FP64 tensor ones at 1980 MHz.
    { "9.0", { 128, 256, 2048, 4096, 4096, 8192, 8192, 256 }, "H200 (measured)", 132, 1980, 4250 },
    // B200: 148 SMs [inferred: NVIDIA quotes no clock with its peaks].
    { "10.0", { 128, 256, 4096, 8192, 8192, 16384, 16384, 128 }, "B200", 148, 1965, 0.85 * 8000 },
    // RTX 5090 (GB202): 170 SMs, 2407 MHz [inferred from the GeForce whitepaper's fp16-accumulate figures].
    { "12.0", { 4, 256, 256, 1024, 1024, 2048, 2048, 0 }, "RTX 5090", 170, 2407, 0.85 * 1792 },
} };

const PrecisionInfo& info(Precision precision)
{
    for (const auto& p : kPrecisions)
        if (p.precision == precision)
            return p;
    return kPrecisions[1];
}

std::size_t indexOf(Precision precision)
{
    for (std::size_t i = 0; i < kPrecisions.size(); ++i)
        if (kPrecisions[i].precision == precision)
            return i;
    return 1;
}

// "sm_90" or "sm_90a" → "9.0"; "9.0" as is.
std::string capability(std::string_view arch)
{
    if (!arch.starts_with("sm_"))
        return std::string(arch);
    std::string digits(arch.substr(3));
    while (!digits.empty() && (digits.back() < '0' || digits.back() > '9'))
        digits.pop_back();
    if (digits.size() < 2)
        return {};
    return digits.substr(0, digits.size() - 1) + "." + digits.substr(digits.size() - 1);
}

} // namespace

std::optional<Precision> parsePrecision(std::string_view name)
{
    for (const auto& p : kPrecisions)
        if (p.name == name)
            return p.precision;
    return std::nullopt;
}

std::string_view precisionName(Precision precision) { return info(precision).name; }

std::string_view precisionLabel(Precision precision) { return info(precision).label; }

bool isTensorPrecision(Precision precision) { return info(precision).tensor; }

std::vector<Precision> allPrecisions()
{
    std::vector<Precision> all;
    for (const auto& p : kPrecisions)
        all.push_back(p.precision);
    return all;
}

Precision defaultPrecision(const std::vector<DType>& inputTypes)
{
    const auto has
        = [&](DType type) { return std::find(inputTypes.begin(), inputTypes.end(), type) != inputTypes.end(); };
    if (has(DType::F16))
        return Precision::Fp16;
    if (has(DType::BF16))
        return Precision::Bf16;
    if (has(DType::F32))
        return Precision::Fp32;
    if (has(DType::F64))
        return Precision::Fp64;
    if (has(DType::I8) || has(DType::U8))
        return Precision::Int8;
    return Precision::Fp32;
}

Precision cudaCorePrecision(const std::vector<DType>& inputTypes)
{
    const auto has
        = [&](DType type) { return std::find(inputTypes.begin(), inputTypes.end(), type) != inputTypes.end(); };
    if (has(DType::F16) || has(DType::BF16) || has(DType::F32))
        return Precision::Fp32;
    if (has(DType::F64))
        return Precision::Fp64;
    return Precision::Fp32;
}

Precision tensorPrecision(const std::vector<DType>& inputTypes)
{
    switch (defaultPrecision(inputTypes)) {
    case Precision::Fp16:
        return Precision::Fp16;
    case Precision::Bf16:
        return Precision::Bf16;
    case Precision::Fp64:
        return Precision::Fp64Tensor;
    case Precision::Int8:
        return Precision::Int8;
    default:
        return Precision::Tf32;
    }
}

namespace {

struct ReasonInfo {
    CeilingReason reason;
    std::string_view name;
    std::string_view text;
};

constexpr std::array<ReasonInfo, 4> kReasons { {
    { CeilingReason::Declared, "declared", "the problem's \"compute\"" },
    { CeilingReason::MatrixProduct, "matrix-product", "a matrix product" },
    { CeilingReason::NotMatrixProduct, "not-matrix-product", "not a matrix product" },
    { CeilingReason::TensorInstructions, "tensor-instructions", "the kernel issues tensor-core instructions" },
} };

const ReasonInfo& reasonInfo(CeilingReason reason)
{
    for (const auto& r : kReasons)
        if (r.reason == reason)
            return r;
    return kReasons[0];
}

} // namespace

std::string_view ceilingReasonName(CeilingReason reason) { return reasonInfo(reason).name; }

std::optional<CeilingReason> parseCeilingReason(std::string_view name)
{
    for (const auto& r : kReasons)
        if (r.name == name)
            return r.reason;
    return std::nullopt;
}

std::string_view ceilingReasonText(CeilingReason reason) { return reasonInfo(reason).text; }

std::string ceilingText(Precision precision, std::optional<CeilingReason> reason)
{
    std::string text(precisionLabel(precision));
    if (!reason)
        return text;
    text += ": " + std::string(ceilingReasonText(*reason));
    if (*reason == CeilingReason::MatrixProduct && !isTensorPrecision(precision))
        text += " of fp32/fp64 inputs (tensor cores where \"compute\" says tf32 or fp64-tensor)";
    return text;
}

std::string_view boundName(Bound bound) { return bound == Bound::Compute ? "compute" : "memory"; }

std::optional<Bound> parseBound(std::string_view name)
{
    if (name == "memory")
        return Bound::Memory;
    if (name == "compute")
        return Bound::Compute;
    return std::nullopt;
}

std::optional<double> flopsPerSmPerClock(std::string_view computeCapability, Precision precision)
{
    const std::string cc = capability(computeCapability);
    for (const auto& arch : kArchitectures)
        if (arch.cc == cc)
            return arch.rates[indexOf(precision)];
    return std::nullopt;
}

std::optional<NominalDevice> nominalDevice(std::string_view computeCapability)
{
    const std::string cc = capability(computeCapability);
    for (const auto& arch : kArchitectures)
        if (arch.cc == cc)
            return NominalDevice { std::string(arch.device), arch.sms, arch.clockMhz, arch.copyGbps };
    return std::nullopt;
}

std::vector<std::string> knownArchitectures()
{
    std::vector<std::string> all;
    for (const auto& arch : kArchitectures)
        all.emplace_back(arch.cc);
    return all;
}

double ceilingTflops(Precision precision, std::string_view computeCapability, int smCount, double smClockMhz)
{
    const auto rate = flopsPerSmPerClock(computeCapability, precision);
    if (!rate || smCount <= 0 || !(smClockMhz > 0))
        return 0.0;
    return *rate * smCount * smClockMhz * 1e6 / 1e12;
}

} // namespace kl

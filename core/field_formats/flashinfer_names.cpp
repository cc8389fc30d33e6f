#include "core/field_formats/flashinfer_names.h"

#include "core/protocol/category.h"

#include <array>
#include <cctype>
#include <ctime>
#include <utility>

namespace kl::fieldformats {

namespace {

constexpr std::array<std::pair<DType, std::string_view>, 6> kDTypes { {
    { DType::F16, "float16" },
    { DType::BF16, "bfloat16" },
    { DType::F32, "float32" },
    { DType::I8, "int8" },
    { DType::I32, "int32" },
    { DType::I64, "int64" },
} };

bool startsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

} // namespace

std::optional<std::string_view> flashInferDType(DType type)
{
    for (const auto& [value, name] : kDTypes)
        if (value == type)
            return name;
    return std::nullopt;
}

std::optional<DType> kernelLoopDType(std::string_view flashInferName)
{
    for (const auto& [value, name] : kDTypes)
        if (name == flashInferName)
            return value;
    return std::nullopt;
}

std::optional<std::string_view> evaluationStatus(std::string_view category)
{
    // The loop's own verdicts before the runner (compile.*, plan.*, ...) are the compile's.
    if (startsWith(category, "compile.") || startsWith(category, "plan.") || startsWith(category, "candidate.")
        || startsWith(category, "triton."))
        return "COMPILE_ERROR";
    const auto runner = protocol::parseCategory(category);
    if (!runner)
        return std::nullopt; // rejected, steered, proposer.*: not the kernel's
    using protocol::Category;
    switch (*runner) { // every runner category, so that a new one must be placed here
    case Category::Passed:
        return "PASSED";
    case Category::WrongResult:
    case Category::NanOutput:
    case Category::UnwrittenOutput:
    case Category::StaleOutput:
        return "INCORRECT_NUMERICAL";
    case Category::MissingKernel:
        return "COMPILE_ERROR";
    case Category::Timeout:
        return "TIMEOUT";
    case Category::LaunchError:
    case Category::TooManyResources:
    case Category::IllegalAddress:
    case Category::Trap:
    case Category::OutOfBoundsWrite:
    case Category::InputModified:
    case Category::BelowPhysicalFloor:
    case Category::Crash:
    case Category::OutOfMemory:
    case Category::RunnerLost:
        return "RUNTIME_ERROR";
    case Category::NoDevice:
    case Category::BadRequest:
    case Category::Cancelled:
    case Category::BadMessage:
        return std::nullopt; // the job was not done: nothing said of the kernel
    }
    return std::nullopt;
}

std::string hardwareName(const std::string& deviceName)
{
    std::string out;
    for (const char c : deviceName)
        out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
    return out.empty() ? std::string("unknown") : out;
}

std::string safeName(const std::string& text)
{
    std::string out;
    for (const char c : text)
        out += std::isalnum(static_cast<unsigned char>(c)) ? char(std::tolower(static_cast<unsigned char>(c))) : '_';
    return out.empty() ? std::string("unnamed") : out;
}

std::string uuidFromHash(const std::string& hexHash)
{
    std::string hex = hexHash;
    while (hex.size() < 32)
        hex += '0';
    return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) + "-"
        + hex.substr(20, 12);
}

std::string isoTimestamp(std::int64_t ms)
{
    const std::time_t t = ms / 1000;
    std::tm utc {};
    gmtime_r(&t, &utc);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return buf;
}

} // namespace kl::fieldformats

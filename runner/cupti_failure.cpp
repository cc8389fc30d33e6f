#include "runner/cupti_failure.h"

#ifdef KL_WITH_CUPTI

namespace kl::runner {

namespace {

std::string message(CUptiResult result, const char* call)
{
    const char* text = nullptr;
    cuptiGetResultString(result, &text);
    return std::string(call) + ": " + (text ? text : "CUPTI error " + std::to_string(static_cast<int>(result)));
}

} // namespace

CuptiFailure::CuptiFailure(CUptiResult result, const char* call)
    : std::runtime_error(message(result, call))
    , m_result(result)
{
}

std::string CuptiFailure::reason() const
{
    switch (m_result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
        return "insufficient-privileges";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
        return "another-profiler";
    default:
        return "unsupported-device";
    }
}

void checkCupti(CUptiResult result, const char* call)
{
    if (result != CUPTI_SUCCESS)
        throw CuptiFailure(result, call);
}

} // namespace kl::runner

#endif

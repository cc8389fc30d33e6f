#pragma once

// A failed CUPTI call, shared by the range profiler and the PC sampler: both report the same
// protocol reasons for the same CUPTI results, so the mapping lives here once.
#ifdef KL_WITH_CUPTI

#include <cupti_result.h>

#include <stdexcept>
#include <string>

namespace kl::runner {

class CuptiFailure : public std::runtime_error {
public:
    CuptiFailure(CUptiResult result, const char* call);
    // The reason the protocol names: insufficient-privileges, another-profiler or unsupported-device.
    std::string reason() const;

private:
    CUptiResult m_result;
};

// Throws CuptiFailure unless result is CUPTI_SUCCESS.
void checkCupti(CUptiResult result, const char* call);

} // namespace kl::runner

#define KL_CUPTI(call) ::kl::runner::checkCupti(call, #call)

#endif

#pragma once
// How a job ends early: the category the protocol names, a sentence for the engineer, and whether
// the CUDA context is gone (then the runner answers and exits so that the client restarts it).
#include "core/protocol/category.h"
#include "runner/cuda_driver.h"

#include <stdexcept>
#include <string>

namespace kl::runner {

class JobFailure : public std::runtime_error {
public:
    JobFailure(protocol::Category category, const std::string& detail, bool contextLost = false)
        : std::runtime_error(detail)
        , m_category(category)
        , m_contextLost(contextLost)
    {
    }
    protocol::Category category() const { return m_category; }
    bool contextLost() const { return m_contextLost; }

private:
    protocol::Category m_category;
    bool m_contextLost;
};

// The category of a driver error raised while a candidate's kernels ran or launched.
protocol::Category categoryOf(CUresult result);

// `what` names the program and kernel ("candidate kernel layernorm_gelu"): the detail reads
// "<what>: <driver's words>".
JobFailure failureFrom(const CudaError& error, const std::string& what);

} // namespace kl::runner

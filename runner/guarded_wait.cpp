#include "runner/guarded_wait.h"

#include "runner/job_failure.h"

#include <cstdlib>
#include <thread>

namespace kl::runner {

std::chrono::milliseconds kernelTimeout()
{
    if (const char* text = std::getenv("KL_RUNNER_KERNEL_TIMEOUT_MS")) {
        const long value = std::strtol(text, nullptr, 10);
        if (value > 0)
            return std::chrono::milliseconds(value);
    }
    return std::chrono::milliseconds(10000);
}

void waitGuarded(const Device& device, const std::string& what, std::chrono::milliseconds timeout)
{
    const CudaDriver& cu = device.driver();
    CUevent done = nullptr;
    try {
        KL_CU(cu, cuEventCreate, &done, CU_EVENT_DISABLE_TIMING);
        KL_CU(cu, cuEventRecord, done, device.stream());
    } catch (const CudaError& error) {
        if (done)
            cu.cuEventDestroy(done);
        throw failureFrom(error, what);
    }
    const auto started = std::chrono::steady_clock::now();
    auto pause = std::chrono::microseconds(20);
    for (;;) {
        const CUresult result = cu.cuEventQuery(done);
        if (result == CUDA_SUCCESS)
            break;
        if (result != CUDA_ERROR_NOT_READY) {
            cu.cuEventDestroy(done);
            throw failureFrom(CudaError(result, "cuEventQuery", cu.describe(result)), what);
        }
        const auto waited = std::chrono::steady_clock::now() - started;
        if (waited > timeout) {
            // The event is left alone: the context is about to go with the process. Nothing may
            // wait for the kernel on the way to the answer (destructors free memory, unload modules).
            cu.abandonContext();
            throw JobFailure(protocol::Category::Timeout,
                what + ": still running after "
                    + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(waited).count())
                    + " ms (wall-clock guard " + std::to_string(timeout.count()) + " ms)",
                true);
        }
        // Short sleeps first (most kernels end within microseconds), then back off to 2 ms.
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(2000));
    }
    cu.cuEventDestroy(done);
}

} // namespace kl::runner

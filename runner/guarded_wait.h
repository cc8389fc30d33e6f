#pragma once
// Waiting for the GPU with a wall-clock guard: a kernel cannot be stopped from the host, so a
// kernel past its deadline ends the job (category timeout) and then the runner itself.
#include "runner/device.h"

#include <chrono>
#include <string>

namespace kl::runner {

// The guard for one launch sequence: KL_RUNNER_KERNEL_TIMEOUT_MS in the environment, else 10 s.
std::chrono::milliseconds kernelTimeout();

// Waits for the work enqueued so far on the device's stream. Throws JobFailure: the category of
// a driver error (illegal address, trap, ...) or timeout, naming `what`.
void waitGuarded(const Device& device, const std::string& what, std::chrono::milliseconds timeout = kernelTimeout());

} // namespace kl::runner

#pragma once
// One Slurm allocation for a session: `salloc --no-shell ARGS` once, every runner then a job step in
// it (`srun --jobid=ID ...`), and `scancel ID` at the end, on cancel, or when the pool is destroyed.
// No sbatch: nothing is left queued or running after the session.
#include "core/pool/runner_endpoint.h"

#include <chrono>
#include <string>

namespace kl::pool {

class SlurmAllocation {
public:
    // Throws kl::Error "runner.no-slurm" (salloc missing), "runner.unreachable" (salloc failed or no
    // grant within `wait`; its stderr is in the message).
    SlurmAllocation(const Endpoint& endpoint, const EndpointOptions& options,
        std::chrono::milliseconds wait = std::chrono::seconds(60));
    ~SlurmAllocation(); // release()
    SlurmAllocation(const SlurmAllocation&) = delete;
    SlurmAllocation& operator=(const SlurmAllocation&) = delete;

    const std::string& jobId() const { return m_jobId; }
    // scancel; idempotent. The steps running in it end with it.
    void release();

private:
    std::string m_jobId;
    std::string m_scancel;
};

// "salloc: Granted job allocation 42" (or "Pending job allocation 42") → "42"; empty when absent.
std::string grantedJobId(const std::string& sallocStderr);

} // namespace kl::pool

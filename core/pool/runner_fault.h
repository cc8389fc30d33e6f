#pragma once
// Whether a failed job was the runner's fault (its process, connection or scheduler job died, it
// could not start, it speaks another protocol, it hung) or the candidate's own verdict (a crash by
// SIGSEGV, a timeout with the kernel still running, a wrong result). Behind ssh and srun a death is
// seen as the launcher's exit status: 128+N for a signal N on the far side, 255 for a dropped ssh
// connection, any other non-zero srun status for a step Slurm refused or lost.
#include "core/pool/runner_endpoint.h"
#include "core/protocol/messages.h"
#include "core/runnerclient/runner_client.h"

#include <string>

namespace kl::pool {

struct FaultVerdict {
    std::string fault; // "runner.lost", "runner.unreachable", "runner.version-mismatch", "runner.hang"; empty: none
    std::string explanation; // what the launcher's status means, for the detail ("" when nothing to add)
};

// `sawProgress`: the runner reported progress during the job (a timeout is then the candidate's).
FaultVerdict classifyFault(EndpointKind kind, const protocol::EvaluateResult& result,
    const std::optional<RunnerDeath>& death, StartFailure startFailure, bool sawProgress);

// For a start that threw: version-mismatch or unreachable.
std::string startFault(StartFailure failure);

} // namespace kl::pool

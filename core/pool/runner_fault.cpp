#include "core/pool/runner_fault.h"

#include <csignal>
#include <cstring>

namespace kl::pool {

namespace {

bool fromOutside(int signal)
{
    RunnerDeath d;
    d.signal = signal;
    return d.fromOutside();
}

std::string signalName(int signal)
{
    const char* abbrev = ::sigabbrev_np(signal);
    return "signal " + std::to_string(signal) + (abbrev ? " (SIG" + std::string(abbrev) + ")" : "");
}

} // namespace

std::string startFault(StartFailure failure)
{
    return failure == StartFailure::VersionMismatch ? "runner.version-mismatch" : "runner.unreachable";
}

FaultVerdict classifyFault(EndpointKind kind, const protocol::EvaluateResult& result,
    const std::optional<RunnerDeath>& death, StartFailure startFailure, bool sawProgress)
{
    using protocol::Category;
    switch (result.category()) {
    case Category::RunnerLost:
        return { startFault(startFailure), {} };
    case Category::Timeout:
        // The real runner reports "load" as it takes a job: silence until the deadline is a stalled
        // runner or pipe, not a kernel that runs too long.
        if (!sawProgress)
            return { "runner.hang", "the runner reported no progress before the deadline" };
        return {};
    case Category::Crash: {
        if (!death)
            return {};
        if (kind == EndpointKind::Local || kind == EndpointKind::Command) // no launcher of ours to blame
            return death->fromOutside() ? FaultVerdict { "runner.lost", {} } : FaultVerdict {};
        if (death->signal != 0) // the launcher itself was killed here
            return { "runner.lost",
                "the " + std::string(kind == EndpointKind::Ssh ? "ssh" : "srun") + " process was killed" };
        const int status = death->exitStatus;
        if (kind == EndpointKind::Ssh && status == 255)
            return { "runner.lost", "ssh exited with 255: the connection to the host was lost" };
        if (status > 128 && status < 128 + 65) {
            const int signal = status - 128;
            const auto text = "the remote runner was killed by " + signalName(signal);
            return fromOutside(signal)
                ? FaultVerdict { "runner.lost", text + " (from outside: a user, the OOM killer or Slurm)" }
                : FaultVerdict { {}, text };
        }
        if (kind == EndpointKind::Slurm && status != 0)
            return { "runner.lost",
                "srun exited with " + std::to_string(status) + ": Slurm ended or refused the job step" };
        return {};
    }
    default:
        return {};
    }
}

} // namespace kl::pool

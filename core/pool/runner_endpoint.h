#pragma once
// Where a runner runs, as the user names it: `local:N` (GPU N here), `local:all` (every GPU here),
// `ssh:[user@]host[:gpu]` (through the system's ssh, its config and agent, never asking for a
// password), `slurm:ARGS` (a job step of a Slurm allocation made with ARGS, one GPU per runner).
// Each endpoint becomes a RunnerConfig: the runner's command line behind ssh or srun. No home-made
// cluster code: what reaches a machine is the system's own ssh and Slurm's own srun.
#include "core/runnerclient/runner_client.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kl::pool {

enum class EndpointKind { Local, Ssh, Slurm };

struct Endpoint {
    EndpointKind kind = EndpointKind::Local;
    int gpu = 0; // local: the GPU index; ssh: the remote GPU index (0 unless given)
    bool allLocal = false; // local:all, before expandEndpoints
    std::string user; // ssh, may be empty (ssh's config decides)
    std::string host; // ssh
    std::vector<std::string> slurmArgs; // slurm: the allocation's arguments, as shell words
    std::string text() const; // canonical: "local:0", "ssh:me@host:1", "slurm:-p gpu -t 30"
    bool operator==(const Endpoint&) const = default;
};

// Throws kl::Error("runner.bad-endpoint") saying what is wrong and what the forms are.
Endpoint parseEndpoint(std::string_view text);
// Whether a --runner value names an endpoint (local:, ssh:, slurm:) rather than a runner executable's path.
bool namesEndpoint(std::string_view text);

// One endpoint per line; blank lines and lines starting with # are skipped. Throws
// "runner.bad-endpoint" naming the file and line, and the file's own errors (runners.unreadable, ...).
std::vector<Endpoint> readRunnersFile(const std::filesystem::path& file);

// The GPUs the driver shows here (/proc/driver/nvidia/gpus), limited by CUDA_VISIBLE_DEVICES when set.
// 0 where there is no driver.
int localGpuCount();

// local:all becomes local:0 .. local:(count-1) (local:0 alone when count is 0, so that the runner
// says why there is no device); duplicates are refused ("runner.duplicate-endpoint": one timing job
// per GPU at a time).
std::vector<Endpoint> expandEndpoints(const std::vector<Endpoint>& endpoints, int localGpus);

// How endpoints become runner commands.
struct EndpointOptions {
    std::filesystem::path localRunner; // kernelloop-runner here
    std::string remoteRunner = "kernelloop-runner"; // its path on ssh hosts and Slurm nodes
    std::vector<std::string> sshOptions; // each passed as -o OPTION (Port=2222, IdentityFile=..., ...)
    std::string slurmGres = "gpu:1"; // --gres of each runner's step; empty: none (a cluster without GPU gres)
    std::string ssh = "ssh"; // programs, found on PATH unless absolute
    std::string salloc = "salloc";
    std::string srun = "srun";
    std::string scancel = "scancel";
    RunnerConfig base; // timeouts and extra runner arguments for every endpoint
};

// The program's absolute path: `name` itself when it has a slash, else the first executable on PATH.
// nullopt when none.
std::optional<std::filesystem::path> findProgram(const std::string& name);

// The runner command for one endpoint. A Slurm endpoint needs its allocation's job id. Throws
// "runner.no-ssh" / "runner.no-slurm" when the program is not installed.
RunnerConfig runnerConfigFor(
    const Endpoint& endpoint, const EndpointOptions& options, const std::string& slurmJob = {});

} // namespace kl::pool
